"""The numbers behind the drill-down view of one compared pair.

* :func:`ulp_bins` — the ULP errors of a compared pair in log2-spaced bins, read from the
  statistics the comparison already collected (no second pass over the data).
* :func:`error_profile` — where along each axis the errors concentrate (by row, by
  channel ...): one streaming pass over both tensors in chunks, bounded memory, stoppable.

Pure numpy: the terminal app renders what these return.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...numerics import INF_MISMATCH, NAN_MISMATCH, ulp_diff, ulp_error
from ...numerics.chunks import iter_chunks
from ...numerics.stats import PairStats
from .pair import as_shape

#: An element counts as "off" when its ULP error is above this (an integer distance of 2 or
#: more), or when it is a NaN / infinity on one side only.
OFF_ULP = 1.0


# --------------------------------------------------------------------------- histogram


@dataclass(frozen=True)
class UlpBins:
    """Counts of ULP errors in log2-spaced bins.

    Bin 0 holds the errors exactly 0. For integer distances (both sides of one format) bin
    ``i >= 1`` holds ``[2**(i-1), 2**i)``: ``1``, ``2-3``, ``4-7`` ... For real-valued
    errors (the sides differ in format) bin 1 holds ``(0, 1)`` and bin ``i >= 2`` holds
    ``[2**(i-2), 2**(i-1))``. ``lower[i]`` is the lower edge of bin ``i``. Only elements
    finite on both sides are counted. ``exact`` is False when the counts come from a
    bounded-memory sketch (real-valued errors of very large tensors).
    """

    counts: np.ndarray
    lower: tuple[float, ...]
    integer: bool
    exact: bool

    @property
    def total(self) -> int:
        return int(self.counts.sum())


def _trim(counts: np.ndarray, keep: int) -> np.ndarray:
    nonzero = np.flatnonzero(counts)
    end = max(keep, int(nonzero[-1]) + 1 if nonzero.size else 0)
    return counts[:end]


def ulp_bins(stats: PairStats) -> UlpBins:
    """The ULP error histogram of a finished comparison (trailing empty bins dropped)."""
    if stats.same:
        h = stats.ulp_hist
        # exact[0] is 0 ULP; exact[2**j : 2**(j+1)] for j = 0..15; log[k] is [2**k, 2**(k+1)) for k >= 16
        n_exact = h.exact.size.bit_length() - 1
        groups = [h.exact[0]] + [h.exact[1 << j : 1 << (j + 1)].sum() for j in range(n_exact)]
        counts = np.concatenate([np.asarray(groups, dtype=np.int64), h.log[n_exact:]])
        counts = _trim(counts, 2)
        lower = (0.0,) + tuple(float(1 << j) for j in range(counts.size - 1))
        return UlpBins(counts, lower, integer=True, exact=True)
    q = stats.ulp_quantiles
    if q.values is not None:
        v = np.concatenate(q.values) if q.values else np.empty(0)
        big = v[v >= 1]
        counts = _real_counts(
            int(np.count_nonzero(v == 0)),
            int(np.count_nonzero((v > 0) & (v < 1))),
            np.frexp(big)[1] - 1,
            np.ones(big.size, np.int64),
        )
    else:
        # sketch bucket key >> 7 is the biased float64 exponent E: values in [2**(E-1023), 2**(E-1022))
        keys = np.flatnonzero(q.buckets)
        exps = (keys >> q.MANT_BITS) - 1023
        weights = q.buckets[keys]
        big = exps >= 0
        counts = _real_counts(
            int(weights[keys == 0].sum()), int(weights[(keys != 0) & ~big].sum()), exps[big], weights[big]
        )
    counts = _trim(counts, 3)
    lower = (0.0, 0.0) + tuple(float(2.0**j) for j in range(counts.size - 2))
    return UlpBins(counts, lower, integer=False, exact=q.exact)


def _real_counts(zero: int, below_one: int, exponents: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Bins ``[0, (0,1), [1,2), [2,4) ...]`` from the counts at 0 and in (0, 1), and the binary
    exponents (with their counts) of the values >= 1."""
    tail = np.bincount(exponents.astype(np.intp), weights=weights, minlength=1).astype(np.int64)
    return np.concatenate([np.asarray([zero, below_one], dtype=np.int64), tail])


# --------------------------------------------------------------------------- concentration

_LAYOUT_AXES = {"N": "batch", "C": "channel", "D": "depth", "H": "row", "W": "column"}
#: Plain layouts whose letters name the axes (``ND`` is the generic layout, not batch + depth).
_NAMED_LAYOUTS = frozenset({"NCHW", "NHWC", "HWCN", "CHWN", "NCDHW", "NDHWC", "DHWCN"})


def axis_names(ndim: int, layout: str | None = None) -> list[str]:
    """Readable names of the axes of a tensor in ``layout``.

    An image layout names each axis by its letter (``NCHW`` -> batch, channel, row, column).
    Otherwise the last axis is ``column`` and the one before ``row``; a 1-D tensor has one
    axis, ``element``; any others are ``axis k``.
    """
    letters = (layout or "").partition(":")[0].upper()
    if letters in _NAMED_LAYOUTS and len(letters) == ndim:
        return [_LAYOUT_AXES[c] for c in letters]
    if ndim == 1:
        return ["element"]
    names = [f"axis {k}" for k in range(ndim)]
    if ndim >= 2:
        names[-2:] = ["row", "column"]
    return names


