"""The replay in the inspector: failing ops are replayed once every pair is compared, ``r``
replays the highlighted op on demand, and the drill-down shows fused, eager and fp64 with a
ULP histogram against the op's own eager replay."""

from __future__ import annotations

import sys
from pathlib import Path

from harness import SIZE, app_for, drive, settle
from test_inspector import INTRODUCED, current, text_of
from textual.widgets import Static

from fpinspect.tui.screens.pair import PairScreen
from fpinspect.tui.widgets.banner import Banner
from fpinspect.tui.widgets.histogram import UlpHistogram
from fpinspect.tui.widgets.op_detail import OpDetail

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))
from chains import adds, build_chain, exp, muls  # noqa: E402

WIDE = (240, 50)


def _card_text(pilot, index: int = 0) -> str:
    """What a pair card says (its content, unwrapped)."""
    return " ".join(pilot.app.screen.query_one(OpDetail).cards[index].content.plain.split())


def test_failing_ops_are_replayed_and_blamed_by_evidence(regression):
    async def scenario(pilot):
        insp = pilot.app.screen.inspection
        assert set(insp.replays) == {INTRODUCED, "autofuse_3_Tanh_Mul", "autofuse_4_Add_Relu"}
        assert insp.findings[INTRODUCED].role == "introduced"
        assert "its own eager replay" in insp.findings[INTRODUCED].reason
        assert insp.findings["autofuse_3_Tanh_Mul"].role == "inherited"
        assert f"First introduced error: {INTRODUCED}" in text_of(pilot.app.screen.query_one(Banner))
        await pilot.press("n")
        assert current(pilot) == INTRODUCED
        card = _card_text(pilot)
        assert (
            "replay" in card
            and "fused vs its eager replay" in card
            and "fusion itself changed the result" in card
        )

    drive(app_for(regression), scenario, size=WIDE)


def test_r_replays_the_highlighted_op_without_blocking(regression):
    async def scenario(pilot):
        insp = pilot.app.screen.inspection
        assert current(pilot) == "autofuse_1_Mul_Add"  # passes: not replayed by default
        assert "not replayed" in _card_text(pilot)
        await pilot.press("r")
        assert "autofuse_1_Mul_Add" in insp.replaying or "autofuse_1_Mul_Add" in insp.replays
        await pilot.press("j")  # the list still moves while the replay runs
        await settle(pilot)
        assert insp.replays["autofuse_1_Mul_Add"].outputs[0].status == "ok"
        await pilot.press("k")
        card = _card_text(pilot)
        assert "fidelity 0 ULP" in card and "not replayed" not in card

    drive(app_for(regression), scenario, size=WIDE)


def test_drill_down_shows_three_ways_and_both_histograms(regression):
    async def scenario(pilot):
        await pilot.press("n", "enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PairScreen)
        three = text_of(screen.query_one("#pair-replay", Static))
        assert "fused" in three and "eager" in three and "from fp64" in three
        assert "msprobe's benchmark standard (" in three and ("pass" in three or "fail" in three)
        assert screen.query_one("#histogram-replay", UlpHistogram).bins is not None
        assert screen.query_one("#histogram", UlpHistogram).bins is not None

    drive(app_for(regression), scenario, size=WIDE)


def test_a_more_accurate_fused_op_says_so(tmp_path):
    ops = [muls("Muls_1", 0.05), exp("Exp_2"), adds("Adds_3", -1.0), muls("Muls_4", 20.0)]
    build_chain(tmp_path, ops, [("autofuse_0_Muls_Exp_Adds_Muls", ["Muls_1", "Exp_2", "Adds_3", "Muls_4"])])

    async def scenario(pilot):
        insp = pilot.app.screen.inspection
        assert insp.findings["autofuse_0_Muls_Exp_Adds_Muls"].role == "more_accurate"
        banner = text_of(pilot.app.screen.query_one(Banner))
        assert "more accurate" in banner and "closer to fp64 than eager" in banner
        assert "fusion kept fp32 inside" in _card_text(pilot)

    drive(app_for(tmp_path), scenario, size=SIZE)
