"""The bundled sample dumps replay faithfully: on every fused output of every case the eager
replay on the fusion-off inputs is within 1 ULP of the fusion-off output dump; and each case
localises as its README says."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpinspect.dumps import DumpComparison
from fpinspect.inspection.pipeline import Inspection
from fpinspect.inspection.settings import CompareSettings

SAMPLES = Path(__file__).resolve().parents[2] / "sample_dumps"


def _report(case: str):
    d = SAMPLES / case
    c = DumpComparison(
        str(d / "dumpgraph_af_open" / "Build.json"),
        str(d / "dumpgraph_af_close" / "Build.json"),
        str(d / "datadump_af_open"),
        str(d / "datadump_af_close"),
    )
    return Inspection(c, CompareSettings(replay="all")).report()


@pytest.fixture(scope="module", params=sorted(p.name for p in SAMPLES.iterdir() if p.is_dir()))
def sample(request):
    return request.param, _report(request.param)


def test_replay_is_faithful_on_every_fused_output(sample, record_property):
    case, report = sample
    rows = [(r["fused_op"], r["fused_index"], r["replay"]) for r in report.to_json()["records"]]
    table = "\n".join(
        f"{case}  {op}:{i}  {rep['status']:<14} fidelity max {rep['fidelity'] and rep['fidelity']['max_ulp']} ULP"
        f"  {rep['reason'] or ''}"
        for op, i, rep in rows
    )
    record_property("fidelity", table)
    print("\n" + table)
    assert rows
    assert all(rep["status"] == "ok" and rep["fidelity"]["max_ulp"] <= 1 for _, _, rep in rows), table


def test_each_sample_localises_as_its_readme_says(sample):
    case, report = sample
    summary = report.summary()
    expected = {  # introduced, more accurate
        "regression": (["autofuse_2_Add_LayerNorm"], []),  # the injected op
        "clean": ([], []),
        "device": ([], []),  # the clean conv block as raw device dumps, NC1HWC0 storage
        "more_accurate": ([], ["autofuse_0_Muls_Exp_Adds"]),  # the fused kernel is the side closer to fp64
    }
    assert (summary.introduced, summary.more_accurate) == expected[case]


def test_every_replayed_output_has_msprobes_standard(sample):
    """The samples read as msprobe's benchmark standard would have them: only the injected
    op fails, held to the L2 limits of its LayerNorm; the more accurate fusion passes."""
    case, report = sample
    standards = {
        (r["fused_op"], r["fused_index"]): r["replay"]["standard"] for r in report.to_json()["records"]
    }
    assert all(s is not None and s["verdict"] in ("pass", "fail") for s in standards.values())
    failing = sorted({op for (op, _), s in standards.items() if s["verdict"] == "fail"})
    assert failing == (["autofuse_2_Add_LayerNorm"] if case == "regression" else [])
    if case == "regression":
        s = standards[("autofuse_2_Add_LayerNorm", 0)]
        assert (s["op_class"], s["op_class_from"]) == ("L2", "LayerNorm")
        assert s["metrics"]["MaxRelErr"]["limit"] == 2.0 and s["metrics"]["MaxRelErr"]["ratio"] > 2.0
