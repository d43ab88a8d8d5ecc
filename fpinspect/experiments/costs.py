"""What a run of a task costs before it runs, and where that figure comes from.

In order of preference: the newest finished run of the same task, device and profile kept
here; else the time measured for that task and profile on the reference machine
(:data:`MEASURED`); else the measured time of the task's other profile scaled by the ratio
of their :meth:`~.settings.TaskSettings.work` (for the full profiles that take far too long
on a CPU to be measured: a rough figure, said to be one). Settings overridden in the Tasks
pane's form scale that figure by their work the same way (:func:`estimate`).
"""

from __future__ import annotations

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


def estimate(
    task: Task,
    profile: str,
    device: str,
    last_seconds: float | None = None,
    settings: TaskSettings | None = None,
) -> Estimate | None:
    """The cost of running ``task`` with ``profile`` on ``device`` (``last_seconds``: how long
    its newest kept run there took, if any); None when nothing is known.

    ``settings``: the settings the run will have, when overrides may have changed the
    profile's. Where they differ and the task defines ``work()``, the profile's figure is
    scaled by ``settings.work() / profile.work()`` and marked rough, for these settings; where
    the task defines no work size, the profile's figure stays and says it is not scaled."""
    guess = _profile_estimate(task, profile, device, last_seconds)
    base_settings = task.settings.profile(profile)
    if guess is None or settings is None or settings == base_settings:
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


def ratio_text(ratio: float) -> str:
    """A work ratio as people read it: ``320``, ``1,536``, ``2.5``, ``0.031``."""
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.2g}"


def _profile_estimate(task: Task, profile: str, device: str, last_seconds: float | None) -> Estimate | None:
    if last_seconds:
        return Estimate(last_seconds, f"the last run on {device}")
    here = "" if device == "cpu" else f"; not run on {device} yet"
    measured = MEASURED.get((task.id, profile))
    if measured is not None:
        return Estimate(measured, f"measured on {REFERENCE}{here}")
    work = task.settings.profile(profile).work()
    for other in PROFILES:
        base = MEASURED.get((task.id, other))
        other_work = task.settings.profile(other).work()
        if other != profile and base is not None and work and other_work:
            ratio = work / other_work
            return Estimate(
                base * ratio,
                f"{other}'s time × {ratio:,.0f} the work on {REFERENCE}; rough{here}",
                rough=True,
            )
    return None
