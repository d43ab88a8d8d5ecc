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
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, partial

import numpy as np

from . import calls, compile_ahead
from . import kernels as K
from .chunks import CHUNK, ChunkReader, chunk_ranges, unravel
from .dtypes import FloatFormat, common_format, dtype_name, float_format, is_supported, native
from .jit import each_once
from .quantiles import IntHistogram, RealQuantiles
from .results import ErrorStats

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
#: Denominator guard of the reference script's cosine and relative error.
REF_GUARD = 1e-8
#: Real-valued errors are kept one per element (exact percentiles) up to this many elements.
EXACT_CAP = RealQuantiles.CAP

_NO_FLOATS = np.empty(0, dtype=np.float64)
_NO_FLOATS.flags.writeable = False
#: A stand-in for a pass's table of block kernels where a call only needs its type (a compile's).
_NO_TABLE = np.zeros(0, dtype=np.int64)


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view: numba compiles read-only and writable arrays separately, and memory
    maps are read-only, so every input is passed read-only (one compiled variant per width)."""
    if not a.flags.writeable:
        return a
    v = a.view()
    v.flags.writeable = False
    return v


@cache
def _decode_table(dtype: np.dtype) -> np.ndarray:
    """float64 value of every bit pattern of an 8- or 16-bit format (NaN patterns decode to NaN)."""
    fmt = float_format(dtype)
    with np.errstate(invalid="ignore"):  # NaN patterns of fp8 warn on the cast
        table = np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.uint).view(fmt.dtype).astype(np.float64)
    table.flags.writeable = False
    return table


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


@dataclass
class Moments:
    """Count, mean and sum of squared deviations (``m2``) of one side's finite elements."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def merge(self, o: Moments) -> None:
        """Chan, Golub and LeVeque's pairwise update."""
        if o.n == 0:
            return
        n = self.n + o.n
        delta = o.mean - self.mean
        self.m2 += o.m2 + delta * delta * self.n * o.n / n
        self.mean += delta * o.n / n
        self.n = n

    def std(self) -> float | None:
        """Population standard deviation, ``sqrt(m2 / n)``."""
        return math.sqrt(self.m2 / self.n) if self.n else None


def _initial(size: int, dtype, values: dict[int, float]) -> np.ndarray:
    a = np.zeros(size, dtype=dtype)
    for i, v in values.items():
        a[i] = v
    a.flags.writeable = False
    return a


#: What a pass's running values start from (a minimum from +inf, an index from -1, ...).
_ACC_START = _initial(
    K.N_ACC,
    np.float64,
    {
        K.MIN_X: math.inf,
        K.MIN_Y: math.inf,
        K.MAX_X: -math.inf,
        K.MAX_Y: -math.inf,
        K.MAX_ABS: -1.0,
        K.MAX_REL: -1.0,
        K.MAX_ULP_ERROR: -1.0,
    },
)
_CNT_START = _initial(K.N_CNT, np.int64, {K.MAX_ABS_INDEX: -1, K.MAX_REL_INDEX: -1, K.MAX_ULP_INDEX: -1})


class _Workspace:
    """One thread's arrays for the pass over a pair of at most :data:`EXACT_CAP` elements,
    reused pair after pair: allocating them (a 512 KiB histogram among them) cost a small
    pair more than its data. :class:`_Pass` resets what it reads and :meth:`_Pass.release`
    zeroes the histogram bins the pass touched; :class:`PairStats` keeps copies."""

    def __init__(self):
        self.acc = np.empty(K.N_ACC, dtype=np.float64)
        self.cnt = np.empty(K.N_CNT, dtype=np.int64)
        self.ucnt = np.empty(K.N_UCNT, dtype=np.uint64)
        self.hist_exact = np.zeros(K.EXACT_BINS, dtype=np.int64)
        self.hist_log = np.zeros(K.LOG_BINS, dtype=np.int64)
        # a pass keeping every value fills no sketch: one slot each, never touched
        self.sketches = [np.zeros(1, dtype=np.int64) for _ in range(3)]
        self.worst_score = np.empty(0, dtype=np.float64)
        self.worst_index = np.empty(0, dtype=np.int64)
        self.scratch = K.scratch(EXACT_CAP)
        self.busy = False


_local = threading.local()


def _workspace() -> _Workspace | None:
    """This thread's :class:`_Workspace`, or ``None`` while a pass of this thread holds it."""
    space = getattr(_local, "workspace", None)
    if space is None:
        space = _local.workspace = _Workspace()
    if space.busy:
        return None
    space.busy = True
    return space


