"""Mergeable quantile accumulators with bounded memory.

* :class:`IntHistogram` — exact histogram of integer ULP distances. Exact bins below
  ``2**16``; log2 bins above, where a percentile is reported as its bin's lower edge and
  flagged inexact.
* :class:`RealQuantiles` — real-valued errors: exact (all values kept) up to ``cap``
  values, then a log-bucket sketch indexed by the float64 exponent and the top 7 mantissa
  bits (:func:`~fpinspect.numerics.kernels.sketch_key`; reported at the bucket's midpoint:
  within 0.4%).

Percentiles use the ``inverted_cdf`` definition: the smallest observed value ``v`` with at
least ``q%`` of the values ``<= v``.
"""

from __future__ import annotations

import math

import numpy as np

from . import kernels as K
from .intrinsics import bits_float, imax, imin, where
from .jit import KERNEL, SUB, njit

_I64_MAX = np.iinfo(np.int64).max
_I64_MIN = np.iinfo(np.int64).min
_U64_MAX = np.uint64(np.iinfo(np.uint64).max)
_INF_BITS = np.int64(0x7FF0000000000000)
_EXACT_BINS, _LOG_BINS = K.EXACT_BINS, K.LOG_BINS


def _rank(n: int, q: float) -> int:
    """1-based rank of the ``inverted_cdf`` percentile ``q`` (0..100) among ``n`` values."""
    return max(1, math.ceil(n * q / 100.0 - 1e-12))


class IntHistogram:
    """Integer ULP distances as the compiled pass counts them: exact bins below ``2**16``,
    log2 bins above (bin ``k`` holds ``[2**k, 2**(k+1))``)."""

    def __init__(self, exact: np.ndarray, log: np.ndarray, n: int, total, top: int | None):
        self.exact, self.log = exact, log
        self.n = n
        self.total = total  #: the exact sum (a Python int below 2**32 per distance; float64 beyond)
        self.max = top  #: the largest distance, ``None`` without any

    def trim(self) -> None:
        """Shrink the exact bins to the power of two above the largest distance (when every
        distance is exact): a finished histogram kept for display costs bytes, not 512 KiB."""
        if self.max is not None and self.max < _EXACT_BINS:
            self.exact = self.exact[: max(2, 1 << int(self.max).bit_length())].copy()

    def percentiles(self, qs) -> list[tuple[int | None, bool]]:
        """``(value, exact)`` of each percentile of ``qs`` (``exact`` is False for a value that is
        a log2 bin's lower edge), from one cumulative sum of the bins."""
        if self.n == 0:
            return [(None, True) for _ in qs]
        ranks = [_rank(self.n, q) for q in qs]
        # bins above the largest distance are empty: summing them would only cost time
        c = np.cumsum(self.exact[: self.max + 1] if self.max < _EXACT_BINS else self.exact)
        within = int(c[-1])
        out = [(v, True) for v in np.searchsorted(c, ranks).tolist()]
        if any(r > within for r in ranks):
            log = np.searchsorted(np.cumsum(self.log) + within, ranks).tolist()
            out = [(1 << k, False) if r > within else v for v, k, r in zip(out, log, ranks)]
        return out

    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    def share(self) -> tuple[float, float, float]:
        """Fractions of values at 0, at 1 and at 2 or more."""
        if self.n == 0:
            return 0.0, 0.0, 0.0
        z, one = int(self.exact[0]), int(self.exact[1])
        return z / self.n, one / self.n, (self.n - z - one) / self.n


