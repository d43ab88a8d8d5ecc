"""`fusion-precision-analyzer` prints what the reference ``fusion_precision_analyzer.py`` prints,
line for line, so scripts that parse its console output work unchanged.

``reference_output/`` holds the reference script's own output on the inputs below (run from
the folder the paths are relative to); where the script itself is here (see
:func:`refscript.reference_script`), it is run beside the drop-in as well. The one difference
allowed: the reason after an ``NPY 加载失败`` warning, which is numpy's exception text in the
reference (it tries to unpickle) and fpinspect's sentence in the drop-in (it never does)."""

from __future__ import annotations

import glob
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from refscript import reference_script

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "reference_output"
SAMPLES = "fpinspect/sample_dumps"


def _mode1(folder: str, *extra: str) -> list[str]:
    return [
        "--af-open-graph", f"{folder}/dumpgraph_af_open/Build.json",
        "--af-close-graph", f"{folder}/dumpgraph_af_close/Build.json",
        "--af-open-data", f"{folder}/datadump_af_open",
        "--af-close-data", f"{folder}/datadump_af_close",
        *extra,
    ]  # fmt: skip


def _edge(root: Path) -> Path:
    """The regression sample with an output's mapping removed (NO_MAPPING), a fused output of
    other element count (SHAPE_MISMATCH) and one that is not an ``.npy`` (NPY_LOAD_ERROR)."""
    edge = Path(shutil.copytree(ROOT / SAMPLES / "regression", root / "edge"))
    graph = edge / "dumpgraph_af_open/Build.json"
    g = json.loads(graph.read_text("utf-8"))
    for op in g["graph"][0]["op"]:
        if op["name"] == "autofuse_3_GeluV2":
            op["output_desc"][0]["attr"] = [
                a for a in op["output_desc"][0]["attr"] if a["key"] != "_datadump_origin_name"
            ]
    graph.write_text(json.dumps(g), "utf-8")
    data = edge / "datadump_af_open"
    np.save(glob.glob(str(data / "*autofuse_1_Muls*output.0.npy"))[0], np.zeros((3, 5), np.float16))
    Path(glob.glob(str(data / "*autofuse_4_Add*output.0.npy"))[0]).write_bytes(b"not an npy file")
    return edge


CASES = {
    "regression_inputs": (".", _mode1(f"{SAMPLES}/regression", "--compare-input")),
    "regression": (".", _mode1(f"{SAMPLES}/regression")),
    "clean_inputs": (".", _mode1(f"{SAMPLES}/clean", "--compare-input")),
    "more_accurate_inputs": (".", _mode1(f"{SAMPLES}/more_accurate", "--compare-input")),
    "edge_inputs": ("edge", _mode1("edge", "--compare-input")),
    "mode2": (
        ".",
        [
            "--mode", "2",
            "--npy-a", f"{SAMPLES}/regression/datadump_af_open/AscBackend.autofuse_2_Add_LayerNorm.18.0.1700000000000018.output.0.npy",
            "--npy-b", f"{SAMPLES}/regression/datadump_af_close/Add.add.19.0.1700000000000019.output.0.npy",
        ],
    ),
}  # fmt: skip


def _where(case: str, tmp_path: Path) -> Path:
    """The folder the case runs in (its paths are relative to it)."""
    if CASES[case][0] == "edge":
        _edge(tmp_path)
        return tmp_path
    return ROOT


def _run(command: list[str], cwd: Path) -> list[str]:
    out = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def _dropin(case: str, cwd: Path) -> list[str]:
    env_path = str(ROOT)
    code = f"import sys; sys.path.insert(0, {env_path!r}); from fpinspect.legacy import console_main; console_main()"
    return _run([sys.executable, "-c", code, *CASES[case][1]], cwd)


_LOAD_REASON = re.compile(r"^(WARNING: NPY 加载失败 - .+ output \d+ / .+ output \d+): .*$")


def _same_but_load_reasons(lines: list[str]) -> list[str]:
    return [_LOAD_REASON.sub(r"\1: <reason>", line) for line in lines]


@pytest.mark.parametrize("case", list(CASES))
def test_the_drop_in_prints_the_reference_scripts_lines(case, tmp_path):
    expected = (GOLDEN / f"{case}.txt").read_text("utf-8").splitlines()
    assert _same_but_load_reasons(_dropin(case, _where(case, tmp_path))) == _same_but_load_reasons(expected)


@pytest.mark.skipif(
    reference_script() is None, reason="the reference script is not here (FPINSPECT_REFERENCE_SCRIPT)"
)
@pytest.mark.parametrize("case", list(CASES))
def test_the_drop_in_and_the_reference_script_print_the_same(case, tmp_path):
    cwd = _where(case, tmp_path)
    theirs = _run([sys.executable, str(reference_script()), *CASES[case][1]], cwd)
    assert _same_but_load_reasons(_dropin(case, cwd)) == _same_but_load_reasons(theirs)
