"""Ascend's own comparison (msprobe's ``compare -m offline_data``, which runs msaccucmp) reads a
capture of ``fpinspect capture --raw`` and finds the figures fpinspect finds.

msprobe is the optional ``peers`` extra. Without CANN, msaccucmp cannot read any raw dump
(docs/design.md, "Ascend's tools on our captures"): ``msaccucmp_run.py`` then stands in for
CANN's header parser, and everything else is msprobe's own code."""

from __future__ import annotations

import csv
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fpinspect.cli import main

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("msprobe") is None, reason="msprobe is not installed (pip install -e '.[peers]')"
)

DEVICE = Path(__file__).resolve().parents[2] / "fpinspect/sample_dumps/device"
RUNNER = Path(__file__).resolve().parents[1] / "msaccucmp_run.py"


@pytest.fixture(scope="module")
def msaccucmp_rows(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("msprobe")
    args = [
        "compare",
        "-m", "datadump_af_open", "-g", "datadump_af_close",
        "-f", "dumpgraph_af_open/Build.json", "-cf", "dumpgraph_af_close/Build.json",
        "-out", str(out),
    ]  # fmt: skip
    run = subprocess.run(
        [sys.executable, str(RUNNER), *args], cwd=DEVICE, capture_output=True, text=True, timeout=600
    )
    # 2: some op has no dump file; true of every GE run (Data, Const and NetOutput are not dumped)
    assert run.returncode in (0, 2), run.stdout[-3000:] + run.stderr[-3000:]
    assert "does not match the dump data" not in run.stdout
    (result,) = out.glob("result_*.csv")
    with open(result, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_msaccucmp_finds_fpinspects_cosine_and_max_abs(msaccucmp_rows):
    args = ["compare", "--compare-input", "--format", "json"]
    for side in ("open", "close"):
        args += [f"--af-{side}-graph", str(DEVICE / f"dumpgraph_af_{side}/Build.json")]
        args += [f"--af-{side}-data", str(DEVICE / f"datadump_af_{side}")]
    ours = json.loads(CliRunner().invoke(main, args).output)["records"]
    theirs = {r["TensorIndex"]: r for r in msaccucmp_rows}
    compared = [r for r in ours if r["cosine"] is not None]
    assert len(compared) == 7  # 3 outputs, 4 inputs; the other inputs are weights
    for r in compared:
        row = theirs[f"{r['fused_op']}:{r['kind']}:{r['fused_index']}"]
        assert (row["CosineSimilarity"], row["MaxAbsoluteError"]) == (
            f"{r['cosine']:.6f}",
            f"{r['max_abs']:.6f}",
        ), r["fused_op"]
