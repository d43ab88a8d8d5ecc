"""The Tasks pane as users drive it: real key presses, real child processes running task S."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

import pytest
from click.testing import CliRunner
from harness import until
from launchkit import (
    SMALL_S,
    FakeClock,
    drive,
    sample_report,
    tasks_app,
    watch_a_running_run,
    write_result,
)
from textual.widgets import Input

from fpinspect.cli import main as cli
from fpinspect.experiments.events import Finished, HistogramEvent, Progress
from fpinspect.tui.launcher import FAILED, FINISHED, QUEUED, RUNNING
from fpinspect.tui.messages import RunEvent
from fpinspect.tui.run_follower import RUN_NICE_ENV
from fpinspect.tui.screens.confirm import ConfirmScreen
from fpinspect.tui.screens.history import HistoryScreen
from fpinspect.tui.screens.result import ResultScreen
from fpinspect.tui.screens.tasks import TasksScreen
from fpinspect.tui.widgets.charts import TaskHistogram
from fpinspect.tui.widgets.result_view import ResultView


def text(widget) -> str:
    return " ".join(line.text for line in widget.render_lines(widget.region.reset_offset))


def child_alive(pid: int) -> bool:
    try:
        state = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return False
    return bool(state) and not state.startswith("Z")


@pytest.mark.needs("torch")
def test_queue_two_runs_of_s_and_see_the_result(tmp_path):
    seen: list = []
    app = tasks_app(tmp_path / "runs", task="S")

    async def scenario(pilot):
        screen = pilot.app.screen
        assert isinstance(screen, TasksScreen) and screen.selected_task.id == "S"
        screen.query_one("#overrides", Input).value = SMALL_S
        await pilot.press("enter", "enter")
        first, second = screen.queue.runs
        assert (first.state, second.state) == (RUNNING, QUEUED)  # one run at a time on the cpu
        assert second.settings.anchors == 2
        await until(pilot, lambda: first.state == FINISHED, what="the first run")
        await until(pilot, lambda: second.state != QUEUED, what="the second run to start")
        await until(pilot, lambda: second.state == FINISHED, what="the second run")
        # the Runs table says finished as soon as the child says so, before it has exited
        assert "finished" in str(screen.query_one("#queue").get_row(str(second.id)))
        await until(pilot, lambda: second.report is not None, what="the second run's result")
        assert any(f"{second.label} finished" in n and "r shows it" in n for n in pilot.app.told)
        assert pilot.app.screen is screen  # said, not shown: the pane stays where the user is
        await pilot.press("r")
        assert isinstance(pilot.app.screen, ResultScreen)
        assert second.started >= first.ended
        view = pilot.app.screen.query_one(ResultView)
        assert view.report.task == "S" and all(v.agrees for v in view.report.verdicts)
        assert len(view.query(TaskHistogram)) == len(view.report.histograms) >= 5
        await pilot.press("escape")
        assert pilot.app.screen is screen
        assert "agrees" in str(screen.query_one("#task-table").get_row("S"))

    drive(app, scenario, message_hook=seen.append)
    folders = sorted((tmp_path / "runs").iterdir())
    assert [f.name for f in folders] == ["20261201-074500-S-cpu-quick", "20261201-074500-S-cpu-quick-1"]
    for folder in folders:
        assert {"result.json", "report.md", "figures", "run.json", "run.log"} <= {
            p.name for p in folder.iterdir()
        }
        assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    # the hook sees a message once per node that handles it: count each one once
    events = [
        e
        for m in {id(m): m for m in seen}.values()
        if isinstance(m, RunEvent) and m.run_id == 1
        for e in m.events
    ]
    partial = [
        e for e in events if isinstance(e, HistogramEvent) and e.histogram.name == "s_float16_ulp_diff"
    ]
    assert len(partial) == 3 and sum(partial[0].histogram.counts) < sum(partial[-1].histogram.counts)
    assert any(isinstance(e, Progress) for e in events)


#: Task S with 65 536 anchors: its first stage alone takes minutes, so the run is still going
#: when the keys that cancel it land, however slowly a loaded machine processes them (the
#: full profile's ~3 s of work could end before them, and the cancel then never came).
LONG_S = "anchors=65536"


@pytest.mark.needs("torch")
def test_cancel_a_running_task_then_quit_while_another_runs(tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_NICE_ENV, "7")
    app = tasks_app(tmp_path / "runs", task="S", profile="full")
    pids = []

    async def scenario(pilot):
        screen = pilot.app.screen
        screen.query_one("#overrides", Input).value = LONG_S
        await pilot.press("enter")
        run = screen.queue.runs[0]
        await until(pilot, lambda: run.stage, what="the first progress event")
        pids.append(screen.processes[run.id]._proc.pid)
        # the child lowered its own priority by the setting before it started working
        assert os.getpriority(os.PRIO_PROCESS, pids[0]) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 7)
        await pilot.press("x")
        assert isinstance(pilot.app.screen, ConfirmScreen)
        await pilot.press("n")
        assert run.state == RUNNING and child_alive(pids[0])
        await pilot.press("ctrl+c", "y")
        await until(
            pilot,
            lambda: run.state != RUNNING and run.id not in screen.processes,
            timeout=60,
            what="the cancel",
        )
        assert run.state == FAILED and run.failure.kind == "cancelled" and not child_alive(pids[0])
        assert isinstance(pilot.app.screen, TasksScreen)  # a cancelled run does not push its failure
        assert "cancelled" in text(screen.query_one("#live-head"))
        await pilot.press("enter")
        await until(pilot, lambda: screen.queue.runs[1].stage, what="the second run's progress")
        pids.append(screen.processes[2]._proc.pid)
        await pilot.press("q")

    drive(app, scenario)
    assert len(pids) == 2 and not child_alive(pids[1])
    records = [json.loads((f / "run.json").read_text()) for f in sorted((tmp_path / "runs").iterdir())]
    assert [r["status"] for r in records] == ["cancelled", "cancelled"] and records[0]["profile"] == "full"


def test_confirming_the_cancel_of_a_run_that_ended_meanwhile_says_so(tmp_path):
    clock = FakeClock()
    app = tasks_app(tmp_path / "runs", clock=clock, task="S")

    async def scenario(pilot):
        run = watch_a_running_run(pilot.app.screen, clock)
        await pilot.press("x")
        assert isinstance(pilot.app.screen, ConfirmScreen)
        run.apply(Finished({}), clock())  # the child finished while the question was open
        await pilot.press("y")
        messages = list(pilot.app.told)
        assert any("has already ended" in m for m in messages) and not any("Stopping" in m for m in messages)
        assert run.state == FINISHED and not run.cancel_requested

    drive(app, scenario)


def test_a_saved_result_opens_from_the_picker_and_from_the_command_line(tmp_path):
    path = write_result(tmp_path / "elsewhere" / "copied", sample_report())
    (tmp_path / "broken.json").write_text("{not json", "utf-8")
    app = tasks_app(tmp_path / "runs")

    async def scenario(pilot):
        for typed in (tmp_path / "broken.json", path.parent):
            await pilot.press("o")
            await pilot.click("#picker-path")
            pilot.app.screen.query_one("#picker-path", Input).value = str(typed)
            await pilot.press("enter")
            await pilot.pause()
            if typed.name == "broken.json":
                assert isinstance(pilot.app.screen, TasksScreen)  # one sentence, no crash
                assert any("is not JSON" in m for m in pilot.app.told)
        screen = pilot.app.screen
        assert isinstance(screen, ResultScreen)
        body = "\n".join(text(w) for w in screen.query("Static"))
        assert "C3 — rsqrt" in body and "agrees" in body and "Plan table" in body and "copied" in body
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, TasksScreen)

    drive(app, scenario)
    runner = CliRunner()
    bad = runner.invoke(cli, ["open-result", str(tmp_path / "broken.json")])
    assert bad.exit_code == 2 and "is not JSON" in bad.stderr and "Traceback" not in bad.stderr
    missing = runner.invoke(cli, ["open-result", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    assert runner.invoke(cli, ["launch", "Z9"]).exit_code == 2


def test_without_a_results_database_history_lists_kept_runs_and_opens_them(tmp_path, monkeypatch):
    monkeypatch.setenv("FPINSPECT_DB", str(tmp_path / "none.sqlite"))
    runs = tmp_path / "runs"
    write_result(runs / "20261130-101010-C3-cpu-quick", sample_report(agrees=(True, False)))
    failed = runs / "20261201-090000-S-cpu-quick"
    failed.mkdir(parents=True)
    (failed / "run.json").write_text(
        json.dumps(
            {
                "task": "S",
                "device": "cpu",
                "profile": "quick",
                "settings": {},
                "started": "20261201-090000",
                "status": "error",
                "message": "ValueError: boom",
                "log_tail": "loading\nValueError: boom",
            }
        )
    )
    app = tasks_app(runs)

    async def scenario(pilot):
        screen = pilot.app.screen
        table = screen.query_one("#task-table")
        assert "disagrees" in str(table.get_row("C3"))
        assert "failed (error)" in str(table.get_row("S"))  # its only run failed: not "-"
        await pilot.press("h")
        history = pilot.app.screen
        await until(pilot, lambda: history.problem is not None, what="the history")
        assert "There is no results database at" in str(history.query_one("#history-title").render())
        assert isinstance(history, HistoryScreen) and [r.folder.name for r in history.runs] == [
            failed.name,
            "20261130-101010-C3-cpu-quick",
        ]
        await pilot.press("enter")
        body = "\n".join(text(w) for w in pilot.app.screen.query("Static"))
        assert "failed (error): ValueError: boom" in body and "Traceback" not in body
        await pilot.press("escape", "down", "enter")
        assert pilot.app.screen.query_one(ResultView).report.task == "C3"

    drive(app, scenario)


def test_bad_overrides_are_one_sentence_and_start_nothing(tmp_path):
    app = tasks_app(tmp_path / "runs", task="C3")

    async def scenario(pilot):
        screen = pilot.app.screen
        screen.query_one("#overrides", Input).value = "shape=a,b"
        screen.query_one("#task-table").focus()
        await pilot.press("enter")
        assert not screen.queue.runs
        assert any("'shape'" in m and "'a'" in m for m in pilot.app.told)

    drive(app, scenario)


def test_t_opens_the_pane_from_the_inspector_and_escape_returns(regression, tmp_path):
    from harness import app_for, settle

    from fpinspect.tui.screens.main import MainScreen

    app = app_for(regression, runs_dir=tmp_path / "runs", devices={"cpu": None, "cuda": "no", "npu": "no"})

    async def scenario(pilot):
        await settle(pilot)
        await pilot.press("t")
        tasks = pilot.app.screen
        assert isinstance(tasks, TasksScreen)
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, MainScreen)
        await pilot.press("t")
        assert pilot.app.screen is tasks  # the same pane: its runs go on while the inspector shows

    drive(app, scenario)


def _at_child_start_up(tmp_path, monkeypatch, code: str) -> None:
    """Every Python child started from here on runs ``code`` first (a ``sitecustomize`` on PYTHONPATH)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(code)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))
    )


