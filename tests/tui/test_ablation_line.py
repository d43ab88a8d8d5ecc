"""The inspector shows what `fpinspect confirm` found for the highlighted op beside the comparison's
finding, and says where the two disagree (issue 38: both in one place)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness import app_for, drive
from test_inspector import text_of
from textual.widgets import Static

SAMPLE = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps" / "regression"
CULPRIT = "autofuse_2_Add_LayerNorm"


def _head_of_culprit(run: Path) -> str:
    seen = {}

    async def scenario(pilot):
        await pilot.press("i")
        seen["head"] = text_of(pilot.app.screen.query_one("#detail-head", Static))

    drive(app_for(run), scenario, size=(160, 48))
    return " ".join(seen["head"].split())


def _capture_with(tmp_path, verdict: str) -> Path:
    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    only = {"final_vs_eager": 0.59, "final_vs_fp64": 1.2, "verdict": "pass"}
    (run / "confirm.json").write_text(
        json.dumps({"regions": [{"name": CULPRIT, "index": 2, "verdict": verdict, "only": only}]})
    )
    return run


def test_an_ablation_that_disagrees_is_said_beside_the_finding(tmp_path):
    head = _head_of_culprit(_capture_with(tmp_path, "not confirmed"))
    assert (
        "not confirmed at the model's outputs (fpinspect confirm: fused alone it moves them 0.59 eps" in head
    )
    assert "the comparison says introduced" in head


def test_an_ablation_that_agrees_adds_nothing_more(tmp_path):
    head = _head_of_culprit(_capture_with(tmp_path, "confirmed"))
    assert "confirmed at the model's outputs" in head
    assert "the comparison says" not in head