class _Pass:
    """The running state of one thread's share of a pass: the arrays the kernel updates.

    A pass keeping every value (a small pair) works in its thread's :class:`_Workspace`
    until :meth:`release`; a larger one allocates its own arrays (its sketches alone are 6 MiB)."""

    def __init__(self, plan: _Plan, keep: tuple[np.ndarray, np.ndarray, np.ndarray]):
        self.plan = plan
        self.keep = keep
        self.ulp_sum = 0  # exact (Python int) sum of the integer ULP distances below 2**32
        self.finishing = False  # whether finish_pass was called (its compile waited for)
        # chunks whose rarer work waits for finish_pass's compile, another process's: (offset,
        # a function reading the chunk's views again, the chunk's block record)
        self.deferred: list[tuple[int, Callable, np.ndarray]] = []
        space = self.space = _workspace() if plan.keep_values else None
        if space is not None:
            self.acc, self.cnt, self.ucnt = space.acc, space.cnt, space.ucnt
            self.acc[:] = _ACC_START
            self.cnt[:] = _CNT_START
            self.ucnt[:] = 0
            self.hist_exact, self.hist_log = space.hist_exact, space.hist_log
            self.sketches = space.sketches
            if space.worst_score.size != plan.worst:
                space.worst_score = np.zeros(plan.worst, dtype=np.float64)
                space.worst_index = np.full(plan.worst, -1, dtype=np.int64)
            self.worst_score, self.worst_index = space.worst_score, space.worst_index
            self.scratch = space.scratch
            return
        self.acc = _ACC_START.copy()
        self.cnt = _CNT_START.copy()
        self.ucnt = np.zeros(K.N_UCNT, dtype=np.uint64)
        same = plan.same
        self.hist_exact = np.zeros(K.EXACT_BINS if same else 1, dtype=np.int64)
        self.hist_log = np.zeros(K.LOG_BINS, dtype=np.int64)
        self.sketches = [
            np.zeros(K.SKETCH_STORE if plan.sketch and use else 1, dtype=np.int64)
            for use in (True, True, not same)
        ]
        self.worst_score = np.zeros(plan.worst, dtype=np.float64)
        self.worst_index = np.full(plan.worst, -1, dtype=np.int64)
        self.scratch = K.scratch(CHUNK)

    def release(self) -> None:
        """Hand the workspace back, its histogram zeroed where this pass counted: every
        distance counted is at most the largest one (the only bins above it, up to
        ``SMALL_DIST``, were added zeros)."""
        space, self.space = self.space, None
        if space is None:
            return
        if self.plan.same and self.cnt[K.FINITE] > 0:
            top = int(self.ucnt[K.MAX_ULP_DIFF])
            space.hist_exact[: min(top, K.EXACT_BINS - 1) + 1] = 0
        space.hist_log[:] = 0
        space.busy = False

    def feed(self, offset: int, va: tuple, vb: tuple, again: Callable | None = None) -> None:
        """The pass over one chunk, given as its two sides' :meth:`_Plan.views`. ``again()``,
        where given, reads those views again: while a child process is yet to cache
        :func:`~fpinspect.numerics.kernels.finish_pass` (a first call, compile cache empty), the
        chunk's rarer work is then deferred, with its block record, to the first chunk after
        the child has (or to :meth:`close`), instead of waiting for it; chunks are finished in
        their order all the same, and what finish_pass reads of the running state is its own or
        comes out the same in either order (maxima; sums that a non-finite term makes inf or
        NaN), so the statistics are those of finishing each chunk at once."""
        K.fused_pass(*self._arguments(offset, va, vb))
        if not self.finishing:  # finish_pass may be what a child is compiling
            if again is not None and compile_ahead.coming(K.finish_pass):
                blocks = -(-va[0].size // K.BLOCK)
                self.deferred.append((offset, again, self.scratch[3][:, :blocks].copy()))
                self._flush_ulp_sum()
                return
            self._finish_deferred()
        K.finish_pass(*self._finish_arguments(offset, va, vb))
        self._flush_ulp_sum()

    def close(self) -> None:
        """After the last chunk: the rarer work of the chunks still deferred."""
        if not self.finishing:
            self._finish_deferred()

    def _finish_deferred(self) -> None:
        """Wait for finish_pass's compile (a child's; at once if cached), then finish the
        deferred chunks, in their order."""
        compile_ahead.wait(K.finish_pass)
        self.finishing = True
        deferred, self.deferred = self.deferred, []
        for offset, again, rec in deferred:
            va, vb = again()
            K.finish_pass(*self._finish_arguments(offset, va, vb, rec))
            self._flush_ulp_sum()

    def _flush_ulp_sum(self) -> None:
        """Move the exact integer sum of ULP distances to Python before it could overflow 64 bits."""
        self.ulp_sum += int(self.ucnt[K.SUM_ULP_DIFF])
        self.ucnt[K.SUM_ULP_DIFF] = 0

    def _scratch(self, va: tuple) -> tuple:
        """The scratch arrays, with a block record wide enough for this chunk."""
        if va[0].size > self.scratch[3].shape[1] * K.BLOCK:
            self.scratch = K.scratch(va[0].size)
            if self.space is not None:
                self.space.scratch = self.scratch
        return self.scratch

    def _arguments(self, offset: int, va: tuple, vb: tuple, fns: np.ndarray | None = None) -> tuple:
        """The arguments of :func:`~fpinspect.numerics.kernels.fused_pass` for one chunk; its
        table of block kernels (:mod:`~fpinspect.numerics.calls`) is ``fns`` where given (a
        stand-in of the same type: the arguments of a compile that does not call), else the
        plan's (:meth:`_Plan.tables`)."""
        args = (
            *self._chunk_arguments(offset, va, vb),
            self.plan.share_tol,
            *self.keep,
            *self.sketches,
            *self._scratch(va),
        )
        if fns is None:
            fns = self.plan.tables(K.block_calls, args)
        return (*args, fns)

    def _finish_arguments(
        self, offset: int, va: tuple, vb: tuple, rec: np.ndarray | None = None, fns: np.ndarray | None = None
    ) -> tuple:
        """The arguments of :func:`~fpinspect.numerics.kernels.finish_pass` for the same chunk
        (its block record ``rec``: by default the one the last fused pass left; ``fns`` as for
        :meth:`_arguments`)."""
        values, _, _, last = self.scratch
        args = (
            *self._chunk_arguments(offset, va, vb),
            self.hist_log,
            self.worst_score,
            self.worst_index,
            values,
            last if rec is None else rec,
        )
        if fns is None:
            fns = self.plan.tables(K.finish_calls, args)
        return (*args, fns)

    def _chunk_arguments(self, offset: int, va: tuple, vb: tuple) -> tuple:
        """What both kernels of the pass take first: the chunk's two sides, the plan's facts of the
        measured format and the running state."""
        p = self.plan
        ua, fa, ta = va
        ub, fb, tb = vb
        return (
            ua,
            ub,
            fa,
            fb,
            ta,
            tb,
            p.mode,
            offset,
            p.tiny,
            p.sign_mask,
            p.mag_mask,
            p.emin,
            p.inv_ulp,
            p.ulp_size,
            self.acc,
            self.cnt,
            self.ucnt,
            self.hist_exact,
        )

    def merge(self, o: _Pass) -> None:
        acc, cnt, oa, oc = self.acc, self.cnt, o.acc, o.cnt
        for i in (
            K.SCRIPT_DOT,
            K.SCRIPT_SUM_XX,
            K.SCRIPT_SUM_YY,
            K.SUM_SQ_DIFF,
            K.SUM_ABS_DIFF,
            K.SUM_SQ_REF,
            K.MSACCUCMP_SUM_REL,
            K.SUM_REL,
            K.SUM_ULP_ERROR,
            K.SUM_ULP_DIFF_HUGE,
        ):
            acc[i] += oa[i]
        for i in (K.SCRIPT_MAX_ABS, K.SCRIPT_MAX_REL, K.MAX_ABS_REF, K.MSACCUCMP_MAX_REL, K.MAX_X, K.MAX_Y):
            acc[i] = max(acc[i], oa[i])
        for i in (K.MIN_X, K.MIN_Y):
            acc[i] = min(acc[i], oa[i])
        for i in (
            K.COUNT,
            K.BOTH_NAN,
            K.NAN_MISMATCH,
            K.BOTH_INF,
            K.INF_MISMATCH,
            K.BIT_EQUAL,
            K.SIGNED_ZERO,
            K.BELOW_ONE_THOUSANDTH,
            K.BELOW_FIVE_THOUSANDTHS,
            K.REL_COUNT,
            K.REL_EXCLUDED,
            K.ULP_WITHIN_TOL,
            K.ULP_WITHIN_ONE,
            K.ULP_ABOVE_ONE,
        ):
            cnt[i] += oc[i]
        cnt[K.SCRIPT_MAX_ABS_NAN] |= oc[K.SCRIPT_MAX_ABS_NAN]
        cnt[K.SCRIPT_MAX_REL_NAN] |= oc[K.SCRIPT_MAX_REL_NAN]
        # maxima with their index: larger wins, equal values go to the lower index
        for v, i in ((K.MAX_ABS, K.MAX_ABS_INDEX), (K.MAX_REL, K.MAX_REL_INDEX)):
            if _beats(oa[v], oc[i], acc[v], cnt[i]):
                acc[v], cnt[i] = oa[v], oc[i]
        if self.plan.same:
            if _beats(
                int(o.ucnt[K.MAX_ULP_DIFF]),
                oc[K.MAX_ULP_INDEX],
                int(self.ucnt[K.MAX_ULP_DIFF]),
                cnt[K.MAX_ULP_INDEX],
            ):
                self.ucnt[K.MAX_ULP_DIFF], cnt[K.MAX_ULP_INDEX] = o.ucnt[K.MAX_ULP_DIFF], oc[K.MAX_ULP_INDEX]
        elif _beats(oa[K.MAX_ULP_ERROR], oc[K.MAX_ULP_INDEX], acc[K.MAX_ULP_ERROR], cnt[K.MAX_ULP_INDEX]):
            acc[K.MAX_ULP_ERROR], cnt[K.MAX_ULP_INDEX] = oa[K.MAX_ULP_ERROR], oc[K.MAX_ULP_INDEX]
        for side, (mean, m2) in ((K.FINITE, (K.MEAN_X, K.M2_X)), (K.FINITE, (K.MEAN_Y, K.M2_Y))):
            m = Moments(int(cnt[side]), acc[mean], acc[m2])
            m.merge(Moments(int(oc[side]), oa[mean], oa[m2]))
            acc[mean], acc[m2] = m.mean, m.m2
        cnt[K.FINITE] += oc[K.FINITE]
        self.ulp_sum += o.ulp_sum
        self.hist_exact += o.hist_exact
        self.hist_log += o.hist_log
        for mine, theirs in zip(self.sketches, o.sketches):
            mine += theirs
        if self.plan.worst:
            score = np.concatenate(
                [self.worst_score[: cnt[K.WORST_FILLED]], o.worst_score[: oc[K.WORST_FILLED]]]
            )
            index = np.concatenate(
                [self.worst_index[: cnt[K.WORST_FILLED]], o.worst_index[: oc[K.WORST_FILLED]]]
            )
            order = np.lexsort((index, -score))[: self.plan.worst]
            cnt[K.WORST_FILLED] = order.size
            self.worst_score[: order.size], self.worst_index[: order.size] = score[order], index[order]


def _beats(value, index, cur_value, cur_index) -> bool:
    """Whether ``(value, index)`` beats the current maximum: larger, or equal at a lower index."""
    return value > cur_value or (value == cur_value and 0 <= index < cur_index)


class _Plan:
    """How the kernel sees one kind of pair: value decoding per side, the measured format's
    facts. ``keep_values``: the pass keeps every element's errors (exact percentiles). One is
    made per kind (:func:`_plan_for`) and shared by all its pairs: it is never changed."""

    def __init__(self, a_dtype: np.dtype, ref_dtype: np.dtype, keep_values: bool, worst: int):
        self.kind = (a_dtype, ref_dtype, keep_values, worst)
        self.same = a_dtype == ref_dtype and is_supported(a_dtype)
        self.fmt = _measured_format(a_dtype, ref_dtype)
        fmt = self.fmt
        self.worst = worst
        # 8/16-bit formats decode through a table; 32/64-bit ones are read as floats; anything
        # else (integers, or two different dtypes) is converted to float64 chunk by chunk.
        if self.same:
            self.a_decode = self.b_decode = "table" if fmt.bits <= 16 else "float"
        else:
            self.a_decode = self.b_decode = "float64"
        self.keep_values = keep_values
        self.sketch = not self.keep_values
        mode = K.USE_TABLE if self.a_decode == "table" else 0
        mode |= K.SAME_FORMAT if self.same else 0
        mode |= K.KEEP_VALUES if self.keep_values else K.SKETCH
        self.mode = mode
        self.tiny = fmt.tiny
        # Tolerance at the share cuts, in ULPs: float64 rounding of the reference is ~2**(p-53) ULP.
        self.share_tol = min(2.0 ** (fmt.p - 50), 1e-6)
        bits = fmt.bits if self.same else 64
        self.sign_mask = np.uint64(1 << (bits - 1))
        self.mag_mask = np.uint64((1 << (bits - 1)) - 1)
        self.emin = fmt.emin
        self.ulp_size, self.inv_ulp = _ulp_tables(fmt)
        self._tables: dict = {}  # what tables() made, by the kernel list it was made from

    def tables(self, calls_of, args: tuple) -> np.ndarray:
        """The table of the block kernels a pass of this kind calls (:mod:`~fpinspect.numerics.calls`):
        ``calls_of(*args)`` (:func:`~fpinspect.numerics.kernels.block_calls` or ``finish_calls``),
        made once. The arguments' types are the plan's: every view is read-only (:meth:`views`),
        the rest the pass's own arrays; the kernels check each entry against the types they
        pass (a table made for others is a ``RuntimeError``, never a wrong call). Made on first
        use, after the compile of those kernels that another process shared (a kernel loads
        from the cache then, instead of compiling here)."""
        fns = self._tables.get(calls_of)
        if fns is None:  # two threads may both make it: the same table, either kept
            kernels = calls_of(*args)
            for kernel, _ in kernels:  # one a child is compiling: its, not compiled here again
                compile_ahead.wait(kernel)
            fns = self._tables[calls_of] = calls.table(kernels)
        return fns

    def __reduce__(self):
        return _plan_for, self.kind  # pickled as its kind: the one plan of that kind when unpickled

    def views(self, chunk: np.ndarray, decode: str):
        """``(raw bits, float values, decode table)`` of one chunk, as the kernel reads them."""
        if decode == "float64":
            f = _readonly(np.ascontiguousarray(chunk, dtype=np.float64))
            return f.view(np.uint64), f, _NO_FLOATS
        c = _readonly(np.ascontiguousarray(chunk))
        u = c.view(self.fmt.uint)
        if decode == "table":
            return u, _NO_FLOATS, _decode_table(self.fmt.dtype)
        return u, c, _NO_FLOATS


@cache
def _percentile_key(p: float) -> str:
    """The key of percentile ``p`` in :meth:`PairStats.error_stats`: ``p50``, ``p99.9``."""
    return f"p{p:g}"


@cache
def _plan_for(a_dtype: np.dtype, ref_dtype: np.dtype, keep_values: bool, worst: int) -> _Plan:
    """The one :class:`_Plan` of each kind of pair (making one cost a small pair ~15 us)."""
    return _Plan(a_dtype, ref_dtype, keep_values, worst)


class PairStats:
    """Sufficient statistics of one ``(a, ref)`` pair, from :func:`accumulate`.

    ``x`` is ``a`` (under test), ``y`` the reference. Counts: ``count`` elements, ``finite``
    of them finite on both sides, ``bit_equal``, ``signed_zero`` (+0 against -0),
    ``both_nan``, ``nan_mismatch``, ``both_inf``, ``inf_mismatch``.

    The reference script's quantities, over all elements: ``script_dot`` = sum x*y,
    ``script_sum_sq_x``, ``script_sum_sq_y``, ``script_max_abs`` = max |x - y|,
    ``script_max_rel`` = max |x - y| / (max(|x|, |y|) + 1e-8) (``None`` without elements).

    Over the finite elements: ``sum_sq_diff`` = sum (x - y)^2, ``sum_abs_diff``,
    ``sum_sq_ref`` = sum y^2, ``max_abs_ref`` = max |y|; ``max_abs`` / ``max_abs_index``;
    the toolkit's relative error |x - y| / |y| where |y| is at least the smallest normal of
    the measured format: ``rel_count``, ``rel_excluded``, ``sum_rel``, ``max_rel`` /
    ``max_rel_index``; msaccucmp's |x - y| / |y| where |y| > float64 eps (0 elsewhere):
    ``msaccucmp_sum_rel``, ``msaccucmp_max_rel``; msprobe's counts of |x - y| / |y| (eps32
    standing in for y == 0) below 0.001 and 0.005: ``below_one_thousandth``,
    ``below_five_thousandths``; ``x_moments`` / ``y_moments`` (:class:`Moments`), ``min_x``,
    ``max_x``, ``min_y``, ``max_y``; ULPs: ``ulp_hist`` (kind "diff") or ``ulp_quantiles``,
    ``sum_ulp_error``, ``ulp_share_counts`` (kind "error"), ``max_ulp`` / ``max_ulp_index``;
    quantile stores ``abs_quantiles``, ``rel_quantiles``; the ``worst`` elements' ``worst_score``
    (ULPs; inf for a special-value mismatch) and flat ``worst_index``.
    """

    def __init__(self, plan: _Plan, state: _Pass, shape, a_dtype, ref_dtype):
        # the running values as Python numbers, read once (a numpy scalar per field cost ~40 us)
        acc, cnt = state.acc.tolist(), state.cnt.tolist()
        self.shape = tuple(shape)
        self.a_dtype, self.ref_dtype = np.dtype(a_dtype), np.dtype(ref_dtype)
        self.plan = plan  # how the kernel reads this pair (the KL pass reads it the same way)
        self.same, self.fmt = plan.same, plan.fmt
        self.ulp_kind = "diff" if self.same else "error"
        self._final: dict | None = None  # error_stats() with the default percentiles, once computed
        self._lent: tuple[np.ndarray, ...] = ()  # kept-value buffers compact() hands back for reuse
        self.kl: float | None = None  # msaccucmp's KL divergence, when accumulate(kl=True) computed it
        self.count = cnt[K.COUNT]
        self.finite = nf = cnt[K.FINITE]
        self.both_nan = cnt[K.BOTH_NAN]
        self.nan_mismatch = cnt[K.NAN_MISMATCH]
        self.both_inf = cnt[K.BOTH_INF]
        self.inf_mismatch = cnt[K.INF_MISMATCH]
        self.bit_equal = cnt[K.BIT_EQUAL]
        self.signed_zero = cnt[K.SIGNED_ZERO]
        self.below_one_thousandth = cnt[K.BELOW_ONE_THOUSANDTH]
        self.below_five_thousandths = cnt[K.BELOW_FIVE_THOUSANDTHS]
        self.rel_count = cnt[K.REL_COUNT]
        self.rel_excluded = cnt[K.REL_EXCLUDED]
        has = self.count > 0
        self.script_dot = acc[K.SCRIPT_DOT]
        self.script_sum_sq_x = acc[K.SCRIPT_SUM_XX]
        self.script_sum_sq_y = acc[K.SCRIPT_SUM_YY]
        self.script_max_abs = math.nan if cnt[K.SCRIPT_MAX_ABS_NAN] else acc[K.SCRIPT_MAX_ABS]
        self.script_max_rel = math.nan if cnt[K.SCRIPT_MAX_REL_NAN] else acc[K.SCRIPT_MAX_REL]
        if not has:
            self.script_max_abs = self.script_max_rel = None
        self.sum_sq_diff = acc[K.SUM_SQ_DIFF]
        self.sum_abs_diff = acc[K.SUM_ABS_DIFF]
        self.sum_sq_ref = acc[K.SUM_SQ_REF]
        self.max_abs_ref = acc[K.MAX_ABS_REF]
        self.max_abs, self.max_abs_index = acc[K.MAX_ABS], cnt[K.MAX_ABS_INDEX]
        self.max_rel, self.max_rel_index = acc[K.MAX_REL], cnt[K.MAX_REL_INDEX]
        self.sum_rel = acc[K.SUM_REL]
        self.msaccucmp_sum_rel = acc[K.MSACCUCMP_SUM_REL]
        self.msaccucmp_max_rel = acc[K.MSACCUCMP_MAX_REL]
        self.x_moments = Moments(nf, acc[K.MEAN_X], acc[K.M2_X])
        self.y_moments = Moments(nf, acc[K.MEAN_Y], acc[K.M2_Y])
        self.min_x, self.max_x = acc[K.MIN_X], acc[K.MAX_X]
        self.min_y, self.max_y = acc[K.MIN_Y], acc[K.MAX_Y]
        keep_abs, keep_rel, keep_ulp = state.keep
        sketch_abs, sketch_rel, sketch_ulp = state.sketches
        self.abs_quantiles = RealQuantiles.collected(keep_abs if plan.keep_values else None, sketch_abs, nf)
        self.rel_quantiles = RealQuantiles.collected(
            keep_rel if plan.keep_values else None, sketch_rel, self.rel_count
        )
        self.max_ulp_index = cnt[K.MAX_ULP_INDEX]
        if self.same:
            huge = acc[K.SUM_ULP_DIFF_HUGE]
            hist = IntHistogram.collected(
                state.hist_exact,
                state.hist_log,
                nf,
                state.ulp_sum + huge if huge else state.ulp_sum,
                int(state.ucnt[K.MAX_ULP_DIFF]) if nf else None,
                copy=state.space is not None,  # the thread's workspace serves the next pair
            )
            self.ulp_hist, self.ulp_quantiles = hist, None
            self.max_ulp = hist.max if nf else -1
            self.sum_ulp_error = 0.0
            self.ulp_share_counts = np.zeros(3, dtype=np.int64)
        else:
            self.ulp_hist = None
            self.ulp_quantiles = RealQuantiles.collected(
                keep_ulp if plan.keep_values else None, sketch_ulp, nf
            )
            self.max_ulp = acc[K.MAX_ULP_ERROR]
            self.sum_ulp_error = acc[K.SUM_ULP_ERROR]
            self.ulp_share_counts = state.cnt[[K.ULP_WITHIN_TOL, K.ULP_WITHIN_ONE, K.ULP_ABOVE_ONE]].copy()
        filled = cnt[K.WORST_FILLED]
        self.worst_score = state.worst_score[:filled].copy()
        self.worst_index = state.worst_index[:filled].copy()

    # -- results --------------------------------------------------------------------------
    def _index(self, flat: int):
        return None if flat < 0 else unravel(flat, self.shape)

    def _block(
        self, q: RealQuantiles, total: float, n: int, best: float, best_index: int, percentiles
    ) -> dict:
        out = {
            "max": best if n else None,
            "argmax": self._index(best_index) if n else None,
            "mean": total / n if n else None,
        }
        for p, v in zip(percentiles, q.percentiles(percentiles)):
            out[_percentile_key(p)] = v
        out["exact"] = q.exact
        return out

    def ulp_block(self, percentiles=(50, 99)) -> dict:
        out = {"kind": self.ulp_kind, "dtype": self.fmt.name}
        if self.same:
            h = self.ulp_hist
            out.update(max=h.max, argmax=self._index(self.max_ulp_index) if h.n else None, mean=h.mean())
            exact = True
            for p, (v, ex) in zip(percentiles, h.percentiles(percentiles)):
                out[_percentile_key(p)] = v
                exact &= ex
            out["exact"] = exact
            out["share"] = h.share()
        else:
            out.update(
                self._block(
                    self.ulp_quantiles,
                    self.sum_ulp_error,
                    self.finite,
                    self.max_ulp,
                    self.max_ulp_index,
                    percentiles,
                )
            )
            nf = max(self.finite, 1)
            out["share"] = {k: int(c) / nf for k, c in zip(("0", "1", ">=2"), self.ulp_share_counts)}
        return out

    def compact(self) -> None:
        """Keep the results, drop the bulk: after this, :meth:`error_stats` (default
        percentiles) comes from a cache, the real-valued abs / rel quantile stores are gone
        and the ULP histogram is trimmed. A comparison holding thousands of finished pairs
        then costs kilobytes per pair instead of up to tens of MiB. The kept abs / rel values'
        buffers go to this thread's next pair (:func:`_lend_kept`): a store taken from this
        object before reads as empty afterwards."""
        self._final = self.error_stats()
        for q in (self.abs_quantiles, self.rel_quantiles):
            if q is not None:  # someone still holding the store sees it empty, never reused memory
                q.values, q.kept, q.n = [], 0, 0
        self.abs_quantiles = self.rel_quantiles = None
        lent, self._lent = self._lent, ()
        _take_back_kept(lent)
        if self.ulp_hist is not None:
            self.ulp_hist.trim()

    def error_stats(self, percentiles=(50, 99)) -> dict:
        """The statistics as a dict; the one with the default percentiles is kept (and typed by
        :func:`error_stats`)."""
        default = tuple(percentiles) == (50, 99)
        if self._final is not None and default:
            return self._final
        out = self._error_stats(percentiles)
        if default:
            self._final = out
        return out

    def _error_stats(self, percentiles) -> dict:
        return {
            "count": self.count,
            "dtype": dtype_name(self.a_dtype),
            "ref_dtype": dtype_name(self.ref_dtype),
            "finite": self.finite,
            "bit_equal": self.bit_equal if self.same else None,
            "abs": self._block(
                self.abs_quantiles,
                self.sum_abs_diff,
                self.finite,
                self.max_abs,
                self.max_abs_index,
                percentiles,
            ),
            "rel": {
                **self._block(
                    self.rel_quantiles,
                    self.sum_rel,
                    self.rel_count,
                    self.max_rel,
                    self.max_rel_index,
                    percentiles,
                ),
                "count": self.rel_count,
                "excluded": self.rel_excluded,
            },
            "ulp": self.ulp_block(percentiles),
            "nan_mismatch": self.nan_mismatch,
            "inf_mismatch": self.inf_mismatch,
            "both_nan": self.both_nan,
            "both_inf": self.both_inf,
            "signed_zero": self.signed_zero,
            "normwise": (self.max_abs / self.max_abs_ref) if self.finite and self.max_abs_ref > 0 else None,
        }


def accumulate(
    a, ref, *, jobs: int = 1, chunk: int = CHUNK, worst: int = 0, kl: bool = False, progress=None
) -> PairStats:
    """One compiled pass over ``a`` and ``ref`` (equal element counts), returning merged statistics.

    ``a`` and ``ref`` are compared element by element in C order. ``jobs > 1`` processes
    chunks on that many threads (the kernel runs without the GIL).
    ``worst=k`` also keeps the flat indices of the ``k`` worst elements (by ULP; special-value
    mismatches first). ``kl=True`` also computes msaccucmp's KL divergence (``PairStats.kl``):
    it needs both ranges first, so it takes a second pass — over the chunk still in memory when
    the pair is one chunk, else over the data again (:func:`kl_divergence_of`).
    ``progress(done_elements, total)`` is called after each chunk.
    """
    ra, rr = ChunkReader(a), ChunkReader(ref)
    if ra.size != rr.size:
        raise ValueError(f"element counts differ: {ra.size} vs {rr.size}")
    shape = tuple(getattr(a, "shape", (ra.size,)))
    # chunks arrive byte-swapped to machine order (ChunkReader)
    a_dtype, ref_dtype = native(a.dtype), native(ref.dtype)
    plan = _plan_for(a_dtype, ref_dtype, ra.size <= EXACT_CAP, worst)
    if plan.kind not in _announced:  # the first pair of this kind in the process
        _announced.add(plan.kind)
        _announce(plan, a_dtype, ref_dtype, ra.size, kl)
    compile_ahead.start(a_dtype, ref_dtype, ra.size, kl)
    ranges = chunk_ranges(ra.size, chunk)
    if plan.keep_values:
        # abs and rel values are handed back by PairStats.compact() for the next pair to reuse
        keep = (_lend_kept(ra.size), _lend_kept(ra.size), _EMPTY_KEEP if plan.same else np.empty(ra.size))
    else:
        keep = (_EMPTY_KEEP, _EMPTY_KEEP, _EMPTY_KEEP)
    passes: list[_Pass] = []

    last: list[tuple[tuple, tuple]] = []  # the views of the one chunk of a one-chunk pair

    def work(part: list[tuple[int, int]]) -> _Pass:
        state = _Pass(plan, keep)
        passes.append(state)
        # a one-chunk pair keeps its chunk (for KL): its reads get buffers of their own
        width = chunk if len(ranges) > 1 else 0
        buf_a, buf_r = (ra.buffer(width), rr.buffer(width)) if width else (None, None)
        spare: list = []  # buffers for reading a chunk again (its rarer work deferred)

        def again(lo: int, hi: int) -> tuple:
            if not spare:
                spare.extend((ra.buffer(width), rr.buffer(width)))
            return (
                plan.views(ra.read(lo, hi, spare[0]), plan.a_decode),
                plan.views(rr.read(lo, hi, spare[1]), plan.b_decode),
            )

        for lo, hi in part:
            va, vb = (
                plan.views(ra.read(lo, hi, buf_a), plan.a_decode),
                plan.views(rr.read(lo, hi, buf_r), plan.b_decode),
            )
            state.feed(lo, va, vb, partial(again, lo, hi) if width and not state.finishing else None)
            if len(ranges) == 1:
                last.append((va, vb))  # KL's pass reads the same views
            ra.release(lo, hi)
            rr.release(lo, hi)
            if progress is not None:
                progress(hi - lo, ra.size)
        state.close()
        return state

    jobs = max(1, min(jobs, len(ranges)))
    try:
        if jobs == 1:
            total = work(ranges)
        else:
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
        stats = PairStats(plan, total, shape, a_dtype, ref_dtype)
    finally:
        for state in passes:
            state.release()
    if plan.keep_values:
        stats._lent = keep[:2]
    if kl:
        stats.kl = _kl_divergence(stats, [last[0]] if last else None, ra, rr, jobs)
    return stats


_EMPTY_KEEP = np.empty(0, dtype=np.float64)
#: The plan kinds whose pass compile_ahead.announce was asked about (once each per process).
_announced: set[tuple] = set()


def _announce(plan: _Plan, a_dtype, ref_dtype, size: int, kl: bool) -> None:
    """Tell :func:`~fpinspect.numerics.compile_ahead.on_compile`'s listener when this first pair of
    the plan's kind will compile the pass (before anything compiles: the child may compile it)."""
    what = f"{plan.fmt.name} pairs" if plan.same else f"{plan.fmt.name} against a wider reference"
    compile_ahead.announce(*_calls(a_dtype, ref_dtype, size, kl)[0][0], what)


#: Kept-value buffers of at most this many elements go back to their thread for reuse.
_LENT_MAX = 1 << 18
#: ... and at most this many per thread.
_LENT_PER_THREAD = 4


def _lend_kept(n: int) -> np.ndarray:
    """``n`` float64 slots for a pass's kept values: a buffer of this thread's that a finished
    pair handed back (:func:`_take_back_kept`), or a fresh one. The pass writes every slot,
    so nothing of the pair before can show through. A fresh 256 KiB array costs its page
    faults, more than a small pair's whole pass."""
    free = getattr(_local, "kept", None)
    if free is None:
        free = _local.kept = []
    best = None
    for i, buf in enumerate(free):
        if buf.size >= n and (best is None or buf.size < free[best].size):
            best = i
    if best is not None:
        return free.pop(best)[:n]
    return np.empty(max(n, 1 << max(n - 1, 0).bit_length()) if n <= _LENT_MAX else n, dtype=np.float64)[:n]


def _take_back_kept(views) -> None:
    """Give the buffers behind ``views`` (from :func:`_lend_kept`) to this thread's next pairs."""
    free = getattr(_local, "kept", None)
    if free is None:
        free = _local.kept = []
    for v in views:
        buf = v.base if v.base is not None else v
        if buf.size <= _LENT_MAX and len(free) < _LENT_PER_THREAD:
            free.append(buf)


def kl_divergence_of(a, ref, stats: PairStats, *, jobs: int = 1) -> float | None:
    """msaccucmp's KL divergence of ``a`` against ``ref``, whose :func:`accumulate` statistics
    ``stats`` hold both ranges: a second compiled pass over both (or :attr:`PairStats.kl` when
    that pass already computed it).

    Over the elements finite on both sides, ``p = max((x - min x) / (max x - min x), eps32)``
    (1 where the range is 0: a constant side is uniform), ``q`` likewise for ``y``, each
    normalised to sum 1: ``KL = sum p log(p / q)``, computed from the unnormalised sums as
    ``cross / sum_p - log1p(sum (p - q) / sum_q)`` with ``cross = sum p log(p / q)``;
    ``|KL| < eps64`` is reported as 0.
    """
    if stats.kl is not None:
        return stats.kl
    return _kl_divergence(stats, None, ChunkReader(a), ChunkReader(ref), jobs)


#: Ranges below the smallest normal float64 have no finite inverse (1 / 5e-324 overflows).
_TINY64 = float(np.finfo(np.float64).tiny)
_TWO_1022 = 2.0**1022


def _kl_scale(*ranges: float) -> float:
    """The one factor p and q are both scaled by for :func:`_kl_side`: 1, or less where a range is
    too small to invert (a few subnormals: 1 / 5e-324 overflows). One factor for both sides, as
    KL's ``log1p(sum (p - q) / sum q)`` needs p and q on one scale (scaled apart, their summed
    differences lose sum p to rounding)."""
    return min([1.0] + [r * _TWO_1022 for r in ranges if 0 < r < _TINY64])


def _kl_side(lo: float, hi: float, scale: float) -> tuple[float, float, float]:
    """``(min, inv, floor)`` of one side for :func:`~fpinspect.numerics.kernels.kl_pass`, whose
    ``max(floor, (v - min) * inv)`` is ``scale`` times msaccucmp's ``max((v - lo) / (hi - lo),
    eps32)`` (1 on a constant side): KL is the same for p and q both scaled, and multiplying by
    the inverse spares the vector loop a division per element and side."""
    r = hi - lo
    if not r > 0:
        return lo, 0.0, scale
    if r < _TINY64:
        return lo, scale / (r * _TWO_1022) * _TWO_1022, EPS32 * scale
    return lo, scale / r, EPS32 * scale


#: How kl_pass decodes each 16-bit format (arithmetic, faster than the tables); others: tables.
_KL_DECODE = {"float16": K.DECODE_HALF, "bfloat16": K.DECODE_BFLOAT}


def _kl_call(plan: _Plan, va: tuple, vb: tuple, side_x, side_y, values, sums, fns=None):
    """The kernel that adds one chunk's KL sums to ``sums``, and its arguments; ``va`` and
    ``vb`` are the chunk's two sides' :meth:`_Plan.views`, ``values`` the kernel's scratch,
    ``fns`` the table of the kernels it calls (``None``: the plan's, made on first use:
    :meth:`_Plan.tables`)."""
    ua, fa, ta = va
    ub, fb, tb = vb
    decode = _KL_DECODE.get(plan.fmt.name, K.DECODE_TABLE) if plan.a_decode == "table" else K.DECODE_FLOAT
    args = (ua, ub, fa, fb, ta, tb, decode, *side_x, *side_y, values, sums)
    return K.kl_pass, (*args, plan.tables(K.kl_calls, args) if fns is None else fns)


def after_pass_calls(a_dtype, ref_dtype, size: int, kl: bool) -> list:
    """The compiled kernels a pair of these dtypes and element count calls after the fused pass,
    each with arguments of the types it will get there (a one-element pair's): the pass's rarer
    work (:func:`~fpinspect.numerics.kernels.finish_pass`, then the block kernels of it that the
    pair calls, of which its table is made when it is first called), where the values are kept the
    selection of the exact percentiles (:class:`~fpinspect.numerics.quantiles.RealQuantiles`),
    and KL's pass when ``kl``. In the order the child compiles them: the pass's first, then the
    selection (the longest compile, ~1.4 s) before KL's (~0.7 s), which a pair calls first: the
    process, done with its fused pass, compiles KL's itself meanwhile
    (:mod:`~fpinspect.numerics.compile_ahead`)."""
    return _calls(a_dtype, ref_dtype, size, kl)[1]


def compile_ahead_plan(a_dtype, ref_dtype, size: int, kl: bool) -> tuple[list, list]:
    """``(shared, after)``: what :mod:`~fpinspect.numerics.compile_ahead` compiles on both cores
    before the fused pass runs: its block kernels that this kind of pair calls, then the pass
    itself (typed without them: :mod:`~fpinspect.numerics.calls`), those not compiled or cached
    yet, which the caller compiles in this order and the child from the other end (the pass
    first) until they meet; then :func:`after_pass_calls`, the child's alone, while the pass runs
    (its chunks' rarer work waits for finish_pass, :meth:`_Pass.feed`)."""
    (pass_call, blocks), after = _calls(a_dtype, ref_dtype, size, kl)
    return [call for call in (*blocks, pass_call) if not compile_ahead.ready(*call)], after


def _calls(a_dtype, ref_dtype, size: int, kl: bool) -> tuple:
    """``((fused pass call, its block kernels' calls), after-pass calls)`` of a one-element pair
    of this kind: each kernel with arguments of the types a real pair's calls pass."""
    # worst elements kept (what diff and compare ask for): their kernel is compiled ahead too
    plan = _plan_for(np.dtype(a_dtype), np.dtype(ref_dtype), size <= EXACT_CAP, 1)
    ca, cr = np.zeros(1, dtype=a_dtype), np.zeros(1, dtype=ref_dtype)
    va, vb = plan.views(ca, plan.a_decode), plan.views(cr, plan.b_decode)
    keep = (np.empty(1), np.empty(1), np.empty(1)) if plan.keep_values else (_EMPTY_KEEP,) * 3
    state = _Pass(plan, keep)
    try:
        pass_args = state._arguments(0, va, vb, _NO_TABLE)
        finish_args = state._finish_arguments(0, va, vb, fns=_NO_TABLE)
        after = [(K.finish_pass, finish_args), *K.finish_calls(*finish_args[:-1])]
    finally:
        state.release()
    if plan.keep_values:  # the selection, then the kernel it calls through its table
        ranks = (np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), *K.select_scratch(1, 1))
        after += [(K.select_ranks, (*ranks, _NO_TABLE)), *K.select_calls()]
    if kl:  # KL's pass, then the kernels it calls through its table
        side = _kl_side(0.0, 1.0, 1.0)
        kernel, args = _kl_call(plan, va, vb, side, side, np.empty((2, K.BLOCK)), np.zeros(4), _NO_TABLE)
        after += [(kernel, args), *K.kl_calls(*args[:-1])]
    # each kernel once (the decoding: KL's pass calls it after the rarer work does)
    return ((K.fused_pass, pass_args), K.block_calls(*pass_args[:-1])), each_once(after)