#: Run by the experiment child at start-up (through PYTHONPATH): task S raises inside the child.
_RAISING_S = """
import dataclasses
import fpinspect.experiments.tasks.selfcheck as selfcheck

def _raise(*args, **kwargs):
    raise ValueError("no elements to take statistics of")

selfcheck.TASK = dataclasses.replace(selfcheck.TASK, run=_raise)
"""


@pytest.mark.needs("torch")
def test_a_run_that_raises_shows_its_failure_and_log_without_the_traceback(tmp_path, monkeypatch):
    _at_child_start_up(tmp_path, monkeypatch, _RAISING_S)
    app = tasks_app(tmp_path / "runs", task="S")

    async def scenario(pilot):
        screen = pilot.app.screen
        screen.query_one("#overrides", Input).value = SMALL_S
        await pilot.press("enter")
        await until(pilot, lambda: any("failed (error)" in n for n in pilot.app.told), what="the failure")
        assert pilot.app.screen is screen
        await pilot.press("r")
        assert isinstance(pilot.app.screen, ResultScreen)
        body = "\n".join(text(w) for w in pilot.app.screen.query("Static"))
        assert "failed (error)" in body and "ValueError" in body
        assert "Traceback" not in body and 'File "' not in body

    drive(app, scenario)
    folder = next((tmp_path / "runs").iterdir())
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "error" and "Traceback" in (folder / "run.log").read_text()
    assert "Traceback" not in record["log_tail"] and "ValueError" in record["log_tail"]


