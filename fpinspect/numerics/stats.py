"""Streaming error statistics of an array against a reference.

One pass over both arrays in chunks (a few MiB each, optionally on several threads)
collects every sufficient statistic that :func:`error_stats` and the named metrics of
:mod:`fpinspect.numerics.metrics` need. Everything merges, so the arrays may be memory maps
or :class:`~fpinspect.numerics.chunks.NpyFile` readers far larger than RAM.

Special values never enter a number: elements where either side is NaN or infinite are
counted (``nan_mismatch``, ``both_nan``, ``inf_mismatch``, ``both_inf``) and left out of
max / mean / percentiles. The exception is the reference trio (``cosine``, ``max_abs``,
``max_rel``), computed over all elements exactly as ``fusion_precision_analyzer.py`` does,
so a NaN there propagates just as it does in that script.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .chunks import CHUNK, ChunkReader, chunk_ranges
from .dtypes import FloatFormat, common_format, float_format, is_supported, native
from .quantiles import IntHistogram, RealQuantiles
from .ulp import _ulp_diff_chunk, ulp_of

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
#: Denominator guard of the reference script's cosine and relative error.
REF_GUARD = 1e-8


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """Sum of products of two 1-D float64 chunks, without BLAS.

    ``np.dot`` hands vectors to OpenBLAS, which starts its own threads: from several
    worker threads at once that oversubscribes the cores and ran 2x slower here. einsum's
    own loop costs ~40 us more per 128 Ki chunk and scales with ``jobs``.
    """
    return float(np.einsum("i,i->", a, b))


def _measured_format(a_dtype, ref_dtype) -> FloatFormat:
    """The format ULPs are counted in: the narrower (less precise) of the two sides."""
    cands = [float_format(d) for d in (a_dtype, ref_dtype) if is_supported(d)]
    if not cands:
        return float_format(np.float64)
    return min(cands, key=lambda f: (f.p, f.bits))


class _Moments:
    """Count, mean and sum of squared deviations, merged with Chan's formula."""

    __slots__ = ("n", "mean", "m2")

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, v: np.ndarray) -> None:
        if v.size == 0:
            return
        m = float(v.mean())
        other = _Moments()
        other.n, other.mean, other.m2 = int(v.size), m, dot(v - m, v - m)
        self.merge(other)

    def merge(self, o: _Moments) -> None:
        if o.n == 0:
            return
        n = self.n + o.n
        delta = o.mean - self.mean
        self.m2 += o.m2 + delta * delta * self.n * o.n / n
        self.mean += delta * o.n / n
        self.n = n

    def std(self) -> float | None:
        return math.sqrt(self.m2 / self.n) if self.n else None


