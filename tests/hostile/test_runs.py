"""Whole runs with one bad pair, with nothing comparable, with ambiguous names, with warnings."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import fpinspect.dumps.engine.compare as compare_module
from fpinspect.cli import main
from fpinspect.dumps.engine.compare import DumpComparison

SAMPLE = Path(__file__).resolve().parents[2] / "sample_dumps" / "regression"


@pytest.fixture
def run_dir(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "run")
    return tmp_path / "run"


def _args(run: Path, *extra):
    return [
        "compare",
        "--af-open-graph",
        str(run / "dumpgraph_af_open/Build.json"),
        "--af-close-graph",
        str(run / "dumpgraph_af_close/Build.json"),
        "--af-open-data",
        str(run / "datadump_af_open"),
        "--af-close-data",
        str(run / "datadump_af_close"),
        "--format",
        "json",
        *extra,
    ]


def _json(res):
    assert "Traceback" not in res.output
    return json.loads(res.stdout)


def test_an_unexpected_error_in_one_pair_is_that_pairs_status(run_dir, monkeypatch):
    real = compare_module.compare_arrays
    victim = "autofuse_3_GeluV2"  # the sample names the exact gelu GeluV2

    def flaky(a, b, **kw):
        if victim in str(getattr(a, "path", "")):
            raise RuntimeError("a bug nobody foresaw")
        return real(a, b, **kw)

    monkeypatch.setattr(compare_module, "compare_arrays", flaky)
    for jobs in ("1", "2"):
        report = _json(CliRunner().invoke(main, _args(run_dir, "--jobs", jobs, "--compare-input")))
        hit = [
            r
            for r in report["records"]
            if victim in r["fused_op"] and r["fused_file"] and victim in r["fused_file"]
        ]
        assert hit and all(r["status"] == ["COMPUTE_ERROR"] for r in hit)
        assert "RuntimeError: a bug nobody foresaw" in hit[0]["message"]
        others = [r for r in report["records"] if r not in hit and r["verdict"] is not None]
        assert len(others) >= 8


def test_a_run_that_compared_nothing_is_never_clean(run_dir):
    for f in (run_dir / "datadump_af_open").iterdir():
        f.write_bytes(b"garbage")
    res = CliRunner().invoke(main, _args(run_dir))
    report = _json(res)
    assert res.exit_code == 0
    assert report["summary"]["compared"] == 0
    assert report["summary"]["look_first"].startswith("Nothing was compared")
    assert CliRunner().invoke(main, _args(run_dir, "--fail-on", "warn")).exit_code == 1
    assert CliRunner().invoke(main, _args(run_dir, "--fail-on", "fail")).exit_code == 1


def test_the_iteration_used_is_reported(run_dir):
    data = run_dir / "datadump_af_close"
    nested = run_dir / "nested"
    (nested / "20260101" / "0" / "model" / "1").mkdir(parents=True)
    shutil.move(str(data), nested / "20260101" / "0" / "model" / "1" / "7")
    args = _args(run_dir)
    args[args.index(str(data))] = str(nested)
    res = CliRunner().invoke(main, args)
    summary = _json(res)["summary"]
    assert summary["iteration"] == {"fusion_on": ".", "fusion_off": "20260101/0/model/1/7"}
    table = CliRunner().invoke(main, args[:-2])
    assert "fusion-off 20260101/0/model/1/7" in table.output


def test_ignored_folders_and_graph_oddities_are_shown(run_dir):
    backup = run_dir / "datadump_af_open" / "backup"
    backup.mkdir()
    shutil.copy(next((run_dir / "datadump_af_open").glob("*.npy")), backup)
    res = CliRunner().invoke(main, _args(run_dir))
    assert res.exit_code == 0
    assert "fpinspect: warning:" in res.stderr and "backup: ignored" in res.stderr
    assert any("backup: ignored" in w for w in _json(res)["summary"]["warnings"])


def test_ops_written_alike_are_ambiguous_not_compared(run_dir):
    path = run_dir / "dumpgraph_af_close" / "Build.json"
    graph = json.loads(path.read_text())
    ops = graph["graph"][0]["op"]
    # "ln1/layer_norm" is written "ln1_layer_norm"; a second op of that file-name form makes it ambiguous
    twin = copy.deepcopy(next(o for o in ops if o["name"] == "ln1/layer_norm"))
    twin["name"] = "ln1.layer_norm"
    ops.append(twin)
    path.write_text(json.dumps(graph))
    cmp = DumpComparison(
        str(run_dir / "dumpgraph_af_open/Build.json"),
        str(path),
        str(run_dir / "datadump_af_open"),
        str(run_dir / "datadump_af_close"),
    )
    hit = [p for p in cmp.plans if "AMBIGUOUS_DUMP" in p.status]
    assert hit and all(p.origin_op == "ln1/layer_norm" for p in hit)
    assert "'ln1/layer_norm', 'ln1.layer_norm'" in hit[0].message
    assert not hit[0].comparable
