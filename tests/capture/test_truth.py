"""Verdicts that hold on the structures real models are made of: a residual add in bfloat16 whose
RMSNorm statistics are taken in float32 (as LLaMA, Mixtral and Qwen write it), captured with real
Inductor fusion. The comparison and the ablation must agree."""

import json

import pytest
import torch
from click.testing import CliRunner
from torch import nn

from fpinspect.capture import Capture, Injection
from fpinspect.capture.confirm import Ablation, confirm, cross_check
from fpinspect.capture.errors import CaptureError
from fpinspect.cli import main


class ResidualRMSNorm(nn.Module):
    """``h = x + proj(x)`` in the model's dtype, its RMS statistics in float32, then a projection:
    the fused region ``Add_Cast_Pow_ReduceMeanD`` keeps ``h`` in float32 where eager rounds it."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.weight = nn.Parameter(1 + 0.2 * torch.randn(dim))
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        h = x + self.proj(x)
        var = h.float().pow(2).mean(-1, keepdim=True)
        normed = (h.float() * torch.rsqrt(var + 1e-6)).to(x.dtype)
        return self.out(self.weight * normed)


class Masked(nn.Module):
    """A doubled input, and a boolean mask: region ``Adds_Gt`` writes nothing a scale can change."""

    def forward(self, x):
        return x * 2, (x + 1) > 0


class Grouped(nn.Module):
    """A grouped matmul, which has no float64 kernel (as in mixture-of-experts layers)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 16, 8))

    def forward(self, x):
        return torch._grouped_mm(x * 2, self.w, offs=torch.tensor([4, 8], dtype=torch.int32)).relu()


@pytest.fixture(scope="module")
def norm_capture(inductor_cache):
    torch.manual_seed(0)
    return Capture(ResidualRMSNorm(), (torch.randn(4, 16, 64),), dtype="bfloat16", name="norm")


def _report(cap, out, injections=()):
    from capturecases import compare

    return compare(cap.write(out, injections=list(injections)))


def test_float32_statistics_of_a_bfloat16_residual_are_not_an_error(norm_capture, tmp_path):
    report = _report(norm_capture, tmp_path)
    assert report.summary().introduced == []
    stats = [r for r in report.records if r.plan.fused_op.startswith("autofuse_0_") and r.budget]
    # the float32 cast of the residual and its mean square: judged in bfloat16's eps, and within them
    assert stats and {r.budget for r in stats} == {"bfloat16"}
    assert all(r.verdict == "pass" for r in stats), [(r.plan.origin_op, r.reasons) for r in stats]
    assert json.loads(json.dumps(stats[0].to_json()))["metrics"]["budget_format"] == "bfloat16"


def test_a_planted_fault_there_is_introduced_first_and_confirmed(norm_capture, tmp_path):
    planted = [Injection("0", "scale")]
    report = _report(norm_capture, tmp_path, planted)
    name = norm_capture.regions[0].name
    assert report.summary().introduced == [name]
    result = confirm(Ablation(norm_capture, planted), [r.region.index for r in norm_capture.regions])
    assert [r.name for r in result.regions if r.verdict == "confirmed"] == [name]
    assert cross_check(report.localisation, result) == []


def test_a_clean_capture_confirms_nothing_and_agrees(norm_capture, tmp_path):
    report = _report(norm_capture, tmp_path)
    result = confirm(Ablation(norm_capture, []), [r.region.index for r in norm_capture.regions])
    assert all(r.verdict != "confirmed" for r in result.regions)
    assert cross_check(report.localisation, result) == []


def test_the_ablation_runs_ops_without_a_float64_kernel_in_float32(inductor_cache):
    torch.manual_seed(0)
    cap = Capture(Grouped(), (torch.randn(8, 16),), dtype="bfloat16", name="grouped")
    result = confirm(Ablation(cap, [Injection("0", "scale")]), [0, 1])
    assert list(result.narrower.values()) == ["float32"]
    assert "_grouped_mm" in next(iter(result.narrower)) or "grouped_mm" in result.truth_note()
    assert result.to_json()["float64_run_narrower"] == result.narrower
    assert [r.verdict for r in result.regions][0] == "confirmed"


def test_a_fault_that_cannot_change_its_region_is_refused(inductor_cache):
    cap = Capture(Masked(), (torch.randn(4, 8),), dtype="bfloat16", name="masked")
    mask = next(r for r in cap.regions if "Gt" in r.name)
    with pytest.raises(CaptureError, match="changes nothing.*only integer or boolean"):
        cap.target(Injection(str(mask.region.index), "scale"))
    with pytest.raises(CaptureError, match="changes nothing"):
        cap.target(Injection(str(mask.region.index), "nan"))
    other = next(r for r in cap.regions if r is not mask)
    assert cap.target(Injection(str(other.region.index), "scale")) is other


def test_compare_confirm_adds_the_ablation_to_the_report(tmp_path, inductor_cache):
    out = tmp_path / "cap"
    r = CliRunner().invoke(main, ["capture", "transformer", "--out", str(out), "--inject", "2=bf16"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["compare", str(out), "--confirm"])
    assert r.exit_code == 0, r.output
    assert "autofuse_2_Add_LayerNorm: confirmed" in r.stdout
    assert "The ablation agrees with the comparison on every region run." in r.stdout
    r = CliRunner().invoke(main, ["compare", str(out), "--confirm", "--format", "json"])
    report = json.loads(r.stdout)
    assert report["summary"]["confirm"]["regions"]["autofuse_2_Add_LayerNorm"] == "confirmed"
    assert report["summary"]["confirm"]["disagreements"] == []
    culprit = next(x for x in report["records"] if x["fused_op"] == "autofuse_2_Add_LayerNorm")
    assert culprit["confirm"]["verdict"] == "confirmed"
    assert json.loads((out / "confirm.json").read_text())["regions"]  # the inspector reads it there


def test_compare_confirm_needs_a_capture(tmp_path):
    import shutil

    from fpinspect.dumps.runs.sources import SAMPLE

    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    (run / "capture.json").unlink()  # a device run: nothing to run again
    r = CliRunner().invoke(main, ["compare", str(run), "--confirm"])
    assert r.exit_code == 2
    assert "--confirm runs the captured model again" in r.output and str(run) in r.output


class NearTie(nn.Module):
    """``argmax(x + y)`` picks a row of a table: ``x + y`` is a near-tie that eager's bfloat16
    rounding breaks one way (to index 0) and float32 or float64 the other (index 1)."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(2, 8))

    def forward(self, x, y):
        return self.table[(x + y).argmax(-1)] * 2


def test_a_near_tie_flipped_by_a_more_accurate_region_is_not_an_error(inductor_cache):
    x = torch.ones(4, 2)
    y = torch.tensor([[0.30, 0.45]]).repeat(4, 1) * 2.0**-7  # both round to 1.0 in bfloat16
    cap = Capture(NearTie(), (x, y), dtype="bfloat16", name="near-tie")
    ablation = Ablation(cap, [])
    assert any(not v.is_floating_point() for v in ablation.decisions.values())  # argmax's indices
    result = confirm(ablation, [r.region.index for r in cap.regions])
    # the fused region keeps x + y in float32 and flips the tie; with eager's decisions pinned its
    # numerics alone change nothing at the outputs
    assert {r.verdict for r in result.regions} == {"not confirmed"}
    assert all(r.only.verdict == "pass" for r in result.regions)
