"""The fields the HTML page, the CSV export and the inspector's History read of a report are
declared once (fpinspect/dumps/engine/report_types.py), and read by attribute: every one of them is in the
JSON that `compare` writes, so a field renamed on either side (in the types, or in what a
comparison makes) fails here, and a reader misspelling one raises, where a dict's
``.get("old name")`` showed a dash without a word."""

from __future__ import annotations

import json

import msgspec.inspect as mi
import pytest
from click.testing import CliRunner
from runtrees import SAMPLE, write_run

from fpinspect.cli import main
from fpinspect.dumps.engine.report_types import SavedReport, SavedRun, Summary

#: Fields a report leaves out where they have nothing to say: a leaf compared has no ``error``.
ABSENT_WHEN_EMPTY = {"error"}


def _unset(f: mi.Field) -> bool:
    """Whether field ``f`` is unset until given (msgspec's inspection: neither required nor with
    a default)."""
    return not f.required and f.default is mi.NODEFAULT and f.default_factory is mi.NODEFAULT


def _unread(obj, t) -> list[str]:
    """The fields of type ``t`` (and of the types nested in it) that no object of that type in
    the JSON value ``obj`` holds, as ``Type.field``; those left out until set (``confirm``: only
    after an ablation) are not asked for. A type shared by several places (a replay's parts)
    counts the fields of all of them."""
    seen: dict[type, set[str]] = {}
    declared: dict[type, set[str]] = {}

    def declare(t) -> None:
        if isinstance(t, mi.StructType) and t.cls not in declared:
            fields = [f for f in t.fields if not _unset(f)]
            declared[t.cls] = {f.encode_name for f in fields if f.encode_name not in ABSENT_WHEN_EMPTY}
            for f in fields:
                declare(f.type)
        for member in getattr(t, "types", ()):
            declare(member)
        if isinstance(t, mi.ListType):
            declare(t.item_type)

    def walk(obj, t) -> None:
        if isinstance(t, mi.StructType) and isinstance(obj, dict):
            seen.setdefault(t.cls, set()).update(obj)
            for f in t.fields:
                if f.encode_name in obj:
                    walk(obj[f.encode_name], f.type)
        for member in getattr(t, "types", ()):
            walk(obj, member)
        if isinstance(t, mi.ListType) and isinstance(obj, list):
            for item in obj:
                walk(item, t.item_type)

    info = mi.type_info(t)
    declare(info)
    walk(obj, info)
    return sorted(
        f"{cls.__name__}.{f}" for cls, fields in declared.items() for f in fields - seen.get(cls, set())
    )


def _compare_json(source, tmp_path) -> dict:
    out = tmp_path / "report.json"
    r = CliRunner().invoke(main, ["compare", str(source), "--no-record", "--format", "json", "-o", str(out)])
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text(encoding="utf-8"))


def test_every_field_read_of_a_leafs_report_is_one_compare_writes(tmp_path):
    report = _compare_json(SAMPLE, tmp_path)  # replayed: each record's replay and standard
    assert _unread(report, SavedReport) == []


def test_every_field_read_of_a_whole_runs_report_is_one_compare_writes(tmp_path):
    report = _compare_json(write_run(tmp_path / "run"), tmp_path)
    assert _unread(report, SavedRun) == []


@pytest.mark.parametrize("typo", ["look_frist", "verdict", "red_eps"])
def test_a_misspelt_field_raises_where_a_dict_gave_none(typo):
    with pytest.raises(AttributeError):
        getattr(Summary(), typo)