def test_an_unavailable_device_asked_for_falls_back_to_cpu(tmp_path):
    app = tasks_app(tmp_path / "runs", task="S", device="cuda")

    async def scenario(pilot):
        screen = pilot.app.screen
        assert screen.device == "cpu" and not screen.queue.runs
        assert any("no GPU here: runs go to cpu" in m for m in pilot.app.told)

    drive(app, scenario)


def test_each_profile_shows_its_cost_and_where_it_comes_from_before_any_run(tmp_path):
    from fpinspect.experiments.costs import MEASURED

    runs = tmp_path / "runs"
    kept = runs / "20261130-101010-C3-cpu-quick"
    write_result(kept, sample_report())
    (kept / "run.json").write_text(
        json.dumps(
            {
                "task": "C3",
                "device": "cpu",
                "profile": "quick",
                "settings": {},
                "started": "20261130-101010",
                "seconds": 42.0,
                "status": "finished",
                "verdict": "agrees",
            }
        )
    )
    app = tasks_app(runs, task="E")

    async def scenario(pilot):
        screen = pilot.app.screen
        estimate = screen.query_one("#estimate")
        seconds = round(MEASURED[("E", "quick")])
        shown = text(estimate)
        # nothing ran here: the measured figure, then the full profile scaled from it (rough)
        assert f"● quick: ≈ {seconds // 60}:{seconds % 60:02d} (measured on a 2-core CPU)" in shown
        assert "○ full: ~" in shown and "quick's time × 11,520 the work on a 2-core CPU; rough" in shown
        await pilot.press("p")  # the chosen profile's marker moves, not only its colour
        assert "○ quick" in text(estimate) and "● full" in text(estimate)
        buttons = " ".join(text(b) for b in screen.query_one("#profile").children)
        assert "●▌ full" in buttons and "○▌ quick" in buttons
        screen.query_one("#task-table").move_cursor(row=[t.id for t in screen.tasks].index("C3"))
        await pilot.pause()
        assert "quick: ≈ 0:42 (the slowest run on cpu)" in text(estimate)

    drive(app, scenario)


