"""Streaming error statistics of an array against a reference.

One pass over both arrays in chunks (1 Mi elements, optionally on several threads), compiled
to machine code (:func:`fpinspect.numerics.kernels.fused_pass`), collects every sufficient
statistic that :func:`error_stats` and the named metrics of
:mod:`fpinspect.numerics.metrics` need. Everything merges, so the arrays may be memory maps
or :class:`~fpinspect.numerics.chunks.NpyFile` readers far larger than RAM.

Special values never enter a number: elements where either side is NaN or infinite are
counted (``nan_mismatch``, ``both_nan``, ``inf_mismatch``, ``both_inf``) and left out of
max / mean / percentiles. The exception is the reference script's trio (``script_*``:
cosine, max abs, max rel), computed over all elements exactly as
``fusion_precision_analyzer.py`` does, so a NaN there propagates just as it does in that script.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from . import kernels as K
from .chunks import CHUNK, ChunkReader, chunk_ranges, on_threads, readonly, unravel
from .decode import storage
from .dtypes import FORMATS, FloatFormat, common_format, dtype_name, float_format, is_supported, native
from .kl import kl_of_pass
from .quantiles import IntHistogram, RealQuantiles
from .results import ErrorBlock, ErrorStats, RelError, UlpShare, UlpStats

#: Real-valued errors are kept one per element (exact percentiles) up to this many elements.
EXACT_CAP = RealQuantiles.CAP
#: The percentiles of each error measure.
_PERCENTILES = (50, 99)


@cache
def _ulp_tables(fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """``(ulp, inverse)`` per binary exponent ``emin..emax`` of ``fmt``: Goldberg's ulp
    ``2**(e - p + 1)``, and its exact inverse where that is a normal float64 (else 0)."""
    e = np.arange(fmt.emin, fmt.emax + 1)
    ulp = np.ldexp(1.0, (e - fmt.p + 1).astype(np.int32))
    k = fmt.p - 1 - e
    inv = np.where((k >= -1022) & (k <= 1023), np.ldexp(1.0, np.clip(k, -1022, 1023).astype(np.int32)), 0.0)
    return ulp, inv


def _measured_format(a_dtype, ref_dtype) -> FloatFormat:
    """The format ULPs are counted in: the narrower (less precise) of the two sides."""
    cands = [float_format(d) for d in (a_dtype, ref_dtype) if is_supported(d)]
    if not cands:
        return float_format(np.float64)
    return min(cands, key=lambda f: (f.p, f.bits))


def merge_states(mine: np.ndarray, theirs: np.ndarray, unused: str) -> None:
    """Merge the running values ``theirs`` into ``mine`` (one-record arrays of
    :data:`~fpinspect.numerics.kernels.STATE`) by each field's rule
    (:data:`~fpinspect.numerics.kernels.FIELDS`), leaving out the field ``unused``."""
    old, new, other = mine[0].copy(), mine[0], theirs[0]
    for name, _, _, rule in K.FIELDS:
        kind, _, partner = rule.partition(":")
        a, b = old[name], other[name]
        if name == unused or kind == "own":
            continue
        if kind == "sum":
            new[name] = a + b
        elif kind == "max":
            new[name] = max(a, b)
        elif kind == "min":
            new[name] = min(a, b)
        elif kind == "or":
            new[name] = a | b
        elif kind == "argmax":
            if _beats(b, other[partner], a, old[partner]):
                new[name], new[partner] = b, other[partner]
        elif other["finite"]:  # "mean": with its m2 field, over the elements finite on both sides
            moments = (a, old[partner], old["finite"], other["finite"], b, other[partner])
            new[name], new[partner] = K.merge_moments.py_func(*moments)


class _Pass:
    """The running state of one thread's share of a pass: the arrays the kernel updates."""

    def __init__(self, plan: _Plan, keep: tuple[np.ndarray, np.ndarray, np.ndarray]):
        self.plan = plan
        self.keep = keep
        self.ulp_sum = 0  # exact (Python int) sum of the integer ULP distances below 2**32
        self.state = K.new_state()
        self.hist_exact = np.zeros(K.EXACT_BINS if plan.same else 1, dtype=np.int64)
        self.hist_log = np.zeros(K.LOG_BINS, dtype=np.int64)
        # the sketches: abs, rel and (kind "error") ULP, filled when values are not kept
        sizes = (K.SKETCH_STORE, K.SKETCH_STORE, 1 if plan.same else K.SKETCH_STORE)
        self.sketches = tuple(np.zeros(1 if plan.keep_values else n, dtype=np.int64) for n in sizes)
        self.worst_score = np.zeros(plan.worst, dtype=np.float64)
        self.worst_index = np.full(plan.worst, -1, dtype=np.int64)
        self.scratch = K.scratch()

    def feed(self, offset: int, raw_a: np.ndarray, raw_b: np.ndarray) -> None:
        """The pass over one chunk, given as its two sides' :meth:`_Plan.raw` bytes."""
        p = self.plan
        K.fused_pass(
            (raw_a, raw_b, p.code, p.table),
            p.mode,
            offset,
            p.fmt_args,
            self.state,
            (self.hist_exact, self.hist_log),
            (self.worst_score, self.worst_index),
            self.keep,
            self.sketches,
            self.scratch,
        )
        # the exact integer sum of ULP distances moves to Python before it could overflow 64 bits
        self.ulp_sum += int(self.state[0]["sum_ulp_diff"])
        self.state[0]["sum_ulp_diff"] = 0

    def merge(self, o: _Pass) -> None:
        merge_states(self.state, o.state, "max_ulp_error" if self.plan.same else "max_ulp_diff")
        self.ulp_sum += o.ulp_sum
        self.hist_exact += o.hist_exact
        self.hist_log += o.hist_log
        for mine, theirs in zip(self.sketches, o.sketches):
            mine += theirs
        if self.plan.worst:
            mine, theirs = self.state[0]["worst_filled"], o.state[0]["worst_filled"]
            score = np.concatenate([self.worst_score[:mine], o.worst_score[:theirs]])
            index = np.concatenate([self.worst_index[:mine], o.worst_index[:theirs]])
            order = np.lexsort((index, -score))[: self.plan.worst]
            self.state[0]["worst_filled"] = order.size
            self.worst_score[: order.size], self.worst_index[: order.size] = score[order], index[order]


