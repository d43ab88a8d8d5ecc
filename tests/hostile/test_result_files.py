"""``open-result`` and ``run --resume`` on result files that are damaged, hostile or from
another version: the bad field is named in one sentence, exit 2; nothing hangs."""

from __future__ import annotations

import copy
import json
import os

import pytest
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.experiments.results import Curve, Histogram, Series, Table, TaskReport, Verdict


def _good() -> dict:
    return TaskReport(
        task="C3",
        title="rsqrt",
        claim="§1.2 (4)",
        profile="quick",
        environment={"device": "cpu", "torch": "2.13.0"},
        settings={"dtype": "float16", "seed": 1234},
        data={},
        verdicts=[Verdict("topic", "expected", "measured", True)],
        tables=[Table("Plan table", ("a", "b"), ((1, "x"),))],
        histograms=[Histogram("h", "H", "x", ("0", "1"), (4, 1))],
        curves=[Curve("c", "C", "x", "y", (Series("s", (1.0, 2.0), (0.5, 1.0)),))],
    ).to_dict()


def _open(path):
    result = CliRunner().invoke(main, ["open-result", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1
    return result.stderr.strip()


def _set(d: dict, where: str, value) -> dict:
    d = copy.deepcopy(d)
    *path, last = where.split(".")
    target = d
    for key in path:
        target = target[int(key)] if key.isdigit() else target[key]
    target[int(last) if last.isdigit() else last] = value
    return d


@pytest.mark.parametrize(
    ("where", "value", "named"),
    [
        ("environment", {}, "environment has no device"),
        ("environment", [], "environment must be an object, not []"),
        ("settings", "quick", "settings must be an object, not 'quick'"),
        ("verdicts.0.agrees", "maybe", "verdicts[0].agrees must be true, false or null, not 'maybe'"),
        ("histograms.0.bins", ["0"], "histograms[0] has 1 bins but 2 counts"),
        ("histograms.0.counts.1", "x", "histograms[0].counts[1] must be a number, not 'x'"),
        ("curves.0.series.0.x", ["a", "b"], "curves[0].series[0].x[0] must be a number, not 'a'"),
        ("curves.0.series.0.y", "01", "curves[0].series[0].y must be a list, not '01'"),
        ("tables.0.rows", [[1]], "tables[0].rows[0] has 1 cells but 2 columns"),
    ],
)
def test_a_field_of_the_wrong_type_is_named(tmp_path, where, value, named):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(_set(_good(), where, value)), "utf-8")
    assert _open(path) == f"fpinspect open-result: {path} is not a result this version can show: {named}."


def test_binary_and_deeply_nested_files_are_one_sentence(tmp_path):
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"task": "\xff\xfe"}')
    assert _open(binary).endswith(f"{binary} is not UTF-8 text (byte 10 is not), so not a result.")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    assert _open(deep).endswith(f"{deep} nests its JSON too deeply to be a result.")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    assert _open(fifo).endswith(f"{fifo} is not a regular file.")


@pytest.mark.parametrize("content", [b"[" * 100_000, b"\xff\xfe not text"])
def test_resume_with_a_damaged_run_json_is_one_sentence(tmp_path, content):
    from fpinspect.cli.experiments import run_command

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "run.json").write_bytes(content)
    result = CliRunner().invoke(run_command, ["E", "--resume", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.startswith(f"fpinspect run: {tmp_path} holds no stopped run of task E to resume")
