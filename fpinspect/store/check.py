"""A run against a baseline: per figure, its change and whether that is beyond noise.

The baseline's runs of the same task, settings hash and device class are the reference.
With several of them, a figure's reference is their mean and its noise three standard
deviations of their spread (no spread: no noise); with one, the noise is the figure's
stated tolerance (``rel`` × |baseline| + ``abs``, :mod:`.figures`). ``exact`` figures have no
noise. Which side of the noise regresses follows the figure's rule.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .database import ResultsDB, StoredRun, StoreError
from .figures import Rule

#: Statuses of a figure; only ``regressed`` fails a check.
REGRESSED, IMPROVED, WITHIN_NOISE, UNCHANGED = "regressed", "improved", "within noise", "unchanged"


@dataclass(frozen=True)
class FigureCheck:
    name: str
    rule: Rule
    baseline: float | None
    current: float | None
    #: How much the figure may move either way before it counts (None: not a number).
    allowed: float | None
    #: Where ``allowed`` comes from, in words.
    noise: str
    status: str

    @property
    def change(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline


@dataclass(frozen=True)
class CheckResult:
    baseline_name: str
    run: StoredRun
    baseline_runs: list[StoredRun]
    figures: list[FigureCheck]

    @property
    def regressed(self) -> list[FigureCheck]:
        return [f for f in self.figures if f.status == REGRESSED]


def _noise(rule: Rule, values: list[float]) -> tuple[float, str]:
    if rule.direction == "exact":
        return 0.0, "none: any change regresses"
    if len(values) > 1:
        return 3 * statistics.stdev(values), f"3 standard deviations of {len(values)} baseline runs"
    if not rule.rel and not rule.abs:
        return 0.0, "stated tolerance: none"
    return rule.rel * abs(values[0]) + rule.abs, f"stated tolerance {rule.rel:g} × baseline + {rule.abs:g}"


def judge(name: str, rule: Rule, baseline_values: list[float | None], current: float | None) -> FigureCheck:
    """One figure's check: ``baseline_values`` from each baseline run (None where missing)."""
    known = [v for v in baseline_values if v is not None]
    if not known or current is None:
        same = not known and current is None
        return FigureCheck(
            name,
            rule,
            statistics.fmean(known) if known else None,
            current,
            None,
            "not a number on one side" if not same else "not a number",
            UNCHANGED if same else REGRESSED,
        )
    reference = statistics.fmean(known)
    allowed, noise = _noise(rule, known)
    change = current - reference
    if change == 0 or (math.isinf(current) and current == reference):
        status = UNCHANGED
    elif rule.direction == "exact":
        status = REGRESSED
    elif abs(change) <= allowed:
        status = WITHIN_NOISE
    elif rule.direction == "either" or (change > 0) == (rule.direction == "lower"):
        status = REGRESSED
    else:
        status = IMPROVED
    return FigureCheck(name, rule, reference, current, allowed, noise, status)


def matching_baseline(db: ResultsDB, name: str, run: StoredRun) -> list[StoredRun]:
    """The runs of baseline ``name`` that ``run`` is compared with; a :class:`StoreError`
    naming what the baseline holds when none match."""
    runs = db.baseline(name)
    if not runs:
        known = ", ".join(db.baseline_names()) or "none"
        raise StoreError(f"there is no baseline {name!r} in {db.path} (baselines: {known}).")
    same = [
        r
        for r in runs
        if (r.task, r.settings_hash, r.device_class) == (run.task, run.settings_hash, run.device_class)
        and r.id != run.id
    ]
    if not same:
        held = "; ".join(
            sorted({f"task {r.task} settings {r.settings_hash} on {r.device_class}" for r in runs})
        )
        raise StoreError(
            f"baseline {name!r} holds no run of task {run.task} with settings {run.settings_hash} on "
            f"{run.device_class} to compare run {run.id} with (it holds: {held})."
        )
    return same


def check_run(db: ResultsDB, run: StoredRun, name: str) -> CheckResult:
    baseline_runs = matching_baseline(db, name, run)
    by_run = [{f.name: f for f in db.figures(r.id)} for r in baseline_runs]
    current = {f.name: f for f in db.figures(run.id)}
    names = list(dict.fromkeys([*(n for figs in by_run for n in figs), *current]))
    checks = []
    for figure in names:
        declared = next(figs[figure] for figs in (*by_run, current) if figure in figs)
        values = [figs[figure].value if figure in figs else None for figs in by_run]
        now = current[figure].value if figure in current else None
        checks.append(judge(figure, declared.rule, values, now))
    return CheckResult(name, run, baseline_runs, checks)


def newest_check(db: ResultsDB, run: StoredRun) -> CheckResult | None:
    """``run`` against the most recently tagged baseline that holds runs to compare it with;
    None when no baseline does."""
    for name in db.baseline_names():
        try:
            return check_run(db, run, name)
        except StoreError:
            continue
    return None


def latest_check(db: ResultsDB, task: str) -> CheckResult | None:
    """The newest run of ``task`` against the most recently tagged baseline that holds runs to
    compare it with (:func:`newest_check`); None when there is no such run or baseline."""
    runs = db.runs(task=task)
    return newest_check(db, runs[0]) if runs else None