def _kl_divergence(s: PairStats, views, ra: ChunkReader, rr: ChunkReader, jobs: int) -> float | None:
    """KL over ``views`` (the pass's views of a one-chunk pair's chunk), else over the data read again."""
    if s.finite == 0:
        return None
    scale = _kl_scale(s.max_x - s.min_x, s.max_y - s.min_y)
    side_x, side_y = _kl_side(s.min_x, s.max_x, scale), _kl_side(s.min_y, s.max_y, scale)
    plan = s.plan
    compile_ahead.wait(K.kl_pass)  # KL's pass may be what a child is compiling

    def sums_of(pairs) -> np.ndarray:
        sums = np.zeros(4, dtype=np.float64)
        values = np.empty((2, K.BLOCK), dtype=np.float64)
        for va, vb in pairs:
            kernel, args = _kl_call(plan, va, vb, side_x, side_y, values, sums)
            kernel(*args)
        return sums

    if views is not None:  # a one-chunk pair: one call, no reader
        sums = sums_of(views).tolist()  # Python floats: numpy scalars cost ~0.1 us an operation
        return _kl_from_sums(*sums)

    def reread(part):
        buf_a, buf_r = ra.buffer(CHUNK), rr.buffer(CHUNK)
        for lo, hi in part:
            yield (
                plan.views(ra.read(lo, hi, buf_a), plan.a_decode),
                plan.views(rr.read(lo, hi, buf_r), plan.b_decode),
            )
            ra.release(lo, hi)
            rr.release(lo, hi)

    ranges = chunk_ranges(ra.size)
    jobs = max(1, min(jobs, len(ranges)))
    if jobs == 1:
        sum_p, sum_q, cross, diff = sums_of(reread(ranges))
    else:
        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            parts = [ranges[i::jobs] for i in range(jobs)]
            sum_p, sum_q, cross, diff = sum(pool.map(lambda part: sums_of(reread(part)), parts))
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    return _kl_from_sums(float(sum_p), float(sum_q), float(cross), float(diff))


def _kl_from_sums(sum_p: float, sum_q: float, cross: float, diff: float) -> float:
    """KL from the KL pass's sums (:func:`kl_divergence_of`)."""
    # log(sum_p / sum_q) as log1p of the summed differences: sum_p and sum_q agree to ~1e-9 in
    # fused-against-eager pairs, and taking each one's log lost their difference's last digits
    kl = cross / sum_p - math.log1p(diff / sum_q)
    return 0.0 if abs(kl) < EPS64 else kl


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
    return ErrorStats.from_dict(accumulate(a_arr, ref_arr, jobs=jobs).error_stats())


__all__ = ["Moments", "PairStats", "accumulate", "common_format", "error_stats", "kl_divergence_of"]
