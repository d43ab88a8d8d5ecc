"""The cost shown for a profile before it runs: the last run here, else the measured table,
else the other profile's measurement scaled by the work ratio (said to be rough)."""

from __future__ import annotations

import pytest

from fpinspect.experiments import costs
from fpinspect.experiments.registry import all_tasks, get_task
from fpinspect.experiments.settings import PROFILES


def test_every_task_has_a_measured_quick_profile_and_every_profile_an_estimate():
    for task in all_tasks():
        assert (task.id, "quick") in costs.MEASURED, task.id
        for profile in PROFILES:
            guess = costs.estimate(task, profile, "cpu")
            assert guess is not None and guess.seconds > 0, (task.id, profile)
            # a figure that is not measured says so
            assert guess.rough == ((task.id, profile) not in costs.MEASURED)


def test_the_last_run_here_wins_then_the_measurement_then_the_scaled_one(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {("B", "quick"): 100.0})
    task = get_task("B")
    last = costs.estimate(task, "quick", "cpu", last_seconds=42.0)
    assert (last.seconds, last.source, last.rough) == (42.0, "the last run on cpu", False)
    measured = costs.estimate(task, "quick", "cuda")
    assert measured.seconds == 100.0 and "measured on a 2-core CPU" in measured.source
    assert "not run on cuda yet" in measured.source
    scaled = costs.estimate(task, "full", "cpu")
    ratio = task.settings.profile("full").work() / task.settings.profile("quick").work()
    assert ratio == 320 and scaled.rough and scaled.seconds == pytest.approx(100.0 * 320)
    assert "quick's time × 320 the work" in scaled.source and "rough" in scaled.source


def test_no_measurement_and_no_work_size_is_no_estimate(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {("S", "quick"): 3.0})
    assert costs.estimate(get_task("S"), "full", "cpu") is None  # S states no work size
    assert costs.estimate(get_task("C3"), "quick", "cpu") is None


def test_overridden_settings_scale_the_figure_by_their_work_where_the_task_defines_it(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {("C2", "quick"): 20.0, ("S", "quick"): 3.0})
    task = get_task("C2")
    quick = task.settings.profile("quick")
    assert costs.estimate(task, "quick", "cpu", settings=quick) == costs.estimate(task, "quick", "cpu")
    reseeded = quick.with_overrides(7, [])  # another seed is the same work
    assert costs.estimate(task, "quick", "cpu", settings=reseeded).seconds == 20.0
    smaller = quick.with_overrides(None, [f"n={quick.n // 4}"])
    guess = costs.estimate(task, "quick", "cpu", last_seconds=8.0, settings=smaller)
    assert guess.rough and guess.seconds == pytest.approx(2.0)
    assert guess.source == "rough, for these settings: × 0.25 the work of quick, from the last run on cpu"
    s = get_task("S")
    fewer = s.settings.profile("quick").with_overrides(None, ["anchors=2"])
    kept = costs.estimate(s, "quick", "cpu", settings=fewer)
    assert kept.seconds == 3.0 and kept.source.endswith("; not scaled for these settings")
