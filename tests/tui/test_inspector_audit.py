"""What users tripped over in the inspector: replays that fail, the filter, the pair choice."""

from __future__ import annotations

from harness import app_for, drive, settle
from test_inspector import INTRODUCED, current, text_of
from textual.widgets import Static

from fpinspect.replay import evidence
from fpinspect.tui.widgets.op_detail import OpDetail
from fpinspect.tui.widgets.op_list import OpList


async def _highlight(pilot, name: str) -> None:
    """Filter the list down to ``name`` and put the cursor on it."""
    await pilot.press("slash", *name, "enter")
    assert current(pilot) == name


def test_r_on_an_op_fusion_left_alone_says_why_it_is_not_replayed(regression):
    async def scenario(pilot):
        await pilot.press("a")
        await settle(pilot)
        insp = pilot.app.screen.inspection
        alone = next(r.name for r in insp.rows if r.name not in insp.pairs.outputs and r.op.type != "Data")
        await _highlight(pilot, alone)
        await pilot.press("r")
        await settle(pilot)
        assert any("left alone by fusion" in m for m in pilot.app.told), pilot.app.told
        assert "replaying" not in text_of(pilot.app.screen.query_one(OpDetail))

    drive(app_for(regression), scenario)


def test_a_failing_replay_is_one_sentence_and_stops_the_spinner(regression, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("autofuse_9")

    monkeypatch.setattr(evidence, "replay_op", broken)  # what the inspection replays with

    async def scenario(pilot):
        await pilot.press("n")
        await settle(pilot)
        assert current(pilot) == INTRODUCED
        failed = [m for m in pilot.app.told if "failed" in m]
        assert failed == ["Replaying ops failed (KeyError: 'autofuse_9')."], pilot.app.told
        assert "replaying" not in text_of(pilot.app.screen.query_one(OpDetail))
        await pilot.press("r")  # asking again tries again, and says so again
        await settle(pilot)
        assert len([m for m in pilot.app.told if "failed" in m]) == 2

    drive(app_for(regression), scenario)


def test_the_filter_matches_part_of_a_verdict_or_cause_as_of_a_name(regression):
    async def scenario(pilot):
        screen = pilot.app.screen
        ops = screen.query_one(OpList)
        inherited = [r.name for r in screen.inspection.rows if r.role == "inherited"]
        await pilot.press("slash", *"inherit")
        assert inherited and ops.shown == inherited
        await pilot.press(*["backspace"] * 7, *"fai")
        assert ops.shown == [r.name for r in screen.inspection.rows if r.verdict == "fail"]
        await pilot.press(*["backspace"] * 3, *"intro")
        assert ops.shown == [INTRODUCED]

    drive(app_for(regression), scenario)


def test_brackets_choose_the_pair_enter_opens(regression):
    async def scenario(pilot):
        await pilot.press("n")
        assert current(pilot) == INTRODUCED
        await pilot.press("right_square_bracket", "enter")  # from the worst output to input 0
        await settle(pilot)
        assert "input 0" in text_of(pilot.app.screen.query_one("#pair-title", Static))
        await pilot.press("escape", "left_square_bracket", "enter")  # and back to the output
        await settle(pilot)
        assert "output 0" in text_of(pilot.app.screen.query_one("#pair-title", Static))

    drive(app_for(regression), scenario)


def test_help_lists_fpinspects_keys_first_and_every_cause(regression):
    async def scenario(pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        body = "\n".join(text_of(s) for s in pilot.app.screen.query(Static))
        keys = body.index("Keys")
        assert keys < body.index("Filter by op name") < body.index("Focus Next")
        assert "Next pair" in body and "Prev pair" in body
        assert "more accurate" in body and "thick bar" in body

    drive(app_for(regression), scenario)
