"""The compact layout of a small terminal (80×24), pinned as SVG snapshots, and what it keeps
in view: the footer's q, ? and t, readable histograms, every column of the worst elements."""

from __future__ import annotations

from harness import app_for, drive, settle
from launchkit import FakeClock, tasks_app
from launchkit import drive as tasks_drive
from test_inspector import text_of
from test_snapshots import drill_into_first_failing
from test_tasks_snapshots import kept_runs
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from fpinspect.tui.screens.pair import PairScreen
from fpinspect.tui.widgets.histogram import UlpHistogram
from fpinspect.tui.widgets.worst import WorstTable

SMALL = (80, 24)


def shown_keys(screen) -> list[str]:
    """The footer's keys drawn whole inside the terminal."""
    return [
        k.description
        for k in screen.query_one(Footer).query(FooterKey)
        if k.region.width and k.region.right <= screen.size.width
    ]


def test_main_screen_small(snap_compare, regression):
    assert snap_compare(app_for(regression), press=["n"], terminal_size=SMALL, run_before=settle)


def test_drill_down_small(snap_compare, regression):
    assert snap_compare(app_for(regression), terminal_size=SMALL, run_before=drill_into_first_failing)


def test_tasks_small(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kept_runs(tmp_path)
    app = tasks_app(tmp_path / "runs", clock=FakeClock(), task="C3")
    assert snap_compare(app, terminal_size=SMALL)


def test_a_small_terminal_keeps_the_app_keys_and_readable_plots(regression):
    async def scenario(pilot):
        assert {"Quit", "Help", "Tasks", "Next fail"} <= set(shown_keys(pilot.app.screen))
        await drill_into_first_failing(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PairScreen)
        assert all(h.size.height >= 8 for h in screen.query(UlpHistogram))
        worst = screen.query_one(WorstTable)
        screen.scroll_to_widget(worst, animate=False)
        await pilot.pause()
        assert "B bits" in text_of(worst) and "0x" in text_of(worst).split("B bits", 1)[1]
        assert {"Back", "Quit", "Help", "Tasks"} <= set(shown_keys(screen))

    drive(app_for(regression), scenario, size=SMALL)


def test_a_small_tasks_pane_keeps_the_app_keys_and_each_claim_whole(tmp_path):
    from textual.geometry import Region

    from fpinspect.experiments.registry import all_tasks

    async def scenario(pilot):
        screen = pilot.app.screen
        assert {"Cancel run", "Back", "Quit", "Help", "Tasks"} <= set(shown_keys(screen))
        table = screen.query_one("#task-table")
        lines = [s.text for s in table.render_lines(Region(0, 0, table.size.width, table.size.height))]
        column = lines[1].index("claim")
        claims = " ".join(" ".join(line[column:].strip(" │").split()) for line in lines[2:])
        c1 = next(t for t in all_tasks() if t.id == "C1")
        assert " ".join(c1.claim.split()) in claims  # wrapped within its column, not cut

    tasks_drive(tasks_app(tmp_path / "runs", task="C3"), scenario, size=SMALL)