@dataclass(frozen=True)
class Hotspot:
    """A stretch of one axis: positions ``[start, stop)``, its share of all off elements,
    and the share of its own elements that are off."""

    start: int
    stop: int
    share: float
    density: float


@dataclass
class AxisProfile:
    """Error counts along one axis. Positions are grouped ``group`` at a time into bins
    when the axis is longer than the bin limit."""

    axis: int
    name: str
    size: int
    group: int
    elements: np.ndarray  #: per bin: elements
    off: np.ndarray  #: per bin: elements off by more than :data:`OFF_ULP` (or NaN / inf on one side)
    error_sum: np.ndarray  #: per bin: sum of the ULP errors of elements finite on both sides

    def mean_error(self) -> np.ndarray:
        """Mean ULP error per bin; special-value mismatches count 0 here (they are in ``off``)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nan_to_num(self.error_sum / self.elements)

    def hotspots(self, k: int = 3) -> list[Hotspot]:
        """The ``k`` bins holding most off elements (fewer if fewer bins hold any)."""
        total = int(self.off.sum())
        if total == 0:
            return []
        order = np.lexsort((np.arange(self.off.size), -self.off))[:k]
        return [
            Hotspot(
                int(i) * self.group,
                min(self.size, (int(i) + 1) * self.group),
                int(self.off[i]) / total,
                int(self.off[i]) / max(1, int(self.elements[i])),
            )
            for i in order
            if self.off[i] > 0
        ]

    def spread(self) -> float:
        """Share of the bins holding at least one off element."""
        return float(np.count_nonzero(self.off)) / self.off.size if self.off.size else 0.0


@dataclass
class ErrorProfile:
    shape: tuple[int, ...]
    elements: int
    off: int  #: elements off by more than :data:`OFF_ULP`, special-value mismatches included
    axes: list[AxisProfile]


def _chunk_errors(ca: np.ndarray, cb: np.ndarray, stats: PairStats) -> tuple[np.ndarray, np.ndarray]:
    """``(ULP error with 0 at special values, special-value mismatch mask)`` of one chunk."""
    if stats.same:
        dist, status = ulp_diff(ca, cb, return_status=True)
        special = (status == NAN_MISMATCH) | (status == INF_MISMATCH)
        err = np.where(special, 0, dist).astype(np.float64)
        return err, special
    err = ulp_error(ca, cb.astype(np.float64), dtype=stats.fmt.dtype)
    special = ~np.isfinite(err)
    err[special] = 0.0
    return err, special


def error_profile(
    a,
    b,
    stats: PairStats,
    *,
    layout: str | None = None,
    max_bins: int = 1024,
    stop: Callable[[], bool] | None = None,
) -> ErrorProfile | None:
    """Where the errors of ``a`` against the reference ``b`` sit along each axis.

    ``a`` and ``b`` are the two compared tensors (arrays, memory maps, ``NpyFile`` or ``CastView``
    readers) and ``stats`` their finished :class:`PairStats`: its ``shape`` is the compared
    shape (the flat shape when the two shapes differed) and its format decides the ULP
    measure, as in the comparison: the integer ``ulp_diff`` when both sides have one format,
    else ``ulp_error`` in the narrower format. Every axis longer than 1 gets a profile;
    axes longer than ``max_bins`` are grouped into ``max_bins`` bins. Both tensors are read
    once, chunk by chunk. Returns ``None`` if ``stop()`` turns true between chunks.
    """
    shape = tuple(int(d) for d in stats.shape)
    a, b = as_shape(a, shape), as_shape(b, shape)
    names = axis_names(len(shape), layout)
    strides = [int(np.prod(shape[k + 1 :], dtype=np.int64)) for k in range(len(shape))]
    axes = []
    for k, size in enumerate(shape):
        if size <= 1:
            continue
        group = math.ceil(size / max_bins)
        n = math.ceil(size / group)
        axes.append(
            AxisProfile(
                k,
                names[k],
                size,
                group,
                np.zeros(n, np.int64),
                np.zeros(n, np.int64),
                np.zeros(n, np.float64),
            )
        )
    total_off = 0
    for lo, (ca, cb) in iter_chunks(a, b):
        if stop is not None and stop():
            return None
        err, special = _chunk_errors(ca, cb, stats)
        off = special | (err > OFF_ULP)
        total_off += int(np.count_nonzero(off))
        flat = np.arange(lo, lo + ca.size, dtype=np.int64)
        for ax in axes:
            bins = (flat // strides[ax.axis]) % ax.size // ax.group
            n = ax.elements.size
            ax.elements += np.bincount(bins, minlength=n)
            ax.off += np.bincount(bins, weights=off, minlength=n).astype(np.int64)
            ax.error_sum += np.bincount(bins, weights=err, minlength=n)
    return ErrorProfile(shape, int(np.prod(shape, dtype=np.int64)), total_off, axes)
