"""Damaged files of fpinspect's own formats, and outputs that cannot be written: one sentence and
exit status 2, never a traceback, a hang or output lost without a word."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import fpinspect
from fpinspect.cli import main

SAMPLE = Path(fpinspect.__file__).parent / "sample_dumps" / "regression"


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory):
    r = CliRunner().invoke(main, ["compare", str(SAMPLE), "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _other_type(value):
    """A JSON value of another type than ``value``."""
    if isinstance(value, str):
        return 5
    if isinstance(value, bool) or value is None:
        return [1]
    if isinstance(value, (int, float)):
        return "x"
    if isinstance(value, list):
        return 5
    return "x"  # an object


def _changes(report):
    """(label, damaged report) for every single field of a failing record (its metrics and replay
    too) and of the summary given a value of another type."""
    record = next(i for i, r in enumerate(report["records"]) if r["verdict"] == "fail")
    for key, value in report["records"][record].items():
        damaged = json.loads(json.dumps(report))
        damaged["records"][record][key] = _other_type(value)
        yield f"records[{record}].{key}", damaged
    for part in ("metrics", "replay"):
        for key, value in report["records"][record][part].items():
            damaged = json.loads(json.dumps(report))
            damaged["records"][record][part][key] = _other_type(value)
            yield f"records[{record}].{part}.{key}", damaged
    for key, value in report["summary"].items():
        damaged = json.loads(json.dumps(report))
        damaged["summary"][key] = _other_type(value)
        yield f"summary.{key}", damaged
    for key in ("records", "summary"):
        damaged = json.loads(json.dumps(report))
        damaged[key] = _other_type(report[key])
        yield key, damaged


def test_report_on_a_saved_report_with_a_wrong_typed_field_is_one_sentence(saved_report, tmp_path):
    crashed = []
    for label, damaged in _changes(saved_report):
        path = tmp_path / "damaged.json"
        path.write_text(json.dumps(damaged))
        r = CliRunner().invoke(main, ["report", str(path), "--out", str(tmp_path / "r.html")])
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            crashed.append(f"{label}: {type(r.exception).__name__}")
        elif r.exit_code == 2:
            assert len(r.stderr.strip().splitlines()) == 1 and str(path) in r.stderr, r.stderr
        else:
            assert r.exit_code == 0, (label, r.output)
    assert crashed == []


def test_a_wrong_typed_record_field_is_named(saved_report, tmp_path):
    damaged = json.loads(json.dumps(saved_report))
    damaged["records"][2]["status"] = 5
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(damaged))
    r = CliRunner().invoke(main, ["report", str(path), "--out", str(tmp_path / "r.html")])
    assert r.exit_code == 2
    assert r.stderr == (
        f"fpinspect: report {path} is damaged: Expected `array`, got `int` - at `$.records[2].status`.\n"
    )
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("command", ["diff", "compare"])
def test_worst_is_bounded_with_a_clear_message(command, tmp_path):
    import numpy as np

    np.save(tmp_path / "a.npy", np.zeros(4, np.float16))
    args = [str(tmp_path / "a.npy")] * 2 if command == "diff" else [str(SAMPLE)]
    start = time.monotonic()
    r = CliRunner().invoke(main, [command, *args, "--worst", "10000000"])
    assert time.monotonic() - start < 60
    assert r.exit_code == 2
    assert "Invalid value for '--worst': 10000000 is not in the range 0<=x<=10000." in r.stderr


def _piped_into_closed_reader(*args):
    """``fpinspect ARGS | head -0``: the reader has gone before anything is written."""
    reader = subprocess.Popen(["head", "-c", "0"], stdin=subprocess.PIPE)
    reader.wait()
    try:
        return subprocess.run(
            [sys.executable, "-m", "fpinspect", *args],
            stdout=reader.stdin,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        reader.stdin.close()


@pytest.mark.parametrize(
    "args",
    [
        ["compare", str(SAMPLE)],
        ["compare", str(SAMPLE), "--format", "csv"],
        ["compare", str(SAMPLE), "--format", "json"],
        ["switches", str(SAMPLE)],
    ],
)
def test_output_to_a_closed_stdout_is_said(args):
    r = _piped_into_closed_reader(*args)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == (
        "fpinspect: standard output was closed before all of the output was written."
    )
    assert "Traceback" not in r.stderr
