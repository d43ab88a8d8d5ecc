"""The Tasks pane and the results database: runs it finishes are recorded, and each task's
newest recorded run is shown against its baseline."""

from __future__ import annotations

import pytest
from harness import until
from launchkit import SMALL_S, drive, tasks_app
from textual.widgets import Input

from fpinspect.experiments.registry import get_task
from fpinspect.store import ResultsDB
from fpinspect.tui.launcher import FINISHED
from fpinspect.tui.screens.baseline_check import BaselineCheckScreen


def _b(p99: float) -> dict:
    return {
        "chains": [{"chain": "gelu", "dtype": "float16", "distribution": "normal", "fused": {"p99_ulp": p99}}]
    }


def _database(tmp_path, monkeypatch):
    db_path = tmp_path / "results.sqlite"
    monkeypatch.setenv("FPINSPECT_DB", str(db_path))
    env = {"device": "cpu", "device_name": "cpu0", "torch": "2.5"}
    b = {"task": "B", "settings": {}, "device": "cpu", "figures": get_task("B").figures}
    with ResultsDB(db_path) as db:
        db.tag("v1", [db.record("B", _b(1.0), environment=env, **b)])
        db.record("B", _b(3.0), environment={**env, "torch": "2.6"}, **b)
    return db_path


@pytest.mark.needs("torch")
def test_the_pane_shows_the_check_of_each_tasks_newest_run_and_records_its_own_runs(tmp_path, monkeypatch):
    db_path = _database(tmp_path, monkeypatch)
    app = tasks_app(tmp_path / "runs", task="S")

    async def scenario(pilot):
        screen = pilot.app.screen
        table = screen.query_one("#task-table")
        assert "vs baseline v1: 1 figure regressed" in str(table.get_row("B"))
        assert "vs baseline" not in str(table.get_row("S"))
        screen.query_one("#overrides", Input).value = SMALL_S
        await pilot.press("enter")
        (run,) = screen.queue.runs
        await until(pilot, lambda: run.state == FINISHED and run.report is not None, what="the run of S")
        with ResultsDB(db_path) as db:
            (recorded,) = db.runs(task="S")
        assert recorded.artefacts == str(run.folder) and recorded.settings["anchors"] == 2

    drive(app, scenario)


def test_b_opens_the_check_of_the_highlighted_task(tmp_path, monkeypatch):
    _database(tmp_path, monkeypatch)
    app = tasks_app(tmp_path / "runs", task="B")

    async def scenario(pilot):
        tasks = pilot.app.screen
        await pilot.press("b")
        check = pilot.app.screen
        assert isinstance(check, BaselineCheckScreen)
        assert "| gelu/float16/normal/fused.p99_ulp | 1 | 3 | 2 |" in check.report
        assert "| torch | 2.5 | 2.6 |" in check.report
        await pilot.press("escape")
        assert pilot.app.screen is tasks

    drive(app, scenario)
