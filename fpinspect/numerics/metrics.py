"""The comparison metrics engineers already know, as numbers: the reference script's trio
(``fusion_precision_analyzer.py``'s formulas, over all elements), msaccucmp's set and msprobe's
thousandth ratios (over the elements finite on both sides), each defined once in :data:`METRICS`.

They come from the statistics of one streaming pass (:class:`~fpinspect.numerics.stats.PairStats`);
KL divergence needs the value ranges first and takes a second compiled pass
(:mod:`~fpinspect.numerics.kl`), only when asked for. ``x`` is the array under test, ``y`` the
reference (golden / fusion-off side).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .stats import EPS32, EPS64, REF_GUARD, PairStats, accumulate


@dataclass(frozen=True)
class Metric:
    name: str
    definition: str
    compute: Callable[[PairStats], float | None]
    #: Direction of "better": +1 if larger is better (cosine), -1 if smaller is better.
    better: int = -1


def _safe(fn):
    """``fn`` returning a float, or ``None`` (also for a division by zero: the statistics are
    Python numbers, whose arithmetic raises instead of warning)."""

    def guarded(s: PairStats):
        try:
            v = fn(s)
        except ZeroDivisionError:
            return None
        return None if v is None else float(v)

    return guarded


def _cosine(s: PairStats):
    if not s.count:
        return None
    return s.script_dot / (math.sqrt(s.script_sum_sq_x) * math.sqrt(s.script_sum_sq_y) + REF_GUARD)


def _red(s: PairStats):
    if not s.finite:
        return None
    norm_y = math.sqrt(s.sum_sq_ref)
    return 0.0 if norm_y <= EPS64 else math.sqrt(s.sum_sq_diff / s.sum_sq_ref)


def _per_finite(total: float, s: PairStats):
    return total / s.finite if s.finite else None


def _std(m2: float, s: PairStats):
    """Population standard deviation from a side's sum of squared deviations."""
    return math.sqrt(m2 / s.finite) if s.finite else None


_DEFS = [
    Metric("cosine", "dot(x, y) / (||x|| * ||y|| + 1e-8), all elements (reference script)", _cosine, +1),
    Metric("max_abs", "max |x - y|, all elements (reference script)", lambda s: s.script_max_abs),
    Metric(
        "max_rel",
        "max(|x - y| / (max(|x|, |y|) + 1e-8)), all elements (reference script)",
        lambda s: s.script_max_rel,
    ),
    Metric(
        "rmse", "sqrt(mean((x - y)^2))", lambda s: math.sqrt(s.sum_sq_diff / s.finite) if s.finite else None
    ),
    Metric("mean_abs", "mean |x - y|", lambda s: _per_finite(s.sum_abs_diff, s)),
    Metric(
        "mean_rel",
        "mean over all elements of |x/y - 1| (0 where |y| <= eps) (msaccucmp)",
        lambda s: _per_finite(s.msaccucmp_sum_rel, s),
    ),
    Metric(
        "accumulated_rel",
        "sum of |x/y - 1| where |y| > eps (msaccucmp)",
        lambda s: s.msaccucmp_sum_rel if s.finite else None,
    ),
    Metric(
        "max_rel_msaccucmp",
        "max |x/y - 1| where |y| > eps (msaccucmp)",
        lambda s: s.msaccucmp_max_rel if s.finite else None,
    ),
    Metric("red", "relative Euclidean distance sqrt(sum (x-y)^2 / sum y^2) (msaccucmp)", _red),
    Metric("mean_x", "mean of x", lambda s: s.mean_x if s.finite else None, 0),
    Metric("std_x", "population standard deviation of x", lambda s: _std(s.m2_x, s), 0),
    Metric("mean_y", "mean of y", lambda s: s.mean_y if s.finite else None, 0),
    Metric("std_y", "population standard deviation of y", lambda s: _std(s.m2_y, s), 0),
    Metric(
        "one_thousandth",
        "share of elements with |x - y| / |y| < 0.001 (msprobe)",
        lambda s: _per_finite(s.below_one_thousandth, s),
        +1,
    ),
    Metric(
        "five_thousandth",
        "share of elements with |x - y| / |y| < 0.005 (msprobe)",
        lambda s: _per_finite(s.below_five_thousandths, s),
        +1,
    ),
]

#: All one-pass metrics by name, in report order. ``kl`` is added by :func:`pair_metrics`.
METRICS: dict[str, Metric] = {m.name: Metric(m.name, m.definition, _safe(m.compute), m.better) for m in _DEFS}
KL_DEFINITION = (
    "KL(p || q): each side min-max scaled to [0, 1], clipped below at float32 eps, normalised "
    "to sum 1 (msaccucmp)"
)


def metrics_from_stats(s: PairStats) -> dict[str, float | None]:
    return {name: m.compute(s) for name, m in METRICS.items()}


def pair_metrics(x, y, *, kl: bool = True, jobs: int = 1) -> dict[str, float | None]:
    """Every named metric of ``x`` against the reference ``y`` (equal element counts)."""
    s = accumulate(x, y, jobs=jobs, kl=kl)
    out = metrics_from_stats(s)
    if kl:
        out["kl"] = s.kl
    return out


def _one(name: str):
    def fn(x, y) -> float | None:
        return METRICS[name].compute(accumulate(np.asarray(x), np.asarray(y)))

    fn.__name__ = name
    fn.__doc__ = METRICS[name].definition
    return fn


cosine_similarity = _one("cosine")
max_abs_error = _one("max_abs")
max_rel_error = _one("max_rel")
rmse = _one("rmse")
mean_abs_error = _one("mean_abs")
mean_rel_error = _one("mean_rel")
accumulated_rel_error = _one("accumulated_rel")
relative_euclidean_distance = _one("red")


def kl_divergence(x, y) -> float | None:
    """msaccucmp's KL divergence of ``x`` (as p) against ``y`` (as q)."""
    return accumulate(np.asarray(x), np.asarray(y), kl=True).kl


def standard_deviations(x, y) -> dict[str, float | None]:
    """Means and population standard deviations of both sides (msaccucmp's StandardDeviation)."""
    s = accumulate(np.asarray(x), np.asarray(y))
    return {k: METRICS[k].compute(s) for k in ("mean_x", "std_x", "mean_y", "std_y")}


def thousandth_ratio(x, y, threshold: float = 0.001) -> float | None:
    """Share of elements whose relative error ``|x - y| / |y|`` is below ``threshold``.

    ``threshold`` 0.001 and 0.005 are msprobe's one- and five-thousandth ratios.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    fin = np.isfinite(x) & np.isfinite(y)
    x, y = x[fin], y[fin]
    if x.size == 0:
        return None
    ay = np.abs(y)
    re = np.abs(x - y) / np.where(ay == 0, EPS32, ay)
    return float(np.count_nonzero(re < threshold) / x.size)