def test_the_runs_priority_setting_is_read_and_checked(monkeypatch):
    from fpinspect.tui.run_follower import RUN_NICE, run_nice

    for value, expected in (("", RUN_NICE), ("0", 0), ("19", 19)):
        monkeypatch.setenv(RUN_NICE_ENV, value)
        assert run_nice() == (expected, None)
    for bad in ("low", "-3", "20"):
        monkeypatch.setenv(RUN_NICE_ENV, bad)
        nice, problem = run_nice()
        assert nice == RUN_NICE and f"${RUN_NICE_ENV} is {bad!r}" in problem


#: Run by the experiment child at start-up (through PYTHONPATH): a child that stops only when killed.
_DEAF_TO_SIGTERM = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"


@pytest.mark.needs("torch")
def test_quitting_keeps_the_ui_live_while_it_stops_a_child_that_ignores_sigterm(tmp_path, monkeypatch):
    _at_child_start_up(tmp_path, monkeypatch, _DEAF_TO_SIGTERM)
    app = tasks_app(tmp_path / "runs", task="S", profile="full")
    seen = {}

    async def scenario(pilot):
        screen = pilot.app.screen
        screen.query_one("#overrides", Input).value = LONG_S
        await pilot.press("enter", "enter")  # one runs, one waits for the cpu
        running, queued = screen.queue.runs
        await until(pilot, lambda: running.stage, what="the first progress event")
        seen["pid"] = pid = screen.processes[running.id]._proc.pid
        await pilot.press("q")
        # SIGTERM was sent and ignored: the child lives until the engine's SIGKILL, and
        # meanwhile the UI still answers keys, says what it waits for, and starts nothing
        assert child_alive(pid) and pilot.app.return_code is None
        await pilot.press("p", "enter")
        assert screen.profile == "quick" and len(screen.queue.runs) == 2
        assert any(m == "Stopping 1 run…" for m in pilot.app.told)
        assert queued.state == FAILED and queued.failure.kind == "cancelled"
        while pilot.app.return_code is None:  # the app exits by itself once the child is gone
            await asyncio.sleep(0.05)
        seen["stopped"] = not child_alive(pid)

    drive(app, scenario, timeout=120)
    assert seen["stopped"] and not child_alive(seen["pid"])
    (folder,) = (tmp_path / "runs").iterdir()  # the queued run never started: no folder
    assert json.loads((folder / "run.json").read_text())["status"] == "cancelled"


