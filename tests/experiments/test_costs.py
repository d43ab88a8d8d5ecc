"""The cost shown for a profile before it runs: the slowest run of its settings here, else the
measured table (scaled by how this device ran the other profile), else the other profile's
measurement scaled by the work ratio (said to be rough); full never below quick."""

from __future__ import annotations

import pytest

from fpinspect.experiments import costs
from fpinspect.experiments.registry import all_tasks, get_task
from fpinspect.experiments.settings import PROFILES


def test_every_task_has_a_measured_quick_profile_and_every_profile_an_estimate():
    for task in all_tasks():
        assert (task.id, "quick") in costs.MEASURED, task.id
        guesses = costs.estimates(task, "cpu")
        for profile in PROFILES:
            guess = guesses[profile]
            assert guess is not None and guess.seconds > 0, (task.id, profile)
            # a figure that is not measured says so
            assert guess.rough or (task.id, profile) in costs.MEASURED
        assert guesses["full"].seconds >= guesses["quick"].seconds, task.id


def test_the_run_here_wins_then_the_measurement_then_the_scaled_one(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {("B", "quick"): 100.0})
    task = get_task("B")
    last = costs.estimate(task, "quick", "cpu", last_seconds=42.0)
    assert (last.seconds, last.source, last.rough) == (42.0, "the slowest run on cpu", False)
    measured = costs.estimate(task, "quick", "cuda")
    assert measured.seconds == 100.0 and "measured on a 2-core CPU" in measured.source
    assert "not run on cuda yet" in measured.source
    scaled = costs.estimate(task, "full", "cpu")
    ratio = task.settings.profile("full").work() / task.settings.profile("quick").work()
    assert ratio == 320 and scaled.rough and scaled.seconds == pytest.approx(100.0 * 320)
    assert "quick's time × 320 the work" in scaled.source and "rough" in scaled.source


def test_full_is_never_shown_below_quick(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {("C1", "quick"): 11.0, ("C1", "full"): 9.0})
    guesses = costs.estimates(get_task("C1"), "cpu")
    assert guesses["full"].seconds == 11.0 and guesses["full"].rough
    assert guesses["full"].source == "at least quick's: measured on a 2-core CPU"


def test_a_run_here_of_one_profile_rescales_the_others_measurement(monkeypatch):
    """The audit: S quick said ≈0:02 and took 12 s; full then read ≈0:04 beside quick's 0:12."""
    monkeypatch.setattr(costs, "MEASURED", {("S", "quick"): 2.0, ("S", "full"): 4.0})
    runs = {"quick": 12.0, "full": None}
    guesses = costs.estimates(get_task("S"), "cpu", runs.get)
    assert guesses["quick"].seconds == 12.0
    assert guesses["full"].seconds == pytest.approx(24.0) and guesses["full"].rough
    assert (
        guesses["full"].source == "measured on a 2-core CPU, × 6 as quick took 12 s on cpu against 2 s there"
    )


def test_no_measurement_is_no_estimate(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {})
    for task in all_tasks():
        assert costs.estimates(task, "cpu") == {"quick": None, "full": None}


def test_overridden_settings_scale_the_figure_by_their_work(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {("C2", "quick"): 20.0, ("S", "quick"): 3.0})
    task = get_task("C2")
    quick = task.settings.profile("quick")
    assert costs.estimate(task, "quick", "cpu", settings=quick) == costs.estimate(task, "quick", "cpu")
    reseeded = quick.with_overrides(7, [])  # another seed is the same work
    assert costs.estimate(task, "quick", "cpu", settings=reseeded).seconds == 20.0
    smaller = quick.with_overrides(None, [f"n={quick.n // 4}"])
    guess = costs.estimate(task, "quick", "cpu", last_seconds=8.0, settings=smaller)
    assert guess.rough and guess.seconds == pytest.approx(2.0)
    assert guess.source == (
        "rough, for these settings: × 0.25 the work of quick, from the slowest run on cpu"
    )
    s = get_task("S")
    quick_s = s.settings.profile("quick")
    more = quick_s.with_overrides(None, ["float32_pairs=100000000"])
    ratio = more.work() / quick_s.work()
    assert ratio > 40 and costs.estimate(s, "quick", "cpu", settings=more).seconds == pytest.approx(
        3.0 * ratio
    )