def _beats(value, index, cur_value, cur_index) -> bool:
    """Whether ``(value, index)`` beats the current maximum: larger, or equal at a lower index."""
    return value > cur_value or (value == cur_value and 0 <= index < cur_index)


class _Plan:
    """How the kernel reads one kind of pair, and the measured format's facts as it takes them
    (``fmt_args``); ``keep_values``: the pass keeps every element's errors (exact percentiles).
    One per kind (:func:`_plan_for`), shared by all its pairs and never changed."""

    def __init__(self, a_dtype: np.dtype, ref_dtype: np.dtype, keep_values: bool, worst: int):
        self.kind = (a_dtype, ref_dtype, keep_values, worst)
        self.same = a_dtype == ref_dtype and is_supported(a_dtype)
        self.fmt = fmt = _measured_format(a_dtype, ref_dtype)
        self.keep_values, self.worst = keep_values, worst
        # one format on both sides is decoded as stored; anything else (integers, or two
        # different dtypes) is converted to float64 chunk by chunk
        self.code, self.table = storage(fmt if self.same else FORMATS["float64"])
        self.mode = (K.SAME_FORMAT if self.same else 0) | (K.KEEP_VALUES if keep_values else K.SKETCH)
        sign = 1 << ((fmt.bits if self.same else 64) - 1)
        ulp_size, inv_ulp = _ulp_tables(fmt)
        # tolerance at the share cuts, in ULPs: float64 rounding of the reference is ~2**(p-53) ULP
        share_tol = min(2.0 ** (fmt.p - 50), 1e-6)
        self.fmt_args = (
            fmt.tiny,
            np.uint64(sign),
            np.uint64(sign - 1),
            fmt.emin,
            inv_ulp,
            ulp_size,
            share_tol,
        )

    def __reduce__(self):
        return _plan_for, self.kind  # pickled as its kind: the one plan of that kind when unpickled

    def raw(self, chunk: np.ndarray) -> np.ndarray:
        """One side's chunk as the bytes the kernel decodes (:data:`code`)."""
        c = np.ascontiguousarray(chunk) if self.same else np.ascontiguousarray(chunk, dtype=np.float64)
        return readonly(c.view(np.uint8))

    def chunks(self, ra: ChunkReader, rr: ChunkReader, part, width: int):
        """``(lo, hi, raw_a, raw_b)`` for each range of ``part``, read into two buffers of
        ``width`` elements that every chunk reuses (``0``: fresh reads the caller may keep); a
        range's pages are released once the caller has taken it."""
        buf_a, buf_r = (ra.buffer(width), rr.buffer(width)) if width else (None, None)
        for lo, hi in part:
            yield lo, hi, self.raw(ra.read(lo, hi, buf_a)), self.raw(rr.read(lo, hi, buf_r))
            ra.release(lo, hi)
            rr.release(lo, hi)