class RealQuantiles:
    """Quantiles of non-negative reals: exact up to ``cap`` values, then a sketch of 2**18
    buckets (2 MiB, mergeable by addition)."""

    MANT_BITS = K.SKETCH_MANT_BITS
    _SHIFT = np.uint64(52 - MANT_BITS)
    _NBUCKETS = K.SKETCH_BUCKETS
    #: Values kept exactly before switching to the sketch.
    CAP = 1 << 21

    def __init__(self, cap: int = CAP):
        self.cap = cap
        self._values: list[np.ndarray] | None = []
        # the pass's kept values with NaN where an element did not count, left as they are: the
        # percentiles select among them (compacting them costs a small pair more); ``values`` copies
        # the counted ones out when read, never in place (a reader in another thread may be
        # selecting among them)
        self._uncounted: np.ndarray | None = None
        self.kept = 0
        self.buckets: np.ndarray | None = None
        self.n = 0

    @property
    def values(self) -> list[np.ndarray] | None:
        """The kept values (one array per part added; ``None`` once a sketch)."""
        kept = self._uncounted
        if kept is not None:
            counted = kept[~np.isnan(kept)]
            self._values = [counted] if counted.size else []
            self._uncounted = None
        return self._values

    @values.setter
    def values(self, values: list[np.ndarray] | None) -> None:
        self._values, self._uncounted = values, None

    @classmethod
    def collected(cls, kept: np.ndarray | None, buckets: np.ndarray, n: int) -> RealQuantiles:
        """The store the compiled pass filled: ``kept`` holds one value per element (NaN where
        the element did not count) or is ``None`` when the pass filled the sketch ``buckets``
        (:data:`~fpinspect.numerics.kernels.SKETCH_STORE`: the extra slots at the end hold the
        elements that did not count and copies of bucket 0)."""
        q = cls.__new__(cls)  # every field set here: __init__'s would be set twice
        q.cap, q.kept, q.buckets, q._uncounted = cls.CAP, 0, None, None
        if kept is not None:
            n = int(n)
            if kept.size == n and n:
                q._values = [kept]
            else:
                q._values, q._uncounted = [], kept if n else None
            q.kept = q.n = n
        else:
            folded = buckets[: cls._NBUCKETS].copy()
            folded[0] += buckets[K.SKETCH_ZERO : K.SKETCH_ZERO + K.LANES].sum()
            q.values, q.buckets, q.n = None, folded, int(n)
        return q

    def _add_sketch(self, v: np.ndarray) -> None:
        K.sketch_add(np.ascontiguousarray(v, dtype=np.float64), self.buckets)

    def _to_sketch(self) -> None:
        self.buckets = np.zeros(self._NBUCKETS, dtype=np.int64)
        vals, self.values = self.values, None
        for v in vals:
            self._add_sketch(v)

    def add(self, v: np.ndarray) -> None:
        """Add non-negative finite values."""
        v = np.asarray(v, dtype=np.float64).reshape(-1)
        if v.size == 0:
            return
        self.n += int(v.size)
        if self.values is not None:
            self.values.append(v.copy())
            self.kept += v.size
            if self.kept > self.cap:
                self._to_sketch()
        else:
            self._add_sketch(v)

    def merge(self, other: RealQuantiles) -> None:
        if other.values is not None:
            for v in other.values:
                self.add(v)
            return
        if self.values is not None:
            self._to_sketch()
        self.n += other.n
        self.buckets += other.buckets

    @property
    def exact(self) -> bool:
        return self.buckets is None

    def percentiles(self, qs) -> list[float | None]:
        if self.n == 0:
            return [None for _ in qs]
        if self.buckets is None:  # exact
            allv = self._uncounted  # NaN where an element did not count: above every rank
            if allv is None:  # (values without _uncounted: _values as they are)
                allv = self._values[0] if len(self._values) == 1 else np.concatenate(self._values)
            ranks = [_rank(self.n, q) - 1 for q in qs]
            wanted = sorted(set(ranks))
            bits = np.ascontiguousarray(allv).view(np.int64)
            out, work = select_scratch(bits.size, len(wanted))
            found = select_ranks(bits, np.array(wanted, dtype=np.int64), out, work).tolist()
            by_rank = dict(zip(wanted, found))
            return [by_rank[r] for r in ranks]
        cum = np.cumsum(self.buckets)
        out = []
        for q in qs:
            k = int(np.searchsorted(cum, _rank(self.n, q)))
            edges = (np.array([k, k + 1], dtype=np.uint64) << self._SHIFT).view(np.float64)
            out.append(float(edges.mean()) if k > 0 else 0.0)
        return out


#: Buckets of one narrowing step of :func:`select_ranks` at most (a 32 KiB count table: in L1) ...
_SELECT_BUCKETS = 1 << 12
#: ... and at least: fewer values get about as many buckets as values.
_SELECT_MIN_BUCKETS = 64
#: Candidates few enough to sort (by insertion) instead of narrowing further.
_SELECT_SORT = 48


@njit(inline="always", error_model="numpy")
def _bits_range(bits, m):
    """Smallest and largest of ``bits[:m]``."""
    lo = _I64_MAX
    hi = _I64_MIN
    for i in range(m):
        b = bits[i]
        lo = imin(lo, b)
        hi = imax(hi, b)
    return lo, hi


