"""Mergeable quantile accumulators with bounded memory.

* :class:`IntHistogram` — exact histogram of integer ULP distances. Exact bins below
  ``2**16``; log2 bins above, where a percentile is reported as its bin's lower edge and
  flagged inexact.
* :class:`RealQuantiles` — real-valued errors: exact (all values kept) up to ``cap``
  values, then a log-bucket sketch indexed by the float64 exponent and the top 7 mantissa
  bits (relative bucket width 2**-7, reported at the bucket's midpoint: within 0.4%).

Both are filled by the compiled pass of :mod:`fpinspect.numerics.kernels`, which holds the
bucket rules (:func:`~fpinspect.numerics.kernels.sketch_key`,
:func:`~fpinspect.numerics.kernels.int_log_bin`); ``add`` feeds values one array at a time.

Percentiles use the ``inverted_cdf`` definition: the smallest observed value ``v`` with at
least ``q%`` of the values ``<= v``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from functools import lru_cache
from itertools import accumulate

import numpy as np

from . import kernels as K

_EXACT_BINS = K.EXACT_BINS
_LOG_BINS = K.LOG_BINS


#: Percentiles among at most this many exact bins or kept values are found in Python lists: for
#: a small pair that costs less than numpy's calls (or the compiled selection) and their arrays.
SMALL = 64


def _rank(n: int, q: float) -> int:
    """1-based rank of the ``inverted_cdf`` percentile ``q`` (0..100) among ``n`` values."""
    return max(1, math.ceil(n * q / 100.0 - 1e-12))


@lru_cache(maxsize=1024)
def _ranks(n: int, qs: tuple) -> list[int]:
    """:func:`_rank` of each of ``qs``, once per count and percentiles asked (pairs of a model
    share a few element counts; three stores of each pair ask for the same percentiles)."""
    return [_rank(n, q) for q in qs]


class IntHistogram:
    def __init__(self):
        self.exact = np.zeros(_EXACT_BINS, dtype=np.int64)
        self.log = np.zeros(_LOG_BINS, dtype=np.int64)  # bin k holds [2**k, 2**(k+1))
        self.n = 0
        self.total = 0  # exact sum (Python int: no overflow)
        self.max = None

    @classmethod
    def collected(cls, exact, log, n: int, total, top: int | None, *, copy: bool) -> IntHistogram:
        """The histogram the compiled pass filled (``top``: the largest distance, ``None``
        without any); with ``copy``, of copies of its bins, the exact ones trimmed as by
        :meth:`trim` (the pass's arrays then serve another pair)."""
        h = cls.__new__(cls)
        h.n, h.total, h.max = n, total, top
        h.exact, h.log = exact, log
        if copy:
            h.exact = exact[: h._trimmed_size()].copy()
            h.log = log.copy()
        return h

    def _trimmed_size(self) -> int:
        """The power of two above the largest distance (2 without any), or every exact bin."""
        if self.max is None:
            return 2
        if self.max < _EXACT_BINS:
            return max(2, 1 << int(self.max).bit_length())
        return _EXACT_BINS

    def add(self, d: np.ndarray) -> None:
        if d.size == 0:
            return
        d = np.ascontiguousarray(d, dtype=np.uint64).reshape(-1)
        if self.exact.size < _EXACT_BINS:
            self.exact = self._padded(self.exact)
        small, huge, m = K.int_histogram_add(d, self.exact, self.log)
        self.n += int(d.size)
        # exact integer sum of the distances below 2**32; float64 beyond (float64-range distances)
        self.total += int(small) + huge if huge else int(small)
        self.max = int(m) if self.max is None else max(self.max, int(m))

    @staticmethod
    def _padded(exact: np.ndarray) -> np.ndarray:
        """Trimmed exact bins grown back to all of them (the bins cut off were empty)."""
        full = np.zeros(_EXACT_BINS, dtype=np.int64)
        full[: exact.size] = exact
        return full

    def merge(self, other: IntHistogram) -> None:
        if self.exact.size < other.exact.size:
            self.exact = self._padded(self.exact)
        self.exact[: other.exact.size] += other.exact
        self.log += other.log
        self.n += other.n
        self.total += other.total
        if other.max is not None:
            self.max = other.max if self.max is None else max(self.max, other.max)

    def trim(self) -> None:
        """Shrink the exact bins to the power of two above the largest distance (when every
        distance is exact): a finished histogram kept for display costs bytes, not 512 KiB.
        Call only when no more values will be added."""
        if self.max is not None and self.max < _EXACT_BINS:
            size = self._trimmed_size()
            if size < self.exact.size:
                self.exact = self.exact[:size].copy()

    def percentile(self, q: float) -> tuple[int | None, bool]:
        """``(value, exact)``; ``exact`` is False when the value is a log2 bin's lower edge."""
        return self.percentiles((q,))[0]

    def percentiles(self, qs) -> list[tuple[int | None, bool]]:
        """:meth:`percentile` of each of ``qs``, from one cumulative sum of the bins."""
        if self.n == 0:
            return [(None, True) for _ in qs]
        ranks = _ranks(self.n, tuple(qs))
        if self.max < SMALL:
            # the first distance whose running count reaches each rank, as searchsorted finds it
            c = list(accumulate(self.exact[: self.max + 1].tolist()))
            return [(bisect_left(c, r), True) for r in ranks]  # every distance is in an exact bin
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

    def share(self) -> dict[str, float]:
        """Fractions of values at 0, at 1 and at 2 or more."""
        if self.n == 0:
            return {"0": 0.0, "1": 0.0, ">=2": 0.0}
        z, one = int(self.exact[0]), int(self.exact[1])
        return {"0": z / self.n, "1": one / self.n, ">=2": (self.n - z - one) / self.n}

    def counts(self, upto: int) -> np.ndarray:
        """Counts of distances ``0..upto-1``, then one bin for ``>= upto``."""
        head = np.zeros(upto, dtype=np.int64)
        kept = self.exact[:upto]  # trimmed bins: those cut off are empty
        head[: kept.size] = kept
        return np.append(head, self.n - int(head.sum()))


class RealQuantiles:
    """Quantiles of non-negative reals: exact up to ``cap`` values, then a sketch.

    The sketch bucket of ``v`` is its float64 bit pattern shifted right by ``52 - 7``:
    the exponent and the top 7 mantissa bits, 2**18 dense buckets counted with
    ``bincount`` (2 MiB, mergeable by addition).
    """

    MANT_BITS = K.SKETCH_MANT_BITS
    _SHIFT = np.uint64(52 - MANT_BITS)
    _NBUCKETS = K.SKETCH_BUCKETS
    #: Values kept exactly before switching to the sketch.
    CAP = 1 << 21

    def __init__(self, cap: int = CAP):
        self.cap = cap
        self._values: list[np.ndarray] | None = []
        # the pass's kept values with NaN where an element did not count, left as they are: the
        # percentiles select among them (compacting them cost a pair 16 us); ``values`` copies
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
            if allv.size <= SMALL:
                # sorted as select_ranks places them: NaNs (elements that did not count) above all
                values = allv.tolist()
                if self._uncounted is not None:
                    values = [v for v in values if v == v]
                values.sort()
                return [values[r - 1] for r in _ranks(self.n, tuple(qs))]
            ranks = [r - 1 for r in _ranks(self.n, tuple(qs))]
            wanted = sorted(set(ranks))
            bits = np.ascontiguousarray(allv).view(np.int64)
            out, work = K.select_scratch(bits.size, len(wanted))
            found = K.select_ranks(bits, np.array(wanted, dtype=np.int64), out, work).tolist()
            if wanted == ranks:  # ascending and distinct, as percentiles are mostly asked
                return found
            by_rank = dict(zip(wanted, found))
            return [by_rank[r] for r in ranks]
        cum = np.cumsum(self.buckets)
        out = []
        for q in qs:
            k = int(np.searchsorted(cum, _rank(self.n, q)))
            edges = (np.array([k, k + 1], dtype=np.uint64) << self._SHIFT).view(np.float64)
            out.append(float(edges.mean()) if k > 0 else 0.0)
        return out
