"""The inspector shows `fpinspect confirm`'s verdict on each fused op it judged (its confirm.json)."""

from __future__ import annotations

import json
import shutil

from harness import app_for, drive
from test_inspector import INTRODUCED, current, text_of

from fpinspect.tui.widgets.op_detail import OpDetail


def test_a_confirmed_region_says_so_in_its_detail(regression, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(regression, run)
    (run / "confirm.json").write_text(
        json.dumps(
            {
                "baseline": {"final_vs_eager": 2.3, "final_vs_fp64": 2.3, "verdict": "fail"},
                "regions": [
                    {"name": INTRODUCED, "index": 2, "alone": {}, "removed": 0.95, "verdict": "confirmed"},
                    {
                        "name": "autofuse_1_Mul_Add",
                        "index": 1,
                        "alone": {},
                        "removed": 0.0,
                        "verdict": "not confirmed",
                    },
                ],
            }
        )
    )

    async def scenario(pilot):
        await pilot.press("n")
        assert current(pilot) == INTRODUCED
        head = text_of(pilot.app.screen.query_one(OpDetail).query_one("#detail-head"))
        assert "confirmed at the model's outputs" in head and "removing 95% of the deviation" in head
        await pilot.press("g")
        assert current(pilot) != INTRODUCED
        others = text_of(pilot.app.screen.query_one(OpDetail).query_one("#detail-head"))
        assert "confirmed at the model's outputs" not in others or "not confirmed" in others

    drive(app_for(run), scenario)


def test_without_a_confirm_result_nothing_is_said(regression):
    async def scenario(pilot):
        await pilot.press("n")
        head = text_of(pilot.app.screen.query_one(OpDetail).query_one("#detail-head"))
        assert "model's outputs" not in head

    drive(app_for(regression), scenario)
