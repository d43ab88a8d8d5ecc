"""The comparison metrics engineers already know, as numbers: the reference script's trio
(``fusion_precision_analyzer.py``'s formulas, over all elements), msaccucmp's set and msprobe's
thousandth ratios (over the elements finite on both sides), each defined once in
:func:`metrics_from_stats`.

They come from the statistics of one streaming pass (:class:`~fpinspect.numerics.stats.PairStats`);
KL divergence needs the value ranges first and takes a second compiled pass
(:mod:`~fpinspect.numerics.kl`), only when asked for. ``x`` is the array under test, ``y`` the
reference (golden / fusion-off side).
"""

from __future__ import annotations

import math

import numpy as np

from .kernels import EPS64, REF_GUARD
from .stats import PairStats, accumulate


def metrics_from_stats(s: PairStats) -> dict[str, float | None]:
    """Every one-pass metric of a pair, by name, in report order; ``None`` where a metric has no
    elements to be computed over. The statistics are Python numbers: nothing here warns."""
    n = s.finite

    def per_element(total: float) -> float | None:
        return total / n if n else None

    return {
        # the reference script's trio, over all elements: a NaN or inf propagates as there
        "cosine": (
            s.script_dot / (math.sqrt(s.script_sum_sq_x) * math.sqrt(s.script_sum_sq_y) + REF_GUARD)
            if s.count
            else None
        ),
        "max_abs": s.script_max_abs,  # max |x - y|
        "max_rel": s.script_max_rel,  # max(|x - y| / (max(|x|, |y|) + 1e-8))
        "rmse": math.sqrt(s.sum_sq_diff / n) if n else None,  # sqrt(mean((x - y)^2))
        "mean_abs": per_element(s.sum_abs_diff),  # mean |x - y|
        # msaccucmp: |x/y - 1| where |y| > float64 eps, 0 elsewhere: its mean, sum and max
        "mean_rel": per_element(s.msaccucmp_sum_rel),
        "accumulated_rel": s.msaccucmp_sum_rel if n else None,
        "max_rel_msaccucmp": s.msaccucmp_max_rel if n else None,
        # msaccucmp's relative Euclidean distance, sqrt(sum (x - y)^2 / sum y^2)
        "red": (0.0 if math.sqrt(s.sum_sq_ref) <= EPS64 else math.sqrt(s.sum_sq_diff / s.sum_sq_ref))
        if n
        else None,
        # means and population standard deviations (msaccucmp's StandardDeviation)
        "mean_x": s.mean_x if n else None,
        "std_x": math.sqrt(s.m2_x / n) if n else None,
        "mean_y": s.mean_y if n else None,
        "std_y": math.sqrt(s.m2_y / n) if n else None,
        # msprobe: shares of elements with |x - y| / |y| below 0.001 and 0.005 (eps32 for y = 0)
        "one_thousandth": per_element(s.below_one_thousandth),
        "five_thousandth": per_element(s.below_five_thousandths),
    }


def pair_metrics(x, y, *, kl: bool = True, jobs: int = 1) -> dict[str, float | None]:
    """Every named metric of ``x`` against the reference ``y`` (equal element counts): those of
    :func:`metrics_from_stats`, and with ``kl`` msaccucmp's KL divergence (each side min-max
    scaled to [0, 1], clipped below at float32 eps, normalised to sum 1)."""
    s = accumulate(np.asarray(x), np.asarray(y), jobs=jobs, kl=kl)
    out = metrics_from_stats(s)
    if kl:
        out["kl"] = s.kl
    return out