@cache
def _plan_for(a_dtype: np.dtype, ref_dtype: np.dtype, keep_values: bool, worst: int) -> _Plan:
    """The one :class:`_Plan` of each kind of pair (made once: a small pair would feel it)."""
    return _Plan(a_dtype, ref_dtype, keep_values, worst)


class PairStats:
    """Sufficient statistics of one ``(a, ref)`` pair, from :func:`accumulate`: ``x`` is ``a``
    (under test), ``y`` the reference. Every running value of the pass is an attribute of the
    name it has in :data:`~fpinspect.numerics.kernels.FIELDS`, with: ``script_max_abs`` and
    ``script_max_rel`` NaN where a NaN entered them (``None`` without elements); ULPs:
    ``ulp_hist`` (kind "diff") or ``ulp_quantiles`` and ``ulp_share_counts`` (kind "error"),
    ``max_ulp``; quantile stores ``abs_quantiles``,
    ``rel_quantiles``; the ``worst`` elements' ``worst_score`` (ULPs; inf for a special-value
    mismatch) and flat ``worst_index``; ``kl`` when :func:`accumulate` computed it."""

    def __init__(self, plan: _Plan, state: _Pass, shape, a_dtype, ref_dtype):
        # the running values as Python numbers, read once (numpy scalars are slower to read)
        self.__dict__.update(zip(K.STATE.names, state.state.tolist()[0]))
        nf = self.finite
        self.shape = tuple(shape)
        self.a_dtype, self.ref_dtype = np.dtype(a_dtype), np.dtype(ref_dtype)
        self.plan = plan  # how the kernel reads this pair (the KL pass reads it the same way)
        self.same, self.fmt = plan.same, plan.fmt
        self.ulp_kind = "diff" if self.same else "error"
        self._final: ErrorStats | None = None  # error_stats(), once computed
        self.kl: float | None = None
        if self.script_max_abs_nan:
            self.script_max_abs = math.nan
        if self.script_max_rel_nan:
            self.script_max_rel = math.nan
        if not self.count:
            self.script_max_abs = self.script_max_rel = None
        kept = state.keep if plan.keep_values else (None, None, None)
        sketch_abs, sketch_rel, sketch_ulp = state.sketches
        self.abs_quantiles = RealQuantiles.collected(kept[0], sketch_abs, nf)
        self.rel_quantiles = RealQuantiles.collected(kept[1], sketch_rel, self.rel_count)
        self.ulp_hist = self.ulp_quantiles = None
        if self.same:
            huge = self.sum_ulp_diff_huge
            self.ulp_hist = IntHistogram(
                state.hist_exact,
                state.hist_log,
                nf,
                state.ulp_sum + huge if huge else state.ulp_sum,
                self.max_ulp_diff if nf else None,
            )
            self.max_ulp = self.ulp_hist.max if nf else -1
            self.ulp_share_counts = np.zeros(3, dtype=np.int64)
        else:
            self.ulp_quantiles = RealQuantiles.collected(kept[2], sketch_ulp, nf)
            self.max_ulp = self.max_ulp_error
            counts = (self.ulp_within_tol, self.ulp_within_one, self.ulp_above_one)
            self.ulp_share_counts = np.array(counts, dtype=np.int64)
        self.worst_score = state.worst_score[: self.worst_filled].copy()
        self.worst_index = state.worst_index[: self.worst_filled].copy()

    # -- results --------------------------------------------------------------------------
    def _index(self, flat: int):
        return None if flat < 0 else unravel(flat, self.shape)

    def _block(self, q: RealQuantiles, total: float, n: int, best: float, best_index: int) -> dict:
        """One error measure's fields of :class:`ErrorBlock`."""
        p50, p99 = q.percentiles(_PERCENTILES)
        return dict(
            max=best if n else None,
            argmax=self._index(best_index) if n else None,
            mean=total / n if n else None,
            p50=p50,
            p99=p99,
            exact=q.exact,
        )

    def _ulp(self) -> UlpStats:
        if self.same:
            h = self.ulp_hist
            (p50, exact50), (p99, exact99) = h.percentiles(_PERCENTILES)
            spread = dict(max=h.max, argmax=self._index(self.max_ulp_index) if h.n else None, mean=h.mean())
            spread.update(p50=p50, p99=p99, exact=exact50 and exact99)
            share = h.share()
        else:
            spread = self._block(
                self.ulp_quantiles, self.sum_ulp_error, self.finite, self.max_ulp, self.max_ulp_index
            )
            share = [int(c) / max(self.finite, 1) for c in self.ulp_share_counts]
        zero, one, two_or_more = share
        share = UlpShare(zero=zero, one=one, two_or_more=two_or_more)
        return UlpStats(kind=self.ulp_kind, dtype=self.fmt.name, **spread, share=share)

    def compact(self) -> None:
        """Keep the results, drop the bulk: after this, :meth:`error_stats` comes from a cache,
        the real-valued abs / rel quantile stores are gone and the ULP histogram is trimmed. A
        comparison holding thousands of finished pairs then costs kilobytes per pair instead of
        up to tens of MiB."""
        self.error_stats()
        self.abs_quantiles = self.rel_quantiles = None
        if self.ulp_hist is not None:
            self.ulp_hist.trim()

    def error_stats(self) -> ErrorStats:
        """The statistics (:func:`error_stats`), computed once."""
        if self._final is None:
            self._final = ErrorStats(
                count=self.count,
                dtype=dtype_name(self.a_dtype),
                ref_dtype=dtype_name(self.ref_dtype),
                finite=self.finite,
                bit_equal=self.bit_equal if self.same else None,
                abs=ErrorBlock(
                    **self._block(
                        self.abs_quantiles, self.sum_abs_diff, self.finite, self.max_abs, self.max_abs_index
                    )
                ),
                rel=RelError(
                    **self._block(
                        self.rel_quantiles, self.sum_rel, self.rel_count, self.max_rel, self.max_rel_index
                    ),
                    count=self.rel_count,
                    excluded=self.rel_excluded,
                ),
                ulp=self._ulp(),
                nan_mismatch=self.nan_mismatch,
                inf_mismatch=self.inf_mismatch,
                both_nan=self.both_nan,
                both_inf=self.both_inf,
                signed_zero=self.signed_zero,
                normwise=(self.max_abs / self.max_abs_ref) if self.finite and self.max_abs_ref > 0 else None,
            )
        return self._final