def _top_k(score: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores; ties at the cut go to the lowest indices."""
    n = score.size
    if n <= k:
        return np.arange(n)
    cut = np.partition(score, n - k)[n - k]
    above = np.flatnonzero(score > cut)
    tied = np.flatnonzero(score == cut)[: k - above.size]
    return np.concatenate([above, tied])


def _beats(new: tuple, cur: tuple) -> bool:
    """Whether ``(value, index)`` ``new`` beats ``cur``: larger, or equal at a lower index."""
    return new[0] > cur[0] or (new[0] == cur[0] and 0 <= new[1] < cur[1])


def _nanmax(cur, new):
    """Running maximum that propagates NaN, like ``np.max`` over the whole array."""
    if cur is None:
        return new
    return float(np.maximum(cur, new))


class PairStats:
    """Sufficient statistics of one ``(a, ref)`` pair; feed chunks, then read results."""

    def __init__(self, a_dtype, ref_dtype, shape, *, worst: int = 0):
        self.shape = tuple(shape)
        self.worst_k = worst
        # the k worst elements so far: score (ULPs; inf for a special-value mismatch) and flat index
        self.worst_score = np.empty(0, dtype=np.float64)
        self.worst_index = np.empty(0, dtype=np.int64)
        self.a_dtype = np.dtype(a_dtype)
        self.ref_dtype = np.dtype(ref_dtype)
        self.same = self.a_dtype == self.ref_dtype and is_supported(self.a_dtype)
        self.fmt = _measured_format(self.a_dtype, self.ref_dtype)
        self.ulp_kind = "diff" if self.same else "error"
        self.n = 0
        self._final: dict | None = None  # error_stats() cached by compact()
        # reference-script trio, all elements
        self.t_dot = self.t_xx = self.t_yy = 0.0
        self.t_maxabs = self.t_maxrel = None
        # special values
        self.both_nan = self.nan_mismatch = self.both_inf = self.inf_mismatch = 0
        self.bit_equal = 0
        self.signed_zero = 0
        # finite-only statistics
        self.nf = 0
        self.s_d2 = self.s_ad = self.s_yy = 0.0
        self.max_abs = (-1.0, -1)
        self.max_ay = 0.0
        self.s_r = 0.0
        self.max_r = 0.0
        self.mx, self.my = _Moments(), _Moments()
        self.min_x = self.min_y = math.inf
        self.max_x = self.max_y = -math.inf
        self.n_re1 = self.n_re5 = 0
        self.rel_n = self.rel_excluded = 0
        self.s_rel = 0.0
        self.max_rel = (-1.0, -1)
        self.abs_q = RealQuantiles()
        self.rel_q = RealQuantiles()
        self.ulp_hist = IntHistogram() if self.same else None
        self.ulp_q = None if self.same else RealQuantiles()
        self.ulp_share = np.zeros(3, dtype=np.int64)  # for kind "error": =0, (0,1], >1
        # Tolerance at those cuts, in ULPs: float64 rounding of the reference is ~2**(p-53) ULP.
        self.share_tol = min(2.0 ** (self.fmt.p - 50), 1e-6)
        self.s_ulp = 0.0
        self.max_ulp = (-1.0, -1)

    # -- accumulation -------------------------------------------------------------------
    def update(self, offset: int, a: np.ndarray, r: np.ndarray) -> None:
        n = a.size
        self.n += n
        x = a.astype(np.float64)
        y = r.astype(np.float64)
        with np.errstate(all="ignore"):
            self.t_dot += dot(x, y)
            self.t_xx += dot(x, x)
            yy = dot(y, y)
            self.t_yy += yy
            d = x - y
            ad = np.abs(d)
            ax, ay = np.abs(x), np.abs(y)
            self.t_maxabs = _nanmax(self.t_maxabs, ad.max())
            den = np.maximum(ax, ay)
            den += REF_GUARD
            self.t_maxrel = _nanmax(self.t_maxrel, (ad / den).max())

        if self.same:
            u = a.dtype.itemsize
            self.bit_equal += int(np.count_nonzero(a.view(f"u{u}") == r.view(f"u{u}")))

        fx, fy = np.isfinite(x), np.isfinite(y)
        fin = fx & fy
        all_finite = bool(fin.all())
        idx = None
        if not all_finite:
            nx, ny = np.isnan(x), np.isnan(y)
            self.both_nan += int(np.count_nonzero(nx & ny))
            self.nan_mismatch += int(np.count_nonzero(nx ^ ny))
            ix, iy = np.isinf(x), np.isinf(y)
            same_inf = ix & iy & (x == y)
            self.both_inf += int(np.count_nonzero(same_inf))
            self.inf_mismatch += int(np.count_nonzero((ix | iy) & ~(nx | ny) & ~same_inf))
            if self.worst_k:
                bad = np.flatnonzero((nx ^ ny) | ((ix | iy) & ~(nx | ny) & ~same_inf))
                self._add_worst(np.full(bad.size, np.inf), offset + bad)
            idx = np.flatnonzero(fin)
            x, y, d, ad, ay = x[idx], y[idx], d[idx], ad[idx], ay[idx]
            a, r = a[idx], r[idx]
        nf = x.size
        if nf == 0:
            return

        def gidx(i: int) -> int:
            return offset + (int(idx[i]) if idx is not None else int(i))

        self.nf += nf
        if self.same:
            zero = (x == 0) & (y == 0)
            if zero.any():
                self.signed_zero += int(np.count_nonzero(zero & (np.signbit(x) != np.signbit(y))))
        with np.errstate(all="ignore"):
            self.s_d2 += dot(d, d)
            self.s_ad += float(ad.sum())
            i = int(ad.argmax())
            if ad[i] > self.max_abs[0]:
                self.max_abs = (float(ad[i]), gidx(i))
            self.max_ay = max(self.max_ay, float(ay.max()))
            self.s_yy += yy if idx is None else dot(y, y)
            # One quotient serves the three relative errors; they differ only where |y| is tiny.
            q = ad / ay
            low = ay < self.fmt.tiny  # includes y == 0 and every |y| <= float64 eps
            any_low = bool(low.any())
            # msaccucmp relative error: |x/y - 1| where |y| > eps, else 0
            r_ms = np.where(ay > EPS64, q, 0.0) if any_low else q
            self.s_r += float(r_ms.sum())
            self.max_r = max(self.max_r, float(r_ms.max()))
            self.mx.add(x)
            self.my.add(y)
            self.min_x = min(self.min_x, float(x.min()))
            self.max_x = max(self.max_x, float(x.max()))
            self.min_y = min(self.min_y, float(y.min()))
            self.max_y = max(self.max_y, float(y.max()))
            # msprobe thousandth ratios: RE = |N-B| / |B|, with eps standing in for B == 0
            re = np.where(ay == 0, ad / EPS32, q) if any_low else q
            self.n_re1 += int(np.count_nonzero(re < 0.001))
            self.n_re5 += int(np.count_nonzero(re < 0.005))
            # relative error where the reference is a normal number of the measured format
            ok = ~low if any_low else None
            rel = q[ok] if any_low else q
            self.rel_n += int(rel.size)
            self.rel_excluded += nf - int(rel.size)
            if rel.size:
                self.s_rel += float(rel.sum())
                j = int(rel.argmax())
                if rel[j] > self.max_rel[0]:
                    self.max_rel = (float(rel[j]), gidx(int(np.flatnonzero(ok)[j]) if any_low else j))
                self.rel_q.add(rel)
            self.abs_q.add(ad)
            # ULP
            if self.same:
                dist = _ulp_diff_chunk(a, r, self.fmt, False)[0]
                self.ulp_hist.add(dist)
                k = int(dist.argmax())
                if dist[k] > self.max_ulp[0]:
                    self.max_ulp = (int(dist[k]), gidx(k))
                score = dist
            else:
                err = ad / ulp_of(y, self.fmt)
                self.ulp_q.add(err)
                self.s_ulp += float(err.sum())
                k = int(err.argmax())
                if err[k] > self.max_ulp[0]:
                    self.max_ulp = (float(err[k]), gidx(k))
                # the float64 reference's own rounding puts exact ties a hair off the cut
                tol = self.share_tol
                zero = int(np.count_nonzero(err <= tol))
                le1 = int(np.count_nonzero(err <= 1.0 + tol))
                self.ulp_share += np.array([zero, le1 - zero, nf - le1])
                score = err
            if self.worst_k:
                # Only elements beating the current k-th worst can enter (usually none after
                # the first chunks): one comparison pass instead of a partition per chunk. A tie
                # never enters: chunks arrive in increasing index order, and lower indices win.
                floor = self.worst_score[-1] if self.worst_score.size == self.worst_k else 0
                cand = np.flatnonzero(score > floor)
                top = cand[_top_k(score[cand], self.worst_k)]
                flat = offset + (idx[top] if idx is not None else top)
                self._add_worst(score[top].astype(np.float64), flat)

    def _add_worst(self, score: np.ndarray, flat: np.ndarray) -> None:
        sc = np.concatenate([self.worst_score, score])
        ix = np.concatenate([self.worst_index, np.asarray(flat, dtype=np.int64)])
        # largest score first; among equal scores, the lowest index (deterministic)
        order = np.lexsort((ix, -sc))[: self.worst_k]
        self.worst_score, self.worst_index = sc[order], ix[order]

    def merge(self, o: PairStats) -> None:
        for name in (
            "n", "t_dot", "t_xx", "t_yy", "both_nan", "nan_mismatch", "both_inf", "inf_mismatch",
            "bit_equal", "signed_zero", "nf", "s_d2", "s_ad", "s_yy", "s_r", "n_re1", "n_re5",
            "rel_n", "rel_excluded", "s_rel", "s_ulp",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(o, name))
        for name in ("t_maxabs", "t_maxrel"):
            if getattr(o, name) is not None:
                setattr(self, name, _nanmax(getattr(self, name), getattr(o, name)))
        for name in ("max_abs", "max_rel", "max_ulp"):
            if _beats(getattr(o, name), getattr(self, name)):
                setattr(self, name, getattr(o, name))
        self.max_ay = max(self.max_ay, o.max_ay)
        self.max_r = max(self.max_r, o.max_r)
        self.min_x, self.max_x = min(self.min_x, o.min_x), max(self.max_x, o.max_x)
        self.min_y, self.max_y = min(self.min_y, o.min_y), max(self.max_y, o.max_y)
        self.mx.merge(o.mx)
        self.my.merge(o.my)
        self.abs_q.merge(o.abs_q)
        self.rel_q.merge(o.rel_q)
        if self.same:
            self.ulp_hist.merge(o.ulp_hist)
        else:
            self.ulp_q.merge(o.ulp_q)
        self.ulp_share += o.ulp_share
        if self.worst_k:
            self._add_worst(o.worst_score, o.worst_index)

    # -- results --------------------------------------------------------------------------
    def _index(self, flat: int):
        if flat < 0:
            return None
        return [int(i) for i in np.unravel_index(flat, self.shape)] if self.shape else []

    def _block(self, q: RealQuantiles, s: float, n: int, best, percentiles) -> dict:
        out = {
            "max": best[0] if n else None,
            "argmax": self._index(best[1]) if n else None,
            "mean": s / n if n else None,
        }
        for p, v in zip(percentiles, q.percentiles(percentiles)):
            out[f"p{p:g}"] = v
        out["exact"] = q.exact
        return out

    def ulp_block(self, percentiles=(50, 99)) -> dict:
        out = {"kind": self.ulp_kind, "dtype": self.fmt.name}
        if self.same:
            h = self.ulp_hist
            out.update(max=h.max, argmax=self._index(self.max_ulp[1]) if h.n else None, mean=h.mean())
            exact = True
            for p in percentiles:
                v, ex = h.percentile(p)
                out[f"p{p:g}"] = v
                exact &= ex
            out["exact"] = exact
            out["share"] = h.share()
        else:
            out.update(self._block(self.ulp_q, self.s_ulp, self.nf, self.max_ulp, percentiles))
            nf = max(self.nf, 1)
            out["share"] = {k: int(c) / nf for k, c in zip(("0", "1", ">=2"), self.ulp_share)}
        return out

    def compact(self) -> None:
        """Keep the results, drop the bulk: after this, :meth:`error_stats` (default
        percentiles) comes from a cache, the real-valued abs / rel quantile stores are gone
        and the ULP histogram is trimmed. A comparison holding thousands of finished pairs
        then costs kilobytes per pair instead of up to tens of MiB."""
        self._final = self.error_stats()
        self.abs_q = self.rel_q = None
        if self.ulp_hist is not None:
            self.ulp_hist.trim()

    def error_stats(self, percentiles=(50, 99)) -> dict:
        if self._final is not None and tuple(percentiles) == (50, 99):
            return self._final
        return {
            "count": self.n,
            "dtype": str(self.a_dtype),
            "ref_dtype": str(self.ref_dtype),
            "finite": self.nf,
            "bit_equal": self.bit_equal if self.same else None,
            "abs": self._block(self.abs_q, self.s_ad, self.nf, self.max_abs, percentiles),
            "rel": {
                **self._block(self.rel_q, self.s_rel, self.rel_n, self.max_rel, percentiles),
                "count": self.rel_n,
                "excluded": self.rel_excluded,
            },
            "ulp": self.ulp_block(percentiles),
            "nan_mismatch": self.nan_mismatch,
            "inf_mismatch": self.inf_mismatch,
            "both_nan": self.both_nan,
            "both_inf": self.both_inf,
            "signed_zero": self.signed_zero,
            "normwise": (self.max_abs[0] / self.max_ay) if self.nf and self.max_ay > 0 else None,
        }


def _source_dtype(x) -> np.dtype:
    return native(x.dtype)  # chunks arrive byte-swapped to machine order (ChunkReader)


def accumulate(a, ref, *, jobs: int = 1, chunk: int = CHUNK, worst: int = 0, progress=None) -> PairStats:
    """One pass over ``a`` and ``ref`` (equal element counts), returning merged statistics.

    ``a`` and ``ref`` are compared element by element in C order. ``jobs > 1`` processes
    chunks on that many threads (numpy releases the GIL for the heavy loops).
    ``worst=k`` also keeps the flat indices of the ``k`` worst elements (by ULP; special-value
    mismatches first). ``progress(done_elements, total)`` is called after each chunk.
    """
    ra, rr = ChunkReader(a), ChunkReader(ref)
    if ra.size != rr.size:
        raise ValueError(f"element counts differ: {ra.size} vs {rr.size}")
    shape = tuple(getattr(a, "shape", (ra.size,)))
    ranges = chunk_ranges(ra.size, chunk)

    def work(part: list[tuple[int, int]]) -> PairStats:
        st = PairStats(_source_dtype(a), _source_dtype(ref), shape, worst=worst)
        for lo, hi in part:
            st.update(lo, ra.read(lo, hi), rr.read(lo, hi))
            ra.release(lo, hi)
            rr.release(lo, hi)
            if progress is not None:
                progress(hi - lo, ra.size)
        return st

    jobs = max(1, min(jobs, len(ranges)))
    if jobs == 1:
        return work(ranges)
    parts = [ranges[i::jobs] for i in range(jobs)]
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        results = list(pool.map(work, parts))
    finally:
        # Not waiting matters on ctrl+c: the interrupt must not sit behind the other threads' work.
        pool.shutdown(wait=False, cancel_futures=True)
    total = results[0]
    for other in results[1:]:
        total.merge(other)
    return total


def error_stats(a, ref, *, percentiles=(50, 99), jobs: int = 1) -> dict:
    """Error statistics of ``a`` against the reference ``ref``.

    Returns a dict with:

    * ``count`` — elements; ``finite`` — elements where both sides are finite (the only
      ones that enter the statistics).
    * ``abs`` — ``|a - ref|``; ``rel`` — ``|a - ref| / |ref|`` where ``|ref|`` is at least
      the smallest normal number of the measured format (``rel.excluded`` counts the rest);
      ``ulp`` — in the measured format (the less precise of the two dtypes). Each holds
      ``max``, ``argmax`` (an index into the array), ``mean`` and the requested
      percentiles (``p50``, ``p99``: the ``inverted_cdf`` definition, an observed value).
    * ``ulp.kind`` — ``"diff"`` when both dtypes are equal: the integer :func:`ulp_diff`,
      with exact percentiles from a histogram; ``"error"`` when ``ref`` is wider: the real
      :func:`ulp_error` ``|a - ref| / ulp(ref)``. ``ulp.share`` gives the fractions at 0,
      1 and >= 2 ULP (for ``"error"``: 0, within (0, 1], above 1 — each cut with a
      tolerance of ``min(2**(p-50), 1e-6)`` ULP for the reference's own float64 rounding).
    * ``exact`` flags: real-valued percentiles are exact while at most 2**21 values were
      seen, then come from a sketch accurate to 0.4%.
    * Counts ``nan_mismatch`` (NaN on exactly one side), ``both_nan``, ``inf_mismatch``
      (an infinity against a number, or opposite infinities), ``both_inf``,
      ``signed_zero`` (+0 against -0, same dtype only), ``bit_equal`` (same dtype only).
    * ``normwise`` — ``max |a - ref| / max |ref|``.

    Works chunk by chunk on memory-mapped arrays larger than RAM.
    """
    a_arr = a if hasattr(a, "dtype") else np.asarray(a)
    ref_arr = ref if hasattr(ref, "dtype") else np.asarray(ref)
    if getattr(a_arr, "shape", None) != getattr(ref_arr, "shape", None):
        raise ValueError(f"shapes differ: {a_arr.shape} vs {ref_arr.shape}")
    return accumulate(a_arr, ref_arr, jobs=jobs).error_stats(percentiles)


__all__ = ["PairStats", "accumulate", "error_stats", "common_format"]
