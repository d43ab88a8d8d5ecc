"""`fpinspect switches`: the AutoFuse flags or GE pass switches that turn off exactly the fusions
that introduced an error, what else they touch, and where no switch can."""

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.dumps.formats.fusion import FusedOp
from fpinspect.dumps.switches import autofuse_flags, autofuse_switches, effective_passes, ge_switches

SAMPLE = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps" / "regression"
CULPRIT = "autofuse_2_Add_LayerNorm"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def op(name, *types, kind="AscBackend"):
    return FusedOp(name, kind, "g", [], [f"{name}_{i}" for i in range(len(types))], list(types), [])


def test_the_regression_sample_names_the_flags_for_its_culprit_and_what_else_they_touch():
    r = run("switches", SAMPLE)
    assert r.exit_code == 0, r.output
    assert f"{CULPRIT} (AscBackend: Add, LayerNorm)" in r.output
    assert "--autofuse_disable_pass=reduce" in r.output
    assert "also touches: autofuse_0_LayerNorm, autofuse_1_Muls_SoftmaxV2" in r.output
    assert 'export AUTOFUSE_FLAGS="--enable_autofuse=true;--autofuse_disable_pass=reduce"' in r.output
    if importlib.util.find_spec("torch") is not None:  # the sample is a capture: Inductor's switches follow
        inductor = r.stdout.split("Inductor (torch.compile), for the captured model:")[1]
        assert f"--unfuse {CULPRIT}" in inductor and "no single submodule holds its ops" in inductor
        assert "-> verified: within eager's thresholds" in inductor


def test_a_report_finds_its_graph_beside_its_dump_folders(tmp_path):
    report = tmp_path / "report.json"
    r = run(
        "compare",
        "--af-open-graph", SAMPLE / "dumpgraph_af_open" / "Build.json",
        "--af-close-graph", SAMPLE / "dumpgraph_af_close" / "Build.json",
        "--af-open-data", SAMPLE / "datadump_af_open",
        "--af-close-data", SAMPLE / "datadump_af_close",
        "--format", "json", "-o", report,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    r = run("switches", report, "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["introduced"] == [CULPRIT]
    (culprit,) = out["ops"]
    assert [s["setting"] for s in culprit["switches"]] == [
        "--autofuse_disable_pass=reduce",
        "--autofuse_enhance_precision_blacklist=all",
    ]
    assert out["autofuse_flags"] == "--enable_autofuse=true;--autofuse_disable_pass=reduce"


def test_pure_elementwise_fusion_cannot_be_switched_off_but_its_precision_can():
    ew = op("autofuse_1_Muls_Adds", "Muls", "Adds")
    other = op("autofuse_9_Add", "Add")
    reduce_ = op("autofuse_7_ReduceSum", "ReduceSum", "Mul")
    out = autofuse_switches(ew, [ew, other, reduce_])
    kinds = [s.kind for s in out.switches]
    assert kinds == ["autofuse_enhance_precision_blacklist", "enable_autofuse"]
    assert out.switches[0].setting == "--autofuse_enhance_precision_blacklist=Mul,Add"
    assert out.switches[0].also == ["autofuse_9_Add", "autofuse_7_ReduceSum"]
    assert any("cannot be switched off" in n for n in out.notes)
    assert autofuse_flags([out]) == "--enable_autofuse=true;--autofuse_enhance_precision_blacklist=Mul,Add"


def test_sum_mean_prod_are_never_blacklisted():
    out = autofuse_switches(op("autofuse_3", "ReduceSum"), [])
    assert [s.setting for s in out.switches] == ["--autofuse_disable_pass=reduce"]


def test_ge_passes_from_fusion_result(tmp_path):
    result = tmp_path / "fusion_result.json"
    result.write_text(
        json.dumps(
            {
                "graph_fusion": {"ConvBnFusionPass": {"effect_times": "2", "match_times": "2"}},
                "ub_fusion": {"TbeEltwiseFusionPass": {"effect_times": "0", "match_times": "3"}},
            }
        )
    )
    assert effective_passes(str(result)) == ["ConvBnFusionPass"]
    conv = op("conv1", "Conv2D", "BatchNorm", kind="Conv2D")
    out = ge_switches(conv, ["ConvBnFusionPass"])
    assert [s.setting for s in out.switches] == ["ConvBnFusionPass:off"]
    assert "say which of these passes" in out.notes[0] or "one at a time" in out.notes[0]
    assert ge_switches(conv, None).switches == [] and "fusion_result.json" in ge_switches(conv, None).notes[0]
    assert "AutoFuse" in ge_switches(op("autofuse_0", "Add"), ["X"]).notes[0]


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda p: p / "missing.json", "does not exist"),
        (lambda p: (p / "bad.json").write_text("{not json") and p / "bad.json", "not a readable JSON report"),
        (lambda p: (p / "r.json").write_text("{}") and p / "r.json", "has no summary.introduced"),
        (lambda p: (p / "e").mkdir() or p / "e", "is a folder without a graph"),
    ],
)
def test_bad_sources_are_one_sentence(tmp_path, make, needle):
    r = run("switches", make(tmp_path))
    assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


def test_an_op_the_graph_does_not_have_is_one_sentence(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"records": [], "summary": {"introduced": ["nope"]}}))
    r = run("switches", report, "--graph", SAMPLE / "dumpgraph_af_open" / "Build.json")
    assert r.exit_code == 2 and "has no fused op nope" in r.output
    r = run("switches", report)
    assert r.exit_code == 2 and "--graph" in r.output
    bad = tmp_path / "fr.json"
    bad.write_text("[")
    r = run(
        "switches",
        report,
        "--for",
        "ge",
        "--graph",
        SAMPLE / "dumpgraph_af_open" / "Build.json",
        "--fusion-result",
        bad,
    )
    assert r.exit_code == 2 and "fusion_result.json" in r.output