@njit(inline="always", error_model="numpy")
def _select_shift(lo, hi, buckets):
    """The right shift that maps bit patterns ``lo..hi`` onto fewer than ``buckets`` buckets:
    ``(b - lo) >> shift``."""
    shift = 0
    while ((hi - lo) >> shift) >= buckets:
        shift += 1
    return shift


@njit(inline="always", error_model="numpy")
def _select_buckets(n):
    """The buckets :func:`select_ranks` counts ``n`` values into: the power of two from ``n``
    up, within :data:`_SELECT_MIN_BUCKETS` .. :data:`_SELECT_BUCKETS`."""
    buckets = _SELECT_MIN_BUCKETS
    while buckets < n and buckets < _SELECT_BUCKETS:
        buckets *= 2
    return buckets


@njit(**SUB)
def _select_within(cand, m, r, counts):
    """The pattern of 0-based rank ``r`` among the patterns ``cand[:m]`` of non-negative floats
    (reordered in place): narrowed to the bucket holding the rank, bucket by bucket, until its
    patterns are all equal or few enough to sort."""
    while True:
        if m <= _SELECT_SORT:
            # an insertion sort: numba's np.sort takes far longer to compile
            for i in range(1, m):
                v = cand[i]
                j = i
                while j > 0 and cand[j - 1] > v:
                    cand[j] = cand[j - 1]
                    j -= 1
                cand[j] = v
            return cand[r]
        lo, hi = _bits_range(cand, m)
        if lo == hi:
            return cand[0]
        shift = _select_shift(lo, hi, counts.size)
        for i in range(counts.size):
            counts[i] = 0
        for i in range(m):
            counts[(cand[i] - lo) >> shift] += 1
        bucket = 0
        while counts[bucket] <= r:
            r -= counts[bucket]
            bucket += 1
        k = 0
        for i in range(m):
            v = cand[i]
            if ((v - lo) >> shift) == bucket:
                cand[k] = v
                k += 1
        m = k


@njit(inline="always", error_model="numpy")
def _positive_range(bits, n):
    """Smallest positive and largest non-NaN of the bit patterns ``bits[:n]`` of non-negative
    floats or NaN; the smallest is 0 where none is positive. As unsigned numbers ``b - 1`` wraps
    a zero's pattern above every other: one vectorised minimum, no test."""
    lo = _U64_MAX
    hi = np.int64(0)
    for i in range(n):
        b = bits[i]
        lo = imin(lo, np.uint64(b) - np.uint64(1))
        hi = imax(hi, where(b <= _INF_BITS, b, 0))
    return np.int64(lo + np.uint64(1)), hi


@njit(inline="always", error_model="numpy")
def _bucket_bounds(bits, n, lo0, hi0, lo1, hi1):
    """Smallest and largest of the patterns ``bits[:n]`` within ``[lo0, hi0)`` and within
    ``[lo1, hi1)`` (``_I64_MAX`` and -1 where there is none): four masked minima / maxima in one
    vectorised pass, without a store."""
    min0 = min1 = _I64_MAX
    max0 = max1 = np.int64(-1)
    for i in range(n):
        b = bits[i]
        in0 = (b >= lo0) & (b < hi0)
        in1 = (b >= lo1) & (b < hi1)
        min0 = imin(min0, where(in0, b, _I64_MAX))
        max0 = imax(max0, where(in0, b, -1))
        min1 = imin(min1, where(in1, b, _I64_MAX))
        max1 = imax(max1, where(in1, b, -1))
    return min0, max0, min1, max1


@njit(inline="always", error_model="numpy")
def _gather(bits, n, lo, hi, few, into):
    """The patterns of ``bits[:n]`` within ``[lo, hi]``, in order, into ``into`` (one spare slot
    at its end); how many. ``few``: a small share of them is, and a branch skips the others,
    taken too rarely to mispredict; else every pattern is stored and the cursor moves on where
    it belongs (a branch there would mispredict on most of them). Integer loads and stores
    spare moving each float to an integer register for its test."""
    k = 0
    if few:
        for i in range(n):
            b = bits[i]
            if (b >= lo) & (b <= hi):
                into[k] = b
                k += 1
    else:
        for i in range(n):
            b = bits[i]
            into[k] = b
            k += (b >= lo) & (b <= hi)
    return k


#: A bucket holding at most 1 / this of the values is gathered behind a branch.
_SELECT_FEW = 32