def accumulate(
    a, ref, *, jobs: int = 1, chunk: int = CHUNK, worst: int = 0, kl: bool = False, progress=None
) -> PairStats:
    """One compiled pass over ``a`` and ``ref`` (equal element counts), returning merged statistics.

    ``a`` and ``ref`` are compared element by element in C order. ``jobs > 1`` processes
    chunks on that many threads (the kernel runs without the GIL).
    ``worst=k`` also keeps the flat indices of the ``k`` worst elements (by ULP; special-value
    mismatches first). ``kl=True`` also computes msaccucmp's KL divergence (``PairStats.kl``):
    it needs both ranges first, so it takes a second pass — over the chunk still in memory when
    the pair is one chunk, else over the data again (:func:`~fpinspect.numerics.kl.kl_of_pass`).
    ``progress(done_elements, total)`` is called after each chunk.
    """
    ra, rr = ChunkReader(a), ChunkReader(ref)
    if ra.size != rr.size:
        raise ValueError(f"element counts differ: {ra.size} vs {rr.size}")
    shape = tuple(getattr(a, "shape", (ra.size,)))
    # chunks arrive byte-swapped to machine order (ChunkReader)
    a_dtype, ref_dtype = native(a.dtype), native(ref.dtype)
    plan = _plan_for(a_dtype, ref_dtype, ra.size <= EXACT_CAP, worst)
    ranges = chunk_ranges(ra.size, chunk)
    none = np.empty(0)
    if plan.keep_values:
        keep = (np.empty(ra.size), np.empty(ra.size), none if plan.same else np.empty(ra.size))
    else:
        keep = (none, none, none)

    last: list[tuple[np.ndarray, np.ndarray]] = []  # the bytes of the one chunk of a one-chunk pair

    def work(part: list[tuple[int, int]]) -> _Pass:
        state = _Pass(plan, keep)
        # a one-chunk pair keeps its chunk (for KL): its reads get buffers of their own
        for lo, hi, raw_a, raw_b in plan.chunks(ra, rr, part, chunk if len(ranges) > 1 else 0):
            state.feed(lo, raw_a, raw_b)
            if len(ranges) == 1:
                last.append((raw_a, raw_b))  # KL's pass reads the same bytes
            if progress is not None:
                progress(hi - lo, ra.size)
        return state

    total, *others = on_threads(work, ranges, jobs)
    for other in others:
        total.merge(other)
    stats = PairStats(plan, total, shape, a_dtype, ref_dtype)
    if kl:
        stats.kl = kl_of_pass(stats, [last[0]] if last else None, ra, rr, jobs)
    return stats


