"""What a run of a task costs before it runs, and where that figure comes from.

Each profile's figure, in order of preference: the slowest finished run of exactly that
profile's settings on this device; else the time measured for that task and profile on the
reference machine (:data:`MEASURED`), scaled by how much slower or faster this device ran
another profile than the reference did; else the measured time of the task's other profile
scaled by the ratio of their :meth:`~.settings.TaskSettings.work` (a rough figure, said to
be one). A profile with more work is never shown below one with less (:func:`estimates`).
Overridden settings scale their profile's figure by their work the same way; a figure is
never below a run of the same settings on this device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .settings import PROFILES, TaskSettings
from .task import Task

#: The machine :data:`MEASURED` was measured on.
REFERENCE = "a 2-core CPU"
#: Wall seconds of one run on the cpu device of :data:`REFERENCE` (2 AMD EPYC cores shared
#: with other work; Inductor's compile cache empty at first, as on a new machine), one run
#: each, measured on 2026-12-01 with ``benchmarks/measure_costs.py``; the load average
#: before and after is in the comments. The other full profiles are scaled (A, B, D and E:
#: an hour to weeks by the work ratio, too long to measure on a CPU; C2: minutes, not measured
#: for want of time).
MEASURED: dict[tuple[str, str], float] = {
    ("S", "quick"): 2,  # load 2.8 -> 2.7
    ("S", "full"): 4,  # load 2.7 -> 2.7
    ("A", "quick"): 30,  # load 2.7 -> 2.6
    ("C1", "quick"): 11,  # load 2.6 -> 2.5
    ("C1", "full"): 9,  # load 2.5 -> 2.4
    ("C2", "quick"): 22,  # load 2.4 -> 2.7
    ("C3", "quick"): 17,  # load 2.7 -> 2.9
    ("C3", "full"): 20,  # load 2.9 -> 3.4
    ("D", "quick"): 55,  # load 3.4 -> 3.4
    ("B", "quick"): 103,  # load 3.4 -> 4.4
    ("E", "quick"): 118,  # load 4.4 -> 4.1
}


@dataclass(frozen=True)
class Estimate:
    """``seconds`` of one run, and ``source``: where that figure comes from, as people read it."""

    seconds: float
    source: str
    #: Scaled from another profile's measurement rather than measured.
    rough: bool = False


def estimates(
    task: Task,
    device: str,
    last_seconds: Callable[[str], float | None] = lambda profile: None,
    profile: str | None = None,
    settings: TaskSettings | None = None,
) -> dict[str, Estimate | None]:
    """Every profile's cost on ``device`` (``last_seconds(p)``: the slowest finished run of
    profile ``p``'s own settings kept on this device, if any); None where nothing is known.

    ``settings``: what ``profile`` will run with, when overrides may have changed it; its
    figure is then scaled by ``settings.work() / profile.work()`` and marked rough."""
    runs = {p: last_seconds(p) for p in PROFILES}
    guesses = {p: _profile_estimate(task, p, device, runs) for p in PROFILES}
    quick, full = guesses["quick"], guesses["full"]
    if quick is not None and full is not None and full.seconds < quick.seconds:
        # full is the plan's own settings, quick a scaled-down copy: never cheaper
        guesses["full"] = Estimate(quick.seconds, f"at least quick's: {quick.source}", rough=True)
    if profile is not None and settings is not None:
        guesses[profile] = _for_settings(task, profile, guesses[profile], settings)
    return guesses


def estimate(
    task: Task,
    profile: str,
    device: str,
    last_seconds: float | None = None,
    settings: TaskSettings | None = None,
) -> Estimate | None:
    """The cost of running ``task`` with ``profile`` on ``device`` (``last_seconds``: its
    slowest kept run there, if any); see :func:`estimates`."""
    return estimates(task, device, lambda p: last_seconds if p == profile else None, profile, settings)[
        profile
    ]


def _for_settings(
    task: Task, profile: str, guess: Estimate | None, settings: TaskSettings
) -> Estimate | None:
    base_settings = task.settings.profile(profile)
    if guess is None or settings == base_settings:
        return guess
    work, base_work = settings.work(), base_settings.work()
    if not work or not base_work:
        return Estimate(guess.seconds, f"{guess.source}; not scaled for these settings", guess.rough)
    if work == base_work:
        return guess
    ratio = work / base_work
    return Estimate(
        guess.seconds * ratio,
        f"rough, for these settings: × {ratio_text(ratio)} the work of {profile}, from {guess.source}",
        rough=True,
    )


def work_ratio(task: Task, settings: TaskSettings) -> float | None:
    """How many times the work of the plan's own (full) settings ``settings`` ask for; None
    where the task states no work size."""
    work, full = settings.work(), task.settings.profile("full").work()
    return work / full if work is not None and full else None


def ratio_text(ratio: float) -> str:
    """A work ratio as people read it: ``320``, ``1,536``, ``2.5``, ``0.031``."""
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.2g}"


def _profile_estimate(
    task: Task, profile: str, device: str, runs: dict[str, float | None]
) -> Estimate | None:
    if runs[profile]:
        return Estimate(runs[profile], f"the slowest run on {device}")
    reference = _reference(task, profile)
    if reference is None:
        return None
    for other in PROFILES:
        there = _reference(task, other)
        if other != profile and runs[other] and there is not None and not there.rough:
            factor = runs[other] / there.seconds
            return Estimate(
                reference.seconds * factor,
                f"{reference.source}, × {factor:.2g} as {other} took {runs[other]:.0f} s on {device} "
                f"against {there.seconds:.0f} s there",
                rough=True,
            )
    here = "" if device == "cpu" else f"; not run on {device} yet"
    return Estimate(reference.seconds, f"{reference.source}{here}", reference.rough)


def _reference(task: Task, profile: str) -> Estimate | None:
    """The figure of the reference machine: measured, or the other profile's scaled by work."""
    measured = MEASURED.get((task.id, profile))
    if measured is not None:
        return Estimate(measured, f"measured on {REFERENCE}")
    work = task.settings.profile(profile).work()
    for other in PROFILES:
        base = MEASURED.get((task.id, other))
        other_work = task.settings.profile(other).work()
        if other != profile and base is not None and work and other_work:
            ratio = work / other_work
            return Estimate(
                base * ratio,
                f"{other}'s time × {ratio_text(ratio)} the work on {REFERENCE}; rough",
                rough=True,
            )
    return None