@njit(**KERNEL)
def select_ranks(bits, ranks, out, work):
    """The values of 0-based ``ranks`` (ascending) among non-negative float64 values, given as
    their bit patterns ``bits`` (``values.view(np.int64)``, monotone in the value), as a full sort
    would place them; positive NaNs (elements that did not count) may be among them, above every
    rank asked for. One pass counts the values into up to :data:`_SELECT_BUCKETS` buckets (about
    as many as values), exact zeros (the commonest error) in bucket 0 and equal ranges of patterns
    from the smallest positive value to the largest in the others. A rank in bucket 0 is 0; in
    another, a vector pass finds the smallest and largest value of its bucket: equal, they are the
    rank's value, as they mostly are for errors; else the bucket's values are gathered and
    narrowed (:func:`_select_within`). No full sort, no per-call table larger than 32 KiB.

    The values land in ``out`` (float64, ``ranks.size``); ``work`` (int64) is the scratch the
    kernel works in; :func:`select_scratch` makes both. An array allocated here would cost
    numba a compile of its own per kind of allocation."""
    n = bits.size
    k = ranks.size
    for j in range(k):
        out[j] = 0.0
    lo, hi = _positive_range(bits, n)
    if lo == 0 or lo > hi:
        return out  # every value is 0 (or NaN)
    buckets = _select_buckets(n)
    shift = 0
    while ((hi - lo) >> shift) > buckets - 2:
        shift += 1
    width = np.int64(1) << shift
    base = lo - width  # bucket b > 0: the patterns base + b * width .. base + (b + 1) * width - 1
    counts = work[:buckets]
    for b in range(buckets):
        counts[b] = 0
    for i in range(n):
        counts[imin(imax(bits[i] - base, 0) >> shift, buckets - 1)] += 1  # NaN: at most the top
    # each rank's bucket and the values below it
    at = buckets
    bucket_of = work[at : at + k]
    below_of = work[at + k : at + 2 * k]
    below = 0
    bucket = 0
    for j in range(k):
        while below + counts[bucket] <= ranks[j]:
            below += counts[bucket]
            bucket += 1
        bucket_of[j] = bucket
        below_of[j] = below
    # the wanted buckets above 0, ascending, with their sizes and pattern bounds
    slot_of = work[at + 2 * k : at + 3 * k]
    size = work[at + 3 * k : at + 4 * k]
    low = work[at + 4 * k : at + 5 * k]
    high = work[at + 5 * k : at + 6 * k]
    used = 0
    for j in range(k):
        b = bucket_of[j]
        if b > 0 and (used == 0 or bucket_of[j - 1] != b):
            size[used] = counts[b]
            low[used] = base + b * width
            high[used] = low[used] + width - 1
            used += 1
        slot_of[j] = used - 1
    # their values' smallest and largest patterns, two buckets per pass
    for u0 in range(0, used, 2):
        u1 = imin(u0 + 1, used - 1)
        min0, max0, min1, max1 = _bucket_bounds(bits, n, low[u0], high[u0] + 1, low[u1], high[u1] + 1)
        low[u0], high[u0], low[u1], high[u1] = min0, max0, min1, max1
    # a bucket's values (one spare slot), and a copy of them for a next rank in that bucket
    at += 6 * k
    gathered = work[at : at + n + 1]
    spare = work[at + n + 1 : at + 2 * n + 1]
    for j in range(k):
        if bucket_of[j] == 0:
            continue  # out[j] is 0
        u = slot_of[j]
        if low[u] == high[u]:
            out[j] = bits_float(low[u])
            continue
        m = size[u]
        if j == 0 or slot_of[j - 1] != u:
            _gather(bits, n, low[u], high[u], m * _SELECT_FEW <= n, gathered[: m + 1])
        cand = gathered[:m]
        if j + 1 < k and slot_of[j + 1] == u:
            # narrowing reorders and drops candidates: the next rank needs them all
            for i in range(m):
                spare[i] = gathered[i]
            cand = spare[:m]
        out[j] = bits_float(_select_within(cand, m, ranks[j] - below_of[j], counts))
    return out


def select_scratch(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(out, work)`` for :func:`select_ranks` to find ``k`` ranks among ``n`` values in: the
    count table, six slots per rank, room for one bucket's values and a copy of them."""
    return np.empty(k, dtype=np.float64), np.empty(_SELECT_BUCKETS + 6 * k + 2 * n + 1, dtype=np.int64)