def error_stats(a, ref, *, jobs: int = 1) -> ErrorStats:
    """Error statistics of ``a`` against the reference ``ref``, an :class:`ErrorStats`:

    * ``count`` — elements; ``finite`` — elements where both sides are finite (the only
      ones that enter the statistics).
    * ``abs`` — ``|a - ref|``; ``rel`` — ``|a - ref| / |ref|`` where ``|ref|`` is at least
      the smallest normal number of the measured format (``rel.excluded`` counts the rest);
      ``ulp`` — in the measured format (the less precise of the two dtypes). Each holds
      ``max``, ``argmax`` (an index into the array), ``mean`` and the percentiles ``p50``,
      ``p99`` (the ``inverted_cdf`` definition, an observed value).
    * ``ulp.kind`` — ``"diff"`` when both dtypes are equal: the integer :func:`ulp_diff`,
      with exact percentiles from a histogram; ``"error"`` when ``ref`` is wider: the real
      :func:`ulp_error` ``|a - ref| / ulp(ref)``. ``ulp.share`` gives the fractions at 0
      (``zero``), 1 (``one``) and >= 2 ULP (``two_or_more``; for ``"error"``: 0, within (0, 1],
      above 1 — each cut with a tolerance of ``min(2**(p-50), 1e-6)`` ULP for the reference's
      own float64 rounding).
    * ``exact`` flags: real-valued percentiles are exact for arrays of at most 2**21
      elements, beyond that they come from a sketch accurate to 0.4%.
    * Counts ``nan_mismatch`` (NaN on exactly one side), ``both_nan``, ``inf_mismatch``
      (an infinity against a number, or opposite infinities), ``both_inf``,
      ``signed_zero`` (+0 against -0, same dtype only), ``bit_equal`` (same dtype only).
    * ``normwise`` — ``max |a - ref| / max |ref|``.

    ``to_json()`` gives the dict of the JSON reports (``ulp.share`` keyed ``"0"``, ``"1"``,
    ``">=2"``). Works chunk by chunk on memory-mapped arrays larger than RAM.
    """
    a_arr = a if hasattr(a, "dtype") else np.asarray(a)
    ref_arr = ref if hasattr(ref, "dtype") else np.asarray(ref)
    if getattr(a_arr, "shape", None) != getattr(ref_arr, "shape", None):
        raise ValueError(f"shapes differ: {a_arr.shape} vs {ref_arr.shape}")
    return accumulate(a_arr, ref_arr, jobs=jobs).error_stats()


__all__ = ["PairStats", "accumulate", "common_format", "error_stats"]
