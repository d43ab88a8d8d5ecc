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


def test_the_run_here_wins_then_the_measurement_then_the_scaled_one():
    task = get_task("B")
    quick = costs.MEASURED[("B", "quick")]  # B's full profile is not measured (weeks on a CPU)
    assert ("B", "full") not in costs.MEASURED
    last = costs.estimate(task, "quick", "cpu", last_seconds=42.0)
    assert (last.seconds, last.source, last.rough) == (42.0, "the slowest run on cpu", False)
    measured = costs.estimate(task, "quick", "cuda")
    assert measured.seconds == quick and "measured on a 2-core CPU" in measured.source
    assert "not run on cuda yet" in measured.source
    scaled = costs.estimate(task, "full", "cpu")
    ratio = task.settings.profile("full").work() / task.settings.profile("quick").work()
    assert ratio == 320 and scaled.rough and scaled.seconds == pytest.approx(quick * 320)
    assert "quick's time × 320 the work" in scaled.source and "rough" in scaled.source


def test_full_is_never_shown_below_quick():
    quick, full = costs.MEASURED[("C1", "quick")], costs.MEASURED[("C1", "full")]
    assert full < quick  # as measured: C1's full run took less than its quick one
    guesses = costs.estimates(get_task("C1"), "cpu")
    assert guesses["full"].seconds == quick and guesses["full"].rough
    assert guesses["full"].source == "at least quick's: measured on a 2-core CPU"


def test_a_run_here_of_one_profile_rescales_the_others_measurement():
    """The audit: S quick said ≈0:02 and took 12 s; full then read ≈0:04 beside quick's 0:12."""
    quick, full = costs.MEASURED[("S", "quick")], costs.MEASURED[("S", "full")]
    runs = {"quick": 6.0 * quick, "full": None}  # quick ran 6 times slower here
    guesses = costs.estimates(get_task("S"), "cpu", runs.get)
    assert guesses["quick"].seconds == 6.0 * quick
    assert guesses["full"].seconds == pytest.approx(6.0 * full) and guesses["full"].rough
    assert guesses["full"].source == (
        f"measured on a 2-core CPU, × 6 as quick took {6 * quick:.0f} s on cpu against {quick:.0f} s there"
    )


def test_no_measurement_is_no_estimate(monkeypatch):
    monkeypatch.setattr(costs, "MEASURED", {})
    for task in all_tasks():
        assert costs.estimates(task, "cpu") == {"quick": None, "full": None}


def test_overridden_settings_scale_the_figure_by_their_work():
    task = get_task("C2")
    measured = costs.MEASURED[("C2", "quick")]
    quick = task.settings.profile("quick")
    assert costs.estimate(task, "quick", "cpu", settings=quick) == costs.estimate(task, "quick", "cpu")
    reseeded = quick.with_overrides(7, [])  # another seed is the same work
    assert costs.estimate(task, "quick", "cpu", settings=reseeded).seconds == measured
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
        costs.MEASURED[("S", "quick")] * ratio
    )
