"""What users tripped over in the Tasks pane and the result views."""

from __future__ import annotations

from launchkit import FakeClock, drive, tasks_app
from textual.widgets import Static

from fpinspect.tui.launcher import RUNNING
from fpinspect.tui.screens.confirm import ConfirmScreen


def text(widget) -> str:
    return " ".join(line.text.strip() for line in widget.render_lines(widget.region.reset_offset))


def test_the_cancel_question_shows_its_text_and_the_keys(tmp_path):
    clock = FakeClock()
    app = tasks_app(tmp_path / "runs", clock=clock, task="S")

    async def scenario(pilot):
        screen = pilot.app.screen
        run = screen.queue.add("S", "cpu", "quick", screen.requested_settings(screen.selected_task))
        run.state, run.started = RUNNING, clock()
        screen.watched = run
        await pilot.press("x")
        await pilot.pause()
        confirm = pilot.app.screen
        assert isinstance(confirm, ConfirmScreen)
        shown = text(confirm.query_one(Static))
        assert f"Cancel {run.label}?" in shown and "y: yes" in shown and "n / escape: no" in shown
        await pilot.press("n")

    drive(app, scenario)
