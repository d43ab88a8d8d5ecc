"""The History screen (``h`` in the Tasks pane) as users drive it: the runs of the results
database, a deleted artefacts folder, tagging a run, its check, and a database it cannot read."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner
from harness import until
from launchkit import drive, sample_report, tasks_app, write_result

from fpinspect.cli import main as cli
from fpinspect.experiments.registry import get_task
from fpinspect.experiments.runs import RunRecord, RunStore
from fpinspect.store import ResultsDB
from fpinspect.tui.screens.baseline_check import BaselineCheckScreen
from fpinspect.tui.screens.history import HistoryScreen
from fpinspect.tui.screens.main import MainScreen
from fpinspect.tui.widgets.result_view import ResultView

SAMPLE = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps" / "regression"
COMPARE = [
    "compare",
    "--af-open-graph", str(SAMPLE / "dumpgraph_af_open" / "Build.json"),
    "--af-close-graph", str(SAMPLE / "dumpgraph_af_close" / "Build.json"),
    "--af-open-data", str(SAMPLE / "datadump_af_open"),
    "--af-close-data", str(SAMPLE / "datadump_af_close"),
]  # fmt: skip


def _c3(max_ulp: float):
    return replace(sample_report(), data={"by_iterations": [{"iterations": 1, "max_ulp": max_ulp}]})


def _recorded(tmp_path, monkeypatch) -> tuple[Path, dict]:
    """A database with three runs of C3 (the oldest tagged ``v1``, the middle one's folder
    deleted, the newest worse than the baseline) and one ``compare --record``."""
    db_path = tmp_path / "results.sqlite"
    monkeypatch.setenv("FPINSPECT_DB", str(db_path))
    runs = tmp_path / "runs"
    folders = {
        name: runs / f"20261201-0{i}0000-C3-cpu-quick" for i, name in enumerate(("old", "gone", "new"))
    }
    with ResultsDB(db_path) as db:
        for name, max_ulp in (("old", 3.2), ("gone", 3.2), ("new", 9.0)):
            write_result(folders[name], _c3(max_ulp))
            result = _c3(max_ulp).to_dict()
            run_id = db.record_result(result, str(folders[name]), figures=get_task(result["task"]).figures)
            if name == "old":
                db.tag("v1", [run_id])
    shutil.rmtree(folders["gone"])
    compared = CliRunner().invoke(cli, [*COMPARE, "--format", "json", "--record"], catch_exceptions=False)
    assert compared.exit_code == 0, compared.output
    return runs, json.loads(compared.stdout)["summary"]


async def _history(pilot) -> HistoryScreen:
    await pilot.press("h")
    history = pilot.app.screen
    assert isinstance(history, HistoryScreen)
    await until(
        pilot, lambda: history.recorded is not None or history.problem is not None, what="the history"
    )
    return history


def _rows(history: HistoryScreen) -> list[list[str]]:
    table = history.query_one("#history-table")
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def _title(history: HistoryScreen) -> str:
    return str(history.query_one("#history-title").render())


def test_history_lists_the_recorded_runs_and_opens_them(tmp_path, monkeypatch):
    runs, summary = _recorded(tmp_path, monkeypatch)
    app = tasks_app(runs)

    async def scenario(pilot):
        history = await _history(pilot)
        assert "Recorded runs" in _title(history)
        compare, new, gone, old = _rows(history)
        assert compare[1:4] == ["compare", "dumps", "-"]
        assert f"{summary['verdicts']['fail']} fail" in compare[6]
        assert f"introduced by {summary['introduced'][0]}" in compare[6]
        assert summary["look_first"] in str(history.query_one("#history-detail").render())
        assert new[1:4] == ["C3", "cpu", "quick"] and new[5] == "-"
        assert new[6] == "vs v1: 1 regressed, first 1/max_ulp"
        assert gone[7] == "gone: 20261201-010000-C3-cpu-quick" and new[7] == "20261201-020000-C3-cpu-quick"
        assert old[5] == "v1"

        await pilot.press("down", "down", "enter")  # the run whose folder was deleted
        assert pilot.app.screen is history
        assert any("is gone" in n and "20261201-010000-C3-cpu-quick" in n for n in pilot.app.told)

        await pilot.press("up", "enter")
        assert pilot.app.screen.query_one(ResultView).report.task == "C3"
        await pilot.press("escape", "c")
        check = pilot.app.screen
        assert isinstance(check, BaselineCheckScreen)
        assert "| 1/max_ulp | 3.2 | 9 |" in check.report
        await pilot.press("escape", "up", "enter")  # the comparison: its dumps open in the inspector
        opened = pilot.app.screen
        assert isinstance(opened, MainScreen)
        assert Path(opened.sources.open_data) == (SAMPLE / "datadump_af_open").resolve()
        await until(pilot, lambda: opened.inspection is not None, what="the comparison's dumps")
        assert opened.inspection.comparing
        await pilot.press("escape")
        assert pilot.app.screen is history

    drive(app, scenario)


def test_t_tags_the_highlighted_run_into_a_baseline(tmp_path, monkeypatch):
    runs, _ = _recorded(tmp_path, monkeypatch)
    app = tasks_app(runs)

    async def scenario(pilot):
        history = await _history(pilot)
        await pilot.press("down", "t")
        prompt = pilot.app.screen.query_one("#prompt-input")
        assert prompt.value == "v1"  # the baseline its check is against
        prompt.value = "rel-2"
        await pilot.press("enter")
        await until(pilot, lambda: _rows(history)[1][5] == "rel-2", what="the tag in the table")
        assert any("is in baseline rel-2" in n for n in pilot.app.told)

    drive(app, scenario)
    with ResultsDB() as db:
        (tagged,) = db.baseline("rel-2")
    assert tagged.task == "C3" and tagged.artefacts.endswith("20261201-020000-C3-cpu-quick")


def test_a_run_that_recorded_nothing_is_listed_with_its_status_and_opens_its_failure(tmp_path, monkeypatch):
    runs, _ = _recorded(tmp_path, monkeypatch)
    failed = runs / "20261201-030000-B-cpu-quick"
    failed.mkdir(parents=True)
    record = RunRecord("B", "cpu", "quick", {}, "2026-12-01T03:00:00", 4.0, "error", "the child died: boom")
    RunStore.write_record(failed, record)
    app = tasks_app(runs)

    async def scenario(pilot):
        history = await _history(pilot)
        rows = _rows(history)
        (row,) = [r for r in rows if r[-1] == failed.name]
        assert row[1:4] == ["B", "cpu", "quick"] and row[6] == "not recorded: error"
        await pilot.press(*["down"] * rows.index(row))
        assert "the child died: boom" in str(history.query_one("#history-detail").render())
        await pilot.press("t")
        assert pilot.app.screen is history
        assert any("recorded nothing (error)" in n for n in pilot.app.told)
        await pilot.press("enter")
        assert pilot.app.screen.query_one(ResultView).failure[1] == "the child died: boom"

    drive(app, scenario)


def test_a_damaged_database_is_one_sentence_and_the_run_folders_are_listed(tmp_path, monkeypatch):
    db_path = tmp_path / "results.sqlite"
    db_path.write_bytes(b"not a database " * 100)
    monkeypatch.setenv("FPINSPECT_DB", str(db_path))
    runs = tmp_path / "runs"
    write_result(runs / "20261130-101010-C3-cpu-quick", sample_report())
    app = tasks_app(runs)

    async def scenario(pilot):
        history = await _history(pilot)
        assert _title(history).startswith(
            f"The results database {db_path} is not an SQLite database or is damaged: the run folders under "
        )
        (row,) = _rows(history)
        assert row[1] == "C3" and row[-1] == "20261130-101010-C3-cpu-quick"
        await pilot.press("t")
        assert pilot.app.screen is history
        assert any("is not an SQLite database" in n for n in pilot.app.told)
        await pilot.press("enter")
        assert pilot.app.screen.query_one(ResultView).report.task == "C3"

    drive(app, scenario)


def test_the_headline_is_whole_on_160_columns(tmp_path, monkeypatch):
    runs, summary = _recorded(tmp_path, monkeypatch)
    seen = {}

    async def scenario(pilot):
        history = await _history(pilot)
        table = history.query_one("#history-table")
        seen["headline"] = _rows(history)[0][6]
        seen["width"] = table.ordered_columns[6].width

    drive(tasks_app(runs), scenario, size=(160, 48))
    assert f"introduced by {summary['introduced'][0]}" in seen["headline"]
    assert seen["width"] >= len(seen["headline"])
