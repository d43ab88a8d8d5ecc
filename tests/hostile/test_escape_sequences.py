"""Names read from graph and dump files never reach the terminal with their control characters:
an op name holding ``ESC ] 0 ; … BEL`` would retitle the terminal, ``ESC ] 52 ; c ; …`` write the
clipboard. Every place that prints such a name shows the characters escaped."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import fpinspect
from fpinspect.cli import main
from fpinspect.dumps.formats.datadump import normalise_name

SAMPLE = Path(fpinspect.__file__).parent / "sample_dumps" / "regression"
OP = "autofuse_2_Add_LayerNorm"
NAMES = {
    "title": "autofuse_2_\x1b]0;pwned\x07Add",
    "clipboard": "autofuse_2_\x1b]52;c;cHduZWQ=\x07Add",
}
RAW = ("\x1b", "\x07", "\x9b")


def renamed_sample(folder: Path, old: str, new: str) -> Path:
    """The regression sample with op ``old`` renamed ``new`` in its graphs and dump file names
    (there as the dumper writes it: ``.``, ``/``, ``\\`` and space as ``_``)."""
    shutil.copytree(SAMPLE, folder)
    (folder / "capture.json").unlink()  # a plain run folder: no capture to run again
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root, name)
            if name.endswith(".json"):
                graph = json.dumps(json.loads(path.read_text(encoding="utf-8")))
                path.write_text(graph.replace(old, json.dumps(new)[1:-1]), encoding="utf-8")
            if old in name:
                path.rename(Path(root, name.replace(old, normalise_name(new))))
    return folder


@pytest.fixture(params=list(NAMES))
def hostile_run(request, tmp_path):
    name = NAMES[request.param]
    return renamed_sample(tmp_path / "run", OP, name), name


def visible(name: str) -> str:
    return name.replace("\x1b", "\\x1b").replace("\x07", "\\x07")


def assert_clean(result):
    for raw in RAW:
        assert raw not in result.stdout and raw not in result.stderr


def test_compare_table_and_csv_show_control_characters_escaped(hostile_run):
    folder, name = hostile_run
    r = CliRunner().invoke(main, ["compare", str(folder)])
    assert r.exit_code == 0, r.output
    assert_clean(r)
    assert f"Look first at {visible(name)} (AscBackend)" in " ".join(r.stdout.split())  # however it wraps
    r = CliRunner().invoke(main, ["compare", str(folder), "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert_clean(r)
    assert f"output,{visible(name)},AscBackend,0," in r.stdout
    r = CliRunner().invoke(main, ["compare", str(folder), "--format", "json"])  # JSON escapes them itself
    assert json.loads(r.stdout)["summary"]["introduced"] == [name]


def test_switches_show_control_characters_escaped(hostile_run):
    folder, name = hostile_run
    r = CliRunner().invoke(main, ["switches", str(folder)])
    assert r.exit_code == 0, r.output
    assert_clean(r)
    assert r.stdout.startswith(f"{visible(name)} (AscBackend: Add, LayerNorm)")


def test_a_message_naming_the_op_shows_it_escaped(hostile_run, tmp_path):
    folder, name = hostile_run
    r = CliRunner().invoke(main, ["repro", str(folder), "no_such_op", "--out", str(tmp_path / "b")])
    assert r.exit_code == 2
    assert_clean(r)
    assert visible(name) in r.stderr


def test_the_inspector_op_list_shows_names_escaped():
    from fpinspect.reports.format import short_name  # the op list's and the tables' name cell

    assert short_name(NAMES["title"], 80) == "autofuse_2_\\x1b]0;pwned\\x07Add"
    assert short_name("a\u202eb\x9bc", 80) == "a\\u202eb\\x9bc"
    assert short_name("résumé_中", 80) == "résumé_中"
