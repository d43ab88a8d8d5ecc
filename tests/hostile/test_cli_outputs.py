"""Reports that cannot be written, interrupted runs and diffs that compared nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from interrupt import interrupt_fpinspect

from fpinspect.cli import main

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "sample_dumps", "regression")


def _compare_args(*extra):
    s = os.path.abspath(SAMPLE)
    return [
        "compare",
        "--af-open-graph",
        f"{s}/dumpgraph_af_open/Build.json",
        "--af-close-graph",
        f"{s}/dumpgraph_af_close/Build.json",
        "--af-open-data",
        f"{s}/datadump_af_open",
        "--af-close-data",
        f"{s}/datadump_af_close",
        *extra,
    ]


@pytest.mark.parametrize(
    "target, sentence",
    [("missing/r.json", "does not exist"), ("/dev/full", "not a regular file"), (".", "is a directory")],
)
def test_unwritable_outputs_are_refused_before_the_work(tmp_path, target, sentence):
    path = target if target.startswith("/") else str(tmp_path / target)
    res = CliRunner().invoke(main, _compare_args("--output", path))
    assert res.exit_code == 2
    assert sentence in res.output and "Traceback" not in res.output


def test_the_report_file_appears_whole(tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, _compare_args("--output", str(out), "--format", "json"))
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("{") and out.read_text().rstrip().endswith("}")
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left behind


def test_stdout_on_a_full_disk_is_one_sentence():
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "fpinspect", *_compare_args("--format", "json")],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "fpinspect: cannot write the report to standard output (No space left on device)."
    ]


@pytest.mark.parametrize("b_shape, code", [((3,), "SHAPE_MISMATCH")])
def test_diff_max_ulp_fails_when_nothing_was_compared(tmp_path, b_shape, code):
    np.save(tmp_path / "a.npy", np.ones(4, np.float16))
    np.save(tmp_path / "b.npy", np.ones(b_shape, np.float16))
    res = CliRunner().invoke(
        main, ["diff", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--max-ulp", "0"]
    )
    assert res.exit_code == 2 and code in res.output


def test_diff_max_ulp_fails_on_non_numeric_data(tmp_path):
    np.save(tmp_path / "a.npy", np.array(["x", "y"]))
    np.save(tmp_path / "b.npy", np.array(["x", "y"]))
    res = CliRunner().invoke(
        main, ["diff", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--max-ulp", "0"]
    )
    assert res.exit_code == 2 and "COMPUTE_ERROR" in res.output


def _reading(pid: int, path) -> bool:
    """Whether process ``pid`` has ``path`` open or mapped (it started the real work)."""
    target = str(path)
    try:
        if any(os.readlink(f"/proc/{pid}/fd/{fd}") == target for fd in os.listdir(f"/proc/{pid}/fd")):
            return True
        with open(f"/proc/{pid}/maps") as maps:
            return target in maps.read()
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see when the work starts")
def test_ctrl_c_is_one_line_and_status_130(tmp_path):
    n = 4 << 30  # sparse files of zeros: no disk used, many seconds of work to interrupt
    for name in ("a", "b"):
        np.lib.format.open_memmap(tmp_path / f"{name}.npy", mode="w+", dtype=np.float16, shape=(n,)).flush()
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    interrupt_fpinspect(
        ["diff", str(a), str(b), "--jobs", "2"],
        lambda pid: _reading(pid, a) or _reading(pid, b),
        "the diff's reading",
        settle=0.2,
    )
