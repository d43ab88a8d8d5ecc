"""Bootstrap confidence intervals over inputs: is a difference between two paths larger than
the luck of which inputs were drawn?

Both paths ran on the same inputs, so one resample (inputs drawn with replacement, as many
as there were) is applied to both, and the statistic of interest is the difference fused −
eager. Its interval is the 2.5th to 97.5th percentile over :data:`RESAMPLES` resamples
(percentile bootstrap). A P99 difference is *beyond noise* when that interval excludes 0;
a max, when one path's is the larger in at least 97.5% of half-samples (:func:`compare`
says why).

P99 is the ``inverted_cdf`` percentile over every element of every resampled input (an
input drawn twice counts twice). It needs only each input's largest values: an input keeps
its top :data:`TOP_SHARE` of elements (:class:`InputTops`); a resample whose P99 falls
below what some input did not keep cannot be bounded and gives no interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Resamples per interval.
RESAMPLES = 1000
#: Share of each input's elements kept for P99 (P99 needs the top 1% of the pool; an input
#: must weigh three times its share in a resample before its kept values run out).
TOP_SHARE = 0.03
#: Resample rows × kept values handled at once (bounds the memory of one step).
BLOCK = 1 << 22


@dataclass
class InputTops:
    """The largest values of each input of one path, and each input's maximum and size."""

    values: list[np.ndarray] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    def add(self, errors: np.ndarray) -> None:
        """One input's finite errors (any order)."""
        e = np.asarray(errors, dtype=np.float64).reshape(-1)
        keep = min(e.size, math.ceil(TOP_SHARE * e.size) + 1)
        self.values.append(np.sort(np.partition(e, e.size - keep)[e.size - keep :]) if keep else e[:0])
        self.sizes.append(int(e.size))

    def maxima(self) -> np.ndarray:
        return np.array([v[-1] if v.size else -np.inf for v in self.values])


def _p99(tops: InputTops, counts: np.ndarray, q: float) -> np.ndarray:
    """The ``q`` quantile (``inverted_cdf``) of each resample (rows of ``counts``: how often
    each input was drawn); NaN where the kept values do not decide it."""
    values = np.concatenate(tops.values)
    owner = np.concatenate([np.full(v.size, i) for i, v in enumerate(tops.values)])
    order = np.argsort(values, kind="stable")[::-1]
    values, owner = values[order], owner[order]
    sizes = np.asarray(tops.sizes, dtype=np.int64)
    smallest_kept = np.array([v[0] if v.size else np.inf for v in tops.values])
    truncated = np.array([v.size < n for v, n in zip(tops.values, tops.sizes)])
    out = np.full(len(counts), np.nan)
    rows = max(1, BLOCK // max(values.size, 1))
    for lo in range(0, len(counts), rows):
        c = counts[lo : lo + rows]
        total = c @ sizes
        rank = total - np.ceil(q * total).astype(np.int64) + 1  # from the top, 1-based
        cum = np.cumsum(c[:, owner], axis=1)
        at = np.array([np.searchsorted(row, k) for row, k in zip(cum, rank)])
        found = (total > 0) & (at < values.size)
        v = np.where(found, values[np.minimum(at, values.size - 1)], np.nan)
        # an input drawn here whose kept values all lie above v may hide more values above v
        hidden = ((c > 0) & truncated & (smallest_kept > v[:, None])).any(axis=1)
        out[lo : lo + rows] = np.where(found & ~hidden, v, np.nan)
    return out


def _interval(x: np.ndarray) -> list[float] | None:
    if np.isnan(x).any():
        return None
    lo, hi = np.percentile(x, [2.5, 97.5])
    return [float(lo), float(hi)]


def _half_samples(maxima_e: np.ndarray, maxima_f: np.ndarray, rng: np.random.Generator) -> float:
    """The share of half-samples (half the inputs, drawn without replacement) in which
    fused's maximum exceeds eager's; ties count half."""
    m = len(maxima_e)
    chosen = np.argsort(rng.random((RESAMPLES, m)), axis=1)[:, : max(1, m // 2)]
    e, f = maxima_e[chosen].max(axis=1), maxima_f[chosen].max(axis=1)
    return float(np.mean(f > e) + 0.5 * np.mean(f == e))


def compare(eager: InputTops, fused: InputTops, seed: int, q: float = 0.99) -> dict[str, Any]:
    """Paired intervals of P99 and max for both paths and their difference (fused − eager),
    and the row's class: ``worse beyond noise`` when the P99 difference's interval lies above
    0 or fused's max is the larger in at least 97.5% of half-samples, ``better beyond noise``
    the other way round (and not worse), else ``within noise``.

    The max is judged on half-samples, not on its bootstrap interval: a resample holds the
    sample's largest input two times in three, so the interval of a maximum is narrow and
    would call the gap between two alike maxima real."""
    rng = np.random.default_rng(seed)
    m = len(eager.sizes)
    counts = rng.multinomial(m, np.full(m, 1.0 / m), size=RESAMPLES)
    out: dict[str, Any] = {"resamples": RESAMPLES}
    for name, stat in (
        ("p99_ulp", lambda t: _p99(t, counts, q)),
        ("max_ulp", lambda t: np.where(counts > 0, t.maxima(), -np.inf).max(axis=1)),
    ):
        e, f = stat(eager), stat(fused)
        out[name] = {"eager": _interval(e), "fused": _interval(f), "difference": _interval(f - e)}
    share = _half_samples(eager.maxima(), fused.maxima(), rng)
    out["max_ulp"]["half_samples_fused_larger"] = share
    p99 = out["p99_ulp"]["difference"]
    if (p99 is not None and p99[0] > 0) or share >= 0.975:
        out["class"] = "worse beyond noise"
    elif (p99 is not None and p99[1] < 0) or share <= 0.025:
        out["class"] = "better beyond noise"
    else:
        out["class"] = "within noise"
    return out
