"""The Tasks pane in its states, pinned as SVG snapshots: idle with a kept verdict, a run
streaming (events applied directly, clock mocked: no child, no elapsed-time noise), the
result view, a failure, and the history."""

from __future__ import annotations

import json
from dataclasses import replace

from harness import until
from launchkit import SIZE, FakeClock, sample_report, tasks_app, write_result

from fpinspect.experiments.events import CurveEvent, CurvePoint, HistogramEvent, Message, Progress, Started
from fpinspect.experiments.registry import get_task
from fpinspect.experiments.results import Curve, Series
from fpinspect.tui.launcher import RUNNING
from fpinspect.tui.screens.result import ResultScreen
from fpinspect.tui.widgets.result_view import ResultView


def kept_runs(root):
    write_result(root / "runs" / "20261130-101010-C3-cpu-quick", sample_report())
    folder = root / "runs" / "20261201-090000-S-cpu-quick"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(
        json.dumps(
            {
                "task": "S",
                "device": "cpu",
                "profile": "quick",
                "settings": {},
                "started": "20261201-090000",
                "seconds": 4.2,
                "status": "error",
                "message": "ValueError: boom",
                "log_tail": "loading the formats\nValueError: boom",
            }
        )
    )


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
        events = [
            Started("C3", "cpu", "quick"),
            Message("framework rsqrt: eager and fused"),
            HistogramEvent(
                replace(
                    h,
                    name="c3_framework",
                    title="framework rsqrt (fused) vs float64",
                    counts=(150, 262000, 0, 0, 0),
                )
            ),
            Progress("C3 variants", 1, 4),
            Message("Newton–Raphson, 1 iteration(s): eager and fused"),
            HistogramEvent(h),
            Progress("C3 variants", 2, 4),
        ]
        for event in events:
            clock.t += 3
            run.apply(event, clock())
        screen.watched = run
        screen._refresh_queue()
        screen._redraw(force=True)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def _streaming(app, clock, task, events):
    async def before(pilot):
        screen = pilot.app.screen
        run = screen.queue.add(task, "cpu", "quick", get_task(task).settings.profile("quick"))
        run.state, run.started = RUNNING, clock()
        for event in [Started(task, "cpu", "quick"), *events]:
            clock.t += 2
            run.apply(event, clock())
        screen.watched = run
        screen._refresh_queue()
        screen._redraw(force=True)
        await pilot.pause()

    return before


def test_b_eager_and_fused_side_by_side_with_their_cdf(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    clock = FakeClock()
    h = sample_report().histograms[0]
    events = [
        HistogramEvent(
            replace(h, name=f"b_layernorm_float16_{p}", title=f"layernorm, float16, {p}", counts=c)
        )
        for p, c in (("eager", (10, 500, 900, 300, 40)), ("fused", (30, 900, 600, 100, 2)))
    ]
    cdf = Curve(
        "b_layernorm_cdf",
        "layernorm: CDF of each input's max ULP error",
        "max ULP error",
        "share",
        (
            Series("float16 eager", (0.5, 1.0, 2.0, 4.0), (0.1, 0.5, 0.9, 1.0)),
            Series("float16 fused", (0.5, 1.0, 2.0), (0.3, 0.8, 1.0)),
        ),
        xscale="log",
    )
    events += [CurveEvent(cdf), Progress("B layernorm float16", 50, 400)]
    app = tasks_app(tmp_path / "runs", clock=clock, task="B")
    assert snap_compare(app, terminal_size=SIZE, run_before=_streaming(app, clock, "B", events))


def test_e_loss_curves_as_they_grow(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    clock = FakeClock()
    events = [
        CurvePoint(
            series,
            step,
            {
                "train_loss": 5.5 - step / 100 + d,
                "eval_loss": 5.6 - step / 110 + d,
                "perplexity": 200.0,
                "grad_norm": 1.0,
            },
        )
        for step in range(0, 301, 50)
        for series, d in (("eager", 0.0), ("fused", 0.01))
    ]
    app = tasks_app(tmp_path / "runs", clock=clock, task="E")
    assert snap_compare(app, terminal_size=SIZE, run_before=_streaming(app, clock, "E", events))


def test_result_view(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_result(tmp_path / "copied", sample_report(agrees=(True, None)))
    assert snap_compare(tasks_app(tmp_path / "runs", start="result", result=path), terminal_size=SIZE)


def test_failure_view(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    async def before(pilot):
        view = ResultView(
            failure=(
                "crash",
                "the process running task C3 exited with status -9 without a result",
                "compiling the framework rsqrt\nKilled",
            ),
            source=tmp_path / "runs" / "x",
            label="#1 C3 on cpu (quick)",
        )
        await pilot.app.push_screen(ResultScreen(view))

    assert snap_compare(tasks_app(tmp_path / "runs"), terminal_size=SIZE, run_before=before)


def test_history_without_a_results_database(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FPINSPECT_DB", "results.sqlite")
    kept_runs(tmp_path)

    async def before(pilot):
        await pilot.press("h")
        await until(pilot, lambda: pilot.app.screen.problem is not None, what="the history")

    assert snap_compare(tasks_app(tmp_path / "runs"), terminal_size=SIZE, run_before=before)
