"""`fpinspect repro`: a bundle whose script, with numpy alone, prints the report's replay numbers."""

import importlib.util
import json
import subprocess
import venv
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fpinspect.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def numpy_only(tmp_path_factory):
    """A fresh virtual environment that can import numpy and nothing of this project."""
    root = tmp_path_factory.mktemp("numpy-only")
    venv.EnvBuilder(with_pip=False).create(root / "env")
    shelf = root / "shelf"
    shelf.mkdir()
    numpy_dir = Path(np.__file__).parent
    for item in [numpy_dir, *numpy_dir.parent.glob("numpy.libs")]:
        (shelf / item.name).symlink_to(item)
    (site,) = (root / "env").glob("lib/python*/site-packages")
    (site / "shelf.pth").write_text(str(shelf) + "\n")
    python = root / "env" / "bin" / "python"
    probe = subprocess.run(
        [python, "-c", "import numpy, fpinspect"], capture_output=True, text=True, cwd=root
    )
    assert "No module named 'fpinspect'" in probe.stderr, probe.stderr
    return python


def report_replays(sample):
    root = SAMPLES / sample
    r = run(
        "compare",
        "--af-open-graph", next((root / "dumpgraph_af_open").iterdir()),
        "--af-close-graph", next((root / "dumpgraph_af_close").iterdir()),
        "--af-open-data", root / "datadump_af_open",
        "--af-close-data", root / "datadump_af_close",
        "--format", "json", "--replay", "all",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return {
        (rec["fused_op"], rec["fused_index"]): rec["replay"]
        for rec in json.loads(r.output)["records"]
        if rec["kind"] == "output" and rec["replay"] and rec["replay"]["status"] == "ok"
    }


@pytest.mark.parametrize("sample, op", [("regression", "autofuse_2_Add_LayerNorm"), ("more_accurate", None)])
def test_the_bundle_reproduces_the_report_with_numpy_alone(numpy_only, tmp_path, sample, op):
    replays = report_replays(sample)
    op = op or next(iter(replays))[0]
    out = tmp_path / "bundle"
    r = run("repro", SAMPLES / sample, op, "--out", out)
    assert r.exit_code == 0, r.output
    # the samples are captures: where torch is installed, the bundle also holds their torch script
    torch_script = {"repro_torch.py"} if importlib.util.find_spec("torch") else set()
    assert {p.name for p in out.iterdir()} == {
        "bundle.npz",
        "subgraph.json",
        "repro.py",
        "ops",
        *torch_script,
    }
    proc = subprocess.run(
        [numpy_only, str(out / "repro.py"), "--json"], capture_output=True, text=True, cwd=tmp_path, env={}
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got, "no output compared"
    for row in got:
        expected = replays[(op, row["fused_index"])]
        for name in ("fidelity", "fused_vs_replay", "fused_vs_fp64", "eager_vs_fp64"):
            for key, value in row[name].items():
                assert value == pytest.approx(expected[name][key], rel=1e-9, abs=1e-12), (name, key)
    subgraph = json.loads((out / "subgraph.json").read_text())
    assert subgraph["op"] == op and subgraph["ops"] and all("refs" in o for o in subgraph["ops"])


def test_bad_requests_are_one_sentence(tmp_path):
    r = run("repro", SAMPLES / "regression", "no_such_op", "--out", tmp_path / "b")
    assert r.exit_code == 2 and "has no fused op no_such_op" in r.output
    r = run("repro", tmp_path, "x", "--out", tmp_path / "b")
    assert r.exit_code == 2 and "is a folder without a graph" in r.output and "Traceback" not in r.output
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run("repro", SAMPLES / "regression", "autofuse_2_Add_LayerNorm", "--out", blocker / "b")
    assert r.exit_code == 2 and "cannot write the bundle" in r.output
