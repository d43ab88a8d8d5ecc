"""The Tasks pane in its states, pinned as SVG snapshots: idle with a kept verdict, a run
streaming (events applied directly, clock mocked: no child, no elapsed-time noise), the
result view, a failure, and the history."""

from __future__ import annotations

import json
from dataclasses import replace

from launchkit import SIZE, FakeClock, sample_report, tasks_app, write_result

from fpinspect.experiments.events import HistogramEvent, Message, Progress, Started
from fpinspect.experiments.registry import get_task
from fpinspect.tui.launcher import RUNNING
from fpinspect.tui.screens.result import ResultScreen
from fpinspect.tui.widgets.result_view import ResultView


def kept_runs(root):
    write_result(root / "runs" / "20261130-101010-C3-cpu-quick", sample_report())
    folder = root / "runs" / "20261201-090000-S-cpu-quick"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({
        "task": "S", "device": "cpu", "profile": "quick", "settings": {}, "started": "20261201-090000", "seconds": 4.2,
        "status": "error", "message": "ValueError: boom", "log_tail": "loading the formats\nValueError: boom"}))  # fmt: skip


def test_idle(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kept_runs(tmp_path)
    assert snap_compare(tasks_app(tmp_path / "runs", task="C3"), terminal_size=SIZE)


def test_a_run_streaming(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    clock = FakeClock()
    app = tasks_app(tmp_path / "runs", clock=clock, task="C3")
    h = sample_report().histograms[0]

    async def before(pilot):
        screen = pilot.app.screen
        run = screen.queue.add("C3", "cpu", "quick", get_task("C3").settings.profile("quick"))
        run.state, run.started = RUNNING, clock()
        events = [Started("C3", "cpu", "quick"), Message("framework rsqrt: eager and fused"),
                  HistogramEvent(replace(h, name="c3_framework", title="framework rsqrt (fused) vs float64",
                                         counts=(150, 262000, 0, 0, 0))),
                  Progress("C3 variants", 1, 4), Message("Newton–Raphson, 1 iteration(s): eager and fused"),
                  HistogramEvent(h), Progress("C3 variants", 2, 4)]  # fmt: skip
        for event in events:
            clock.t += 3
            run.apply(event, clock())
        screen.watched = run
        screen._refresh_queue()
        screen._redraw(force=True)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_result_view(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_result(tmp_path / "copied", sample_report(agrees=(True, None)))
    assert snap_compare(tasks_app(tmp_path / "runs", start="result", result=path), terminal_size=SIZE)


def test_failure_view(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    async def before(pilot):
        view = ResultView(failure=("crash", "the process running task C3 exited with status -9 without a result",
                                   "compiling the framework rsqrt\nKilled"), source=tmp_path / "runs" / "x",
                          label="#1 C3 on cpu (quick)")  # fmt: skip
        await pilot.app.push_screen(ResultScreen(view))

    assert snap_compare(tasks_app(tmp_path / "runs"), terminal_size=SIZE, run_before=before)


def test_history(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kept_runs(tmp_path)
    assert snap_compare(tasks_app(tmp_path / "runs"), press=["h"], terminal_size=SIZE)
