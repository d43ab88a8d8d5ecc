"""Integer pairs measured as integers: exact differences, never through float64.

float64 holds integers exactly only up to 2**53: 2**62 and 2**62 + 1 are one float64, so a
float pass sees no difference between them. Here the difference ``|a - b|`` of each element is
computed in unsigned 64-bit arithmetic (two's complement subtraction, exact for any two
integers of up to 64 bits of one signedness; a signed 64-bit integer against an unsigned one
goes through Python integers). The ULP of an integer format is one: an element's ULP distance
is its difference.

Percentiles follow :mod:`fpinspect.numerics.quantiles`: ``inverted_cdf``, exact below
``2**16``, above that the lower edge of the value's power-of-two bin, flagged inexact.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ...numerics.chunks import iter_chunks, unravel
from ...numerics.results import ErrorBlock, UlpShare, UlpStats

#: Differences below this are counted one by one (exact percentiles); above, by power of two.
EXACT_BELOW = 1 << 16
_POWERS = np.left_shift(np.uint64(1), np.arange(16, 64, dtype=np.uint64))  # 2**16 .. 2**63


def is_integer(dtype: np.dtype) -> bool:
    """Integers and booleans: the dtypes this module measures."""
    return np.dtype(dtype).kind in "iub"


def _as_64(c: np.ndarray) -> np.ndarray:
    """A chunk widened to 64 bits of its own signedness (booleans as unsigned)."""
    return c.astype(np.int64 if c.dtype.kind == "i" else np.uint64, copy=False)


def differences(ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """``|ca - cb|`` of two integer chunks, exactly: ``uint64``, or Python ints (an object array)
    for a signed 64-bit chunk against an unsigned one, whose difference can pass ``2**64``."""
    a, b = _as_64(ca), _as_64(cb)
    if a.dtype == b.dtype:
        ua, ub = a.view(np.uint64), b.view(np.uint64)
        return np.where(a >= b, ua - ub, ub - ua)  # modulo 2**64: exact, as |a - b| < 2**64
    return np.abs(a.astype(object) - b.astype(object))


@dataclass
class IntegerErrors:
    """The exact differences of an integer pair (see the module docstring)."""

    n: int = 0
    mismatched: int = 0  #: elements that differ
    total: int = 0  #: sum of the differences
    squares: int = 0  #: sum of their squares
    max: int = 0
    argmax: int = 0  #: flat index of the first largest difference
    exact: np.ndarray = field(default_factory=lambda: np.zeros(EXACT_BELOW, np.int64))
    log: list[int] = field(default_factory=lambda: [0] * 130)  #: by bit length, at or above EXACT_BELOW
    worst: list[tuple[int, int]] = field(default_factory=list)  #: (difference, -flat index), a heap
    max_rel: float = 0.0  #: largest ``|a - b| / |b|`` (infinite where b is 0 and a is not)

    def add(self, offset: int, d: np.ndarray, keep: int) -> None:
        """Count the differences ``d`` of the elements from flat index ``offset`` on; keep the
        ``keep`` largest non-zero ones with their indices."""
        if not d.size:
            return
        self.n += d.size
        self.mismatched += int(np.count_nonzero(d))
        if d.dtype == object:
            big = [v for v in d.tolist() if v >= EXACT_BELOW]
            small = np.array([v for v in d.tolist() if v < EXACT_BELOW], np.int64)
            self.total += sum(d.tolist())
            for v in big:
                self.log[v.bit_length()] += 1
        else:
            big_values = d[d >= EXACT_BELOW]
            big = big_values.tolist()
            small = d[d < EXACT_BELOW].astype(np.int64)
            self.total += (int((d >> np.uint64(32)).sum()) << 32) + int((d & np.uint64(0xFFFFFFFF)).sum())
            lengths = np.searchsorted(_POWERS, big_values, side="right") + 16  # exact bit lengths
            for k, c in zip(*np.unique(lengths, return_counts=True)):
                self.log[int(k)] += int(c)
        self.squares += int((small * small).sum()) + sum(v * v for v in big)
        self.exact += np.bincount(small, minlength=EXACT_BELOW)
        i = int(np.argmax(d))
        if int(d[i]) > self.max:
            self.max, self.argmax = int(d[i]), offset + i
        if keep and self.mismatched:
            for j in np.flatnonzero(d)[
                np.argsort(-d[d != 0].astype(np.float64), kind="stable")[:keep]
            ].tolist():
                item = (int(d[j]), -(offset + j))
                if len(self.worst) < keep:
                    heapq.heappush(self.worst, item)
                elif item > self.worst[0]:
                    heapq.heappushpop(self.worst, item)

    def percentile(self, q: float) -> tuple[int, bool]:
        """``(value, exact)`` of the ``inverted_cdf`` percentile ``q`` of the differences."""
        rank = max(1, math.ceil(self.n * q / 100.0 - 1e-12))
        seen = np.cumsum(self.exact)
        if seen[-1] >= rank:
            return int(np.searchsorted(seen, rank)), True
        seen_log = int(seen[-1])
        for k, count in enumerate(self.log):
            seen_log += count
            if seen_log >= rank:
                return 1 << (k - 1), False
        return self.max, True

    def worst_indices(self) -> list[int]:
        """Flat indices of the largest differences, largest first (first index on ties)."""
        return [-i for _, i in sorted(self.worst, reverse=True)]


def integer_errors(a, b, *, worst: int = 10) -> IntegerErrors:
    """The exact differences of integer arrays ``a`` and ``b`` (equal sizes, read in chunks)."""
    out = IntegerErrors()
    for offset, (ca, cb) in iter_chunks(a, b):
        d = differences(ca, cb)
        out.add(offset, d, worst)
        if d.size and out.mismatched:
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = d.astype(np.float64) / np.abs(cb.astype(np.float64))
            out.max_rel = max(out.max_rel, float(np.nanmax(np.where(d == 0, 0.0, rel))))
    return out


def integer_metrics(e: IntegerErrors, dtype: str, shape: tuple) -> dict:
    """The ``ulp`` and ``abs`` error blocks of a pair's statistics (typed, as
    :class:`~fpinspect.numerics.ErrorStats` holds them) and the metrics derived from the
    differences (``mean_abs``, ``rmse``, ``mismatched``) for the integer differences ``e`` of
    arrays of ``shape``."""
    p50, exact50 = e.percentile(50)
    p99, exact99 = e.percentile(99)
    mean = e.total / e.n
    spread = dict(
        max=e.max, argmax=unravel(e.argmax, shape), mean=mean, p50=p50, p99=p99, exact=exact50 and exact99
    )
    ones = int(e.exact[1])
    share = UlpShare(zero=int(e.exact[0]) / e.n, one=ones / e.n, two_or_more=(e.mismatched - ones) / e.n)
    return {
        "ulp": UlpStats(kind="diff", dtype=dtype, **spread, share=share),
        "abs": ErrorBlock(**spread),
        "mean_abs": mean,
        "rmse": math.sqrt(e.squares / e.n),
        "mismatched": e.mismatched,
    }
