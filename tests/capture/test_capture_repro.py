"""`fpinspect repro` on a capture: repro_torch.py runs the region eagerly and under torch.compile on
the saved inputs, with torch and numpy alone, and prints the report's numbers."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fpinspect.cli import main

OP = "autofuse_0_Muls_Exp_Adds"  # exp(0.05 y) - 1: fusion keeps the cancelling exp in fp32

#: Runs repro_torch.py as a script, then fails if anything of fpinspect was imported.
STANDALONE = (
    "import runpy, sys; sys.argv = [sys.argv[1], '--json']; runpy.run_path(sys.argv[0], run_name='__main__'); "
    "assert not [m for m in sys.modules if m.split('.')[0] == 'fpinspect'], 'imports fpinspect'"
)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_repro_torch_prints_the_report_numbers(demo_capture, tmp_path):
    from fpinspect.capture import DumpPair
    from fpinspect.capture.spec import CaptureSpec

    capture = tmp_path / "cap"
    demo_capture("cancellation").write(capture)
    CaptureSpec("cancellation").write(capture)
    r = run("compare", *DumpPair.under(capture).compare_args(), "--format", "json", "--replay", "all")
    assert r.exit_code == 0, r.output
    report = {
        rec["fused_index"]: rec["replay"]
        for rec in json.loads(r.stdout)["records"]
        if rec["kind"] == "output" and rec["fused_op"] == OP
    }
    bundle = tmp_path / "bundle"
    r = run("repro", capture, OP, "--out", bundle)
    assert r.exit_code == 0, r.output
    assert "repro_torch.py" in r.output and (bundle / "repro_torch.py").is_file()

    # the session's Inductor cache travels in the environment (tests/conftest.py)
    proc = subprocess.run(
        [sys.executable, "-c", STANDALONE, str(bundle / "repro_torch.py")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = report[row["fused_index"]]
    assert expected["fused_vs_replay"]["max_ulp"] > 100  # fusion does change these numbers
    assert row["compiled_vs_dump"] == {"red": 0.0, "max_ulp": 0}  # torch.compile reproduces the dump
    for name in ("fidelity", "fused_vs_replay", "fused_vs_fp64", "eager_vs_fp64"):
        for key, value in row[name].items():
            # float64 truths from torch's and numpy's libm may differ in their last bits
            assert value == pytest.approx(expected[name][key], rel=1e-4, abs=1e-9), (name, key)
    assert row["fused_vs_replay"]["max_ulp"] == expected["fused_vs_replay"]["max_ulp"]
    printed = proc.stdout.splitlines()
    assert any(line.split()[:1] == ["fused_vs_replay"] and "report:" in line for line in printed)
