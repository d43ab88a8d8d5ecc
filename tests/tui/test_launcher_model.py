"""The Tasks pane's run state and queue, and the kept-run folders, without an app."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from launchkit import sample_report, write_result

from fpinspect.experiments.events import (
    CurveEvent,
    CurvePoint,
    Failed,
    Finished,
    HistogramEvent,
    Message,
    Progress,
)
from fpinspect.experiments.results import Curve, Series
from fpinspect.experiments.runs import RunStore, readable_tail, verdict_summary
from fpinspect.tui.launcher import FAILED, FINISHED, QUEUED, RUNNING, RunQueue, TrackedRun
from fpinspect.tui.widgets.charts import bin_kind


def test_one_run_at_a_time_per_device():
    q = RunQueue()
    a, b, c = (
        q.add("S", "cpu", "quick", None),
        q.add("C3", "cpu", "quick", None),
        q.add("S", "cuda", "quick", None),
    )
    assert q.startable() == [a, c]
    a.state = c.state = RUNNING
    assert q.startable() == []
    a.state = FINISHED
    assert q.startable() == [b] and b.state == QUEUED


def test_events_fold_into_the_run_and_unknown_kinds_are_logged():
    run = TrackedRun(1, "B", "cpu", "quick", None, state=RUNNING, started=10.0)
    h = sample_report().histograms[0]
    run.apply(Progress("chains", 1, 5), 10.0)
    assert run.eta(11.0) is None  # a stage first seen halfway: no pace yet
    run.apply(Progress("chains", 2, 5), 12.0)
    assert run.eta(14.0) == 12.0  # 4 s per step since the stage was seen, 3 steps left
    run.apply(HistogramEvent(h), 12.0)
    run.apply(Message("layernorm"), 12.0)

    @dataclass(frozen=True)
    class Novel:
        payload: int

    run.apply(Novel(3), 13.0)
    assert run.histograms == {h.name: h} and list(run.log)[-2:] == [
        "layernorm",
        "(Novel event: not shown here)",
    ]
    # whole charts replace, points extend one line per metric
    cdf = Curve(
        "b_cdf", "CDF of ULP error", "ULP", "share", (Series("fused", (0.5, 1.0), (0.4, 1.0)),), xscale="log"
    )

    run.apply(CurveEvent(cdf), 14.0)
    run.apply(CurvePoint("eager", 50, {"train_loss": 2.5}), 14.0)
    run.apply(CurvePoint("eager", 100, {"train_loss": 2.1}), 15.0)
    assert run.curves["CDF of ULP error"] == {"fused": ((0.5, 1.0), (0.4, 1.0))}
    assert run.curve_axes["CDF of ULP error"] == ("ULP", True)
    assert run.curves["train_loss"] == {"eager": ((50.0, 100.0), (2.5, 2.1))}
    run.apply(Finished({}), 20.0)
    assert run.state == FINISHED and run.elapsed(99.0) == 10.0
    other = TrackedRun(2, "S", "cpu", "quick", None, state=RUNNING, started=0.0)
    other.apply(Failed("crash", "died"), 1.0)
    assert other.state == FAILED and other.failure.kind == "crash"


def test_ulp_bins_take_the_drill_down_colours():
    assert [bin_kind(b) for b in ("0", "1", "(0, 0.5]", "(0.5, 1]", "(1, 2]", "4-7", "> 8", "NaN")] == [
        "exact",
        "near",
        "near",
        "near",
        "off",
        "off",
        "off",
        "off",
    ]


def test_kept_runs_newest_first_with_their_verdicts(tmp_path):
    store = RunStore(tmp_path / "runs")
    when = datetime(2026, 12, 1, 7, 0, 0)
    first, again = store.new_run("C3", "cpu", "quick", when), store.new_run("C3", "cpu", "quick", when)
    assert (first.name, again.name) == ("20261201-070000-C3-cpu-quick", "20261201-070000-C3-cpu-quick-1")
    write_result(first, sample_report(agrees=(True, False)))  # no run.json: copied from elsewhere
    write_result(again, sample_report())
    (again / "run.json").write_text(
        json.dumps(
            {
                "task": "C3",
                "device": "cpu",
                "profile": "quick",
                "settings": {},
                "started": "x",
                "seconds": 12.5,
                "status": "finished",
                "verdict": "agrees",
            }
        )
    )
    (store.root / "stray").mkdir()  # neither file: not listed
    assert [r.folder for r in store.history()] == [again, first]
    assert store.last_outcomes() == {"C3": "agrees"} and store.last_seconds("C3", "cpu", "quick") == 12.5
    assert store.history()[1].record.verdict == "disagrees"
    assert verdict_summary(sample_report(agrees=(True, None))) == "cannot tell"


def test_a_log_tail_for_people_has_no_traceback():
    log = (
        'compiling\nTraceback (most recent call last):\n  File "x.py", line 1, in <module>\n    boom()\n'
        "ValueError: boom\nafter"
    )
    assert readable_tail(log) == "compiling\nValueError: boom\nafter"


def test_only_plot_events_move_the_plots_revision():
    run = TrackedRun(1, "B", "cpu", "quick", None, state=RUNNING)
    h = sample_report().histograms[0]
    for event, moves in (
        (Progress("B", 1, 4), False),
        (Message("softmax"), False),
        (HistogramEvent(h), True),
        (CurvePoint("eager", 10, {"train_loss": 5.0}), True),
        (CurveEvent(Curve("cdf", "CDF", "x", "share", (Series("a", (1.0,), (1.0,)),))), True),
    ):
        before = run.plots_revision
        run.apply(event, 0.0)
        assert (run.plots_revision != before) == moves, event