def test_the_estimate_follows_the_overrides_typed_in_the_form(tmp_path):
    from fpinspect.experiments.costs import MEASURED

    app = tasks_app(tmp_path / "runs", task="C2")

    async def scenario(pilot):
        screen = pilot.app.screen
        estimate = screen.query_one("#estimate")
        seconds = round(MEASURED[("C2", "quick")])
        measured = f"● quick: ≈ 0:{seconds:02d} (measured on a 2-core CPU)"
        full_line = next(line for line in flat(estimate).split("○ ")[1:] if line.startswith("full"))
        assert measured in flat(estimate)
        await pilot.click("#overrides")
        await pilot.press(*"runs=400")  # n × (400 × 4 + 200 trials) against n × (100 × 4 + 200)
        shown = flat(estimate)
        assert (
            f"● quick: ~ {clock(3 * seconds)} (rough, for these settings: × 3 the work of quick, "
            "from measured on a 2-core CPU)" in shown
        )
        assert full_line in shown  # the other profile is not the one the overrides apply to
        await pilot.press("backspace", "backspace", "backspace", *"x")  # runs=x: not a number
        assert measured in flat(estimate)
        screen.query_one("#task-table").move_cursor(row=[t.id for t in screen.tasks].index("S"))
        await pilot.pause()
        await pilot.click("#overrides")
        await pilot.press(*"anchors=2")  # fewer anchors: less work, scaled
        assert "(rough, for these settings: × 0.43 the work of quick, from measured on a 2-core CPU)" in flat(
            estimate
        )

    drive(app, scenario)


def flat(widget) -> str:
    """The widget's text with its line wrapping undone."""
    return " ".join(text(widget).split())


def clock(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


@pytest.mark.needs("torch")
def test_run_all_queues_every_task_by_priority_and_writes_the_plans_report_when_they_end(tmp_path):
    runs_dir = tmp_path / "runs"
    app = tasks_app(runs_dir)

    async def scenario(pilot):
        screen = pilot.app.screen
        await pilot.press("a")
        runs = screen.queue.runs
        assert [r.task for r in runs] == ["S", "A", "C1", "C2", "C3", "D", "B", "E"]
        assert [r.state for r in runs] == [RUNNING] + [QUEUED] * 7 and screen.watched is runs[0]
        await until(pilot, lambda: runs[0].stage, what="the first progress event")
        for run in runs[1:]:
            screen.cancel(run)
        screen.cancel(runs[0])
        await until(pilot, lambda: (runs_dir / "plan.md").exists(), timeout=60, what="the plan's report")
        await until(pilot, lambda: any("Run all ended" in m for m in pilot.app.told))

    drive(app, scenario)
    md = (runs_dir / "plan.md").read_text()
    assert "| S | P0 | precision toolkit self-check" in md and "| failed |" in md
    assert "ended with cancelled" in md and (runs_dir / "plan.html").is_file()
