"""`fpinspect confirm`: culprits proven at the model's outputs by leaving fused regions unfused."""

import json

import pytest
from click.testing import CliRunner

from fpinspect.cli import main

#: Two regions whose faults each only warn at the model's outputs, and fail together.
PAIR = ["2=scale:1.0008", "4=scale:1.0008"]


def _ablation(capture, *injections):
    from fpinspect.capture import Injection
    from fpinspect.capture.confirm import Ablation

    return Ablation(capture, [Injection.parse(i) for i in injections])


def _every(capture):
    return [r.region.index for r in capture.regions]


def test_an_injected_region_is_confirmed_and_nothing_else(transformer_capture):
    from fpinspect.capture.confirm import confirm

    result = confirm(_ablation(transformer_capture, "2=bf16"), _every(transformer_capture))
    verdicts = {r.name: r.verdict for r in result.regions}
    assert verdicts.pop("autofuse_2_Add_LayerNorm") == "confirmed"
    assert set(verdicts.values()) == {"not confirmed"}
    # the fused baseline, then each region unfused alone and fused alone
    assert result.baseline.verdict == "fail" and result.runs == 1 + 2 * (len(verdicts) + 1)


def test_a_clean_capture_confirms_nothing(transformer_capture):
    from fpinspect.capture.confirm import confirm

    result = confirm(_ablation(transformer_capture), _every(transformer_capture), bisect=True)
    assert result.baseline.verdict == "pass"
    assert all(r.verdict != "confirmed" for r in result.regions)
    assert result.minimal_set == []  # nothing needs unfusing


def test_the_cancellation_region_reads_fusion_helps(demo_capture):
    from fpinspect.capture.confirm import confirm

    capture = demo_capture("cancellation")
    (region,) = confirm(_ablation(capture), _every(capture)).regions
    assert region.verdict == "fusion helps"
    assert region.alone.vs_fp64 > 10 * confirm(_ablation(capture), []).baseline.vs_fp64


@pytest.mark.parametrize("n, culprits", [(16, {3, 11}), (128, {5, 90}), (64, {17})])
def test_ddmin_finds_the_culprits_in_o_k_log_n_runs(n, culprits):
    import math

    from fpinspect.capture.confirm import Outcome, ddmin

    class Model:
        def outcome(self, subset):
            return Outcome(0.0, 0.0, "pass")

    calls = set()

    def fixes(subset):
        calls.add(frozenset(subset))
        return culprits <= set(subset)

    found = ddmin(list(range(n)), fixes, [], {i: str(i) for i in range(n)}, Model())
    assert set(found) == culprits
    assert len(calls) <= 4 * len(culprits) * math.log2(n) + 4


def test_confirm_and_bisect_from_the_command_line(tmp_path, inductor_cache):
    out = tmp_path / "cap"
    injects = [arg for spec in PAIR for arg in ("--inject", spec)]
    r = CliRunner().invoke(main, ["capture", "transformer", "--out", str(out), *injects])
    assert r.exit_code == 0, r.output
    assert json.loads((out / "capture.json").read_text())["inject"] == PAIR
    r = CliRunner().invoke(main, ["confirm", str(out), "--regions", "all", "--bisect", "--format", "json"])
    assert r.exit_code == 0, r.output
    result = json.loads(r.stdout)
    assert result["baseline"]["verdict"] == "fail"
    assert result["minimal_set"] == ["autofuse_2_Add_LayerNorm", "autofuse_4_Add"]
    assert all(x["verdict"] != "confirmed" for x in result["regions"])  # neither explains it alone
    # each region fused alone and unfused alone (2 runs each), then the bisection's
    assert result["runs"] <= 14 + len(result["regions"]) and result["bisect"]
    kept = json.loads((out / "confirm.json").read_text())  # where the inspector reads it
    assert kept["minimal_set"] == result["minimal_set"] and kept["regions"] == result["regions"]


def test_bad_capture_folders_are_one_sentence(tmp_path):
    r = CliRunner().invoke(main, ["confirm", str(tmp_path)])
    assert r.exit_code == 2 and "has no capture.json" in r.output
    (tmp_path / "capture.json").write_text('{"model": "mlp", "seed": "zero"}')
    r = CliRunner().invoke(main, ["confirm", str(tmp_path)])
    assert r.exit_code == 2 and "field 'seed' is not a int" in r.output


@pytest.mark.parametrize("text", ["2=scale:one", "2=bf16:2", "2=scale:1"])
def test_bad_scale_factors_are_refused(text):
    from fpinspect.capture import Injection
    from fpinspect.capture.errors import CaptureError

    with pytest.raises(CaptureError):
        Injection.parse(text)


def test_confirm_all_on_a_passing_capture_names_no_deviation_and_skips_its_unfused_region(
    tmp_path, inductor_cache
):
    out = tmp_path / "cap"
    r = CliRunner().invoke(main, ["capture", "transformer", "--out", str(out), "--unfuse", "2"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["confirm", str(out), "--regions", "all"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("all regions fused: ") and "(pass)" in lines[0]
    assert lines[1] == "The final outputs already pass eager's thresholds: no region needs confirming."
    regions = [line.split(":")[0].strip() for line in lines if line.startswith("  ")]
    assert regions == [
        "autofuse_0_LayerNorm",
        "autofuse_1_Muls_SoftmaxV2",
        "autofuse_3_GeluV2",
        "autofuse_4_Add",
    ]
    assert "removes" not in r.stdout
    # where the result went is said, and documented
    assert (
        f"fpinspect: wrote {out}/confirm.json (read by switches --for inductor and the inspector)" in r.stderr
    )
    assert [x["name"] for x in json.loads((out / "confirm.json").read_text())["regions"]] == regions
    r = CliRunner().invoke(
        main, ["confirm", str(out), "--regions", "2,autofuse_3_GeluV2", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    assert [x["name"] for x in json.loads(r.stdout)["regions"]] == ["autofuse_3_GeluV2"]
    assert "the capture already leaves autofuse_2_Add_LayerNorm unfused: not measured." in r.stderr
    assert "CAPTURE_DIR/confirm.json" in CliRunner().invoke(main, ["confirm", "-h"]).stdout
