"""The compiled loops behind the streaming statistics (numba, machine code, no GIL).

:func:`fused_pass` reads one chunk of both tensors once and updates every running statistic
of :class:`~fpinspect.numerics.stats.PairStats`: the reference script's trio, the special-value
counts, the finite-only sums, maxima with their first index, both sides' moments and ranges,
the msaccucmp / msprobe counts, the ULP histogram or real-valued ULP errors, the quantile
stores and the ``k`` worst elements; the work only some blocks of a chunk need (special
values, first indices, large ULP distances, the worst elements) it leaves to
:func:`finish_pass`, which reads again only those blocks (compiled apart, so that another
process can compile it while this one compiles the pass). :func:`kl_pass` is msaccucmp's KL
divergence, which needs both sides' ranges first; :func:`select_ranks` the exact percentiles of
a small pair. Each of these four calls the kernels doing its per-element work through a table
of their addresses (:mod:`~fpinspect.numerics.calls`), so that its own compile holds none of
their code. The bucket rules of the quantile stores live here once (:func:`sketch_key`,
:func:`int_log_bin`); :mod:`fpinspect.numerics.quantiles` reads them.

Inputs are raw unsigned views of the two chunks (``ua``, ``ub``) and their values: for 8- and
16-bit formats a decode table indexed by the bit pattern (``table_a``, ``table_b``), for 32-
and 64-bit ones the float views ``fa``, ``fb``. So numba compiles one specialisation per
storage width (8, 16, 32, 64 bits), cached on disk (see :mod:`fpinspect.numerics.jit`).

Every running value sits in a small array (``acc`` float64, ``cnt`` int64, ``ucnt`` uint64)
at the index named by the constants below, so the Python side reads them by name.
"""

from __future__ import annotations

import math

import numpy as np

from .intrinsics import (
    bits_float,
    bits_float32,
    float_bits,
    float_ubits,
    from_order_key,
    imax,
    imin,
    order_key,
    where,
)
from .jit import njit

# -- acc: float64 accumulators ---------------------------------------------------------------
SCRIPT_DOT = 0  #: sum x*y over all elements (NaN / inf propagate, as in the reference script)
SCRIPT_SUM_XX = 1  #: sum x*x over all elements
SCRIPT_SUM_YY = 2  #: sum y*y over all elements
SCRIPT_MAX_ABS = 3  #: max |x - y| over all elements (NaN if any is NaN)
SCRIPT_MAX_REL = 4  #: max |x - y| / (max(|x|, |y|) + 1e-8) over all elements (NaN if any is NaN)
SUM_SQ_DIFF = 5  #: sum (x - y)^2, finite elements
SUM_ABS_DIFF = 6  #: sum |x - y|, finite elements
SUM_SQ_REF = 7  #: sum y^2, finite elements
MAX_ABS_REF = 8  #: max |y|, finite elements
MSACCUCMP_SUM_REL = 9  #: sum of |x - y| / |y| where |y| > float64 eps (0 elsewhere)
MSACCUCMP_MAX_REL = 10  #: max of the same
MEAN_X = 11  #: running mean of x (finite elements), merged chunk by chunk (Chan et al.)
M2_X = 12  #: running sum of squared deviations of x from its mean
MEAN_Y = 13
M2_Y = 14
MIN_X = 15
MAX_X = 16
MIN_Y = 17
MAX_Y = 18
SUM_REL = 19  #: sum |x - y| / |y| where |y| >= the smallest normal of the measured format
SUM_ULP_ERROR = 20  #: sum of real-valued ULP errors (kind "error")
SUM_ULP_DIFF_HUGE = 21  #: sum of integer ULP distances >= 2**32 (kind "diff"), as float64
MAX_ABS = 22  #: max |x - y|, finite elements (its first index in cnt[MAX_ABS_INDEX])
MAX_REL = 23  #: max relative error where |y| >= smallest normal (index in cnt[MAX_REL_INDEX])
MAX_ULP_ERROR = 24  #: max real-valued ULP error (kind "error"; index in cnt[MAX_ULP_INDEX])
N_ACC = 25

# -- cnt: int64 counters ------------------------------------------------------------------------
COUNT = 0
FINITE = 1  #: elements finite on both sides
BOTH_NAN = 2
NAN_MISMATCH = 3
BOTH_INF = 4
INF_MISMATCH = 5
BIT_EQUAL = 6
SIGNED_ZERO = 7
BELOW_ONE_THOUSANDTH = 8  #: msprobe: |x - y| / |y| < 0.001 (float32 eps standing in for y == 0)
BELOW_FIVE_THOUSANDTHS = 9  #: msprobe: ... < 0.005
REL_COUNT = 10
REL_EXCLUDED = 11
ULP_WITHIN_TOL = 12  #: kind "error": ULP error <= tol
ULP_WITHIN_ONE = 13  #: kind "error": tol < error <= 1 + tol
ULP_ABOVE_ONE = 14  #: kind "error": error > 1 + tol
MAX_ABS_INDEX = 15
MAX_REL_INDEX = 16
MAX_ULP_INDEX = 17
SCRIPT_MAX_ABS_NAN = 18  #: 1 once a NaN entered the script's max |x - y|
SCRIPT_MAX_REL_NAN = 19
WORST_FILLED = 20  #: how many of the worst slots hold an element
N_CNT = 21

# -- ucnt: uint64 counters (integer ULP distances reach 2**64 - 2**53 in float64) ---------------
SUM_ULP_DIFF = 0  #: sum of integer ULP distances < 2**32, exact (flushed by the caller per chunk)
MAX_ULP_DIFF = 1  #: largest integer ULP distance (index in cnt[MAX_ULP_INDEX])
N_UCNT = 2

# -- mode flags ---------------------------------------------------------------------------------
USE_TABLE = 1  #: values come from the decode tables (8/16-bit formats), else from fa / fb
SAME_FORMAT = 2  #: both sides have one format: integer ULP distances from the bit patterns
KEEP_VALUES = 4  #: store each element's abs / rel / ULP error at its index (exact quantiles)
SKETCH = 8  #: count abs / rel / ULP errors into the log-bucket sketches

#: Elements sampled at the start of a chunk to centre the moment sums (keeps them accurate).
_CENTRE_SAMPLE = 64
#: Integer ULP distances below this go to the exact histogram bins.
EXACT_BINS = 1 << 16
LOG_BINS = 64
#: Sketch bucket of a non-negative float64: its bit pattern >> (52 - SKETCH_MANT_BITS).
SKETCH_MANT_BITS = 7
SKETCH_BUCKETS = 1 << (11 + SKETCH_MANT_BITS)
_SKETCH_SHIFT = np.uint64(52 - SKETCH_MANT_BITS)
#: Copies of a bin that a block's scatter loops increment in turn (element ``j`` uses copy
#: ``j % LANES``): runs of equal keys then do not wait on each other's stores.
LANES = 8
#: A sketch as the compiled pass fills it: the buckets, then ``LANES`` slots for the elements
#: that do not count (dropped), then ``LANES`` copies of bucket 0 (exact zeros, the commonest
#: key). :meth:`~fpinspect.numerics.quantiles.RealQuantiles.collected` folds them.
SKETCH_SKIP = SKETCH_BUCKETS
SKETCH_ZERO = SKETCH_BUCKETS + LANES
SKETCH_STORE = SKETCH_BUCKETS + 2 * LANES
#: Integer ULP distances below this are counted per block in a small table (``LANES`` copies
#: of each bin, in L1); a branch sends the rarer larger ones to the histogram itself.
SMALL_DIST = 16
_EPS64 = float(np.finfo(np.float64).eps)
_EPS32 = float(np.finfo(np.float32).eps)
_INV_EPS32 = 1.0 / _EPS32  # a power of two: multiplying is dividing exactly
_REF_GUARD = 1e-8


@njit(inline="always", error_model="numpy")
def sketch_key(v):
    """Sketch bucket of a non-negative float64 ``v``: exponent and top mantissa bits."""
    return np.intp(float_ubits(v) >> _SKETCH_SHIFT)


@njit(inline="always", error_model="numpy")
def int_log_bin(d):
    """Log2 bin of an integer distance ``d >= EXACT_BINS``: ``floor(log2(float64(d)))``."""
    return imin(math.frexp(np.float64(d))[1] - 1, LOG_BINS - 1)


@njit(inline="always", error_model="numpy")
def _offer_worst(score, index, worst_score, worst_index, cnt):
    """Insert ``(score, index)`` among the k worst: larger first, lower index first on ties.

    Elements arrive in increasing index order, so a tie with the k-th never enters. The
    caller offers only scores above the returned floor: the k-th score once all are filled."""
    k = worst_score.size
    filled = cnt[WORST_FILLED]
    j = filled if filled < k else k - 1
    while j > 0 and worst_score[j - 1] < score:
        worst_score[j] = worst_score[j - 1]
        worst_index[j] = worst_index[j - 1]
        j -= 1
    worst_score[j] = score
    worst_index[j] = index
    if filled < k:
        filled += 1
        cnt[WORST_FILLED] = filled
    return worst_score[k - 1] if filled == k else 0.0


@njit(inline="always", error_model="numpy")
def _merge_moments(acc, mean_i, m2_i, n_old, n_new, mean_new, m2_new):
    if n_new == 0:
        return
    n = n_old + n_new
    delta = mean_new - acc[mean_i]
    acc[m2_i] += m2_new + delta * delta * n_old * n_new / n
    acc[mean_i] += delta * n_new / n


#: Elements per block inside a chunk: the scratch arrays of a block stay in the L1 / L2 caches.
BLOCK = 4096
_I64_MAX = np.iinfo(np.int64).max
_I64_MIN = np.iinfo(np.int64).min
_U64_MAX = np.uint64(np.iinfo(np.uint64).max)
_INF_BITS = np.int64(0x7FF0000000000000)


#: Bit pattern of a float64 as int64: monotone in the value for non-negative numbers.
_bits = float_bits
_from_bits = bits_float


_order_key = order_key
_from_order_key = from_order_key


@njit(inline="always", error_model="numpy")
def _ulp_distance(a_raw, b_raw, sign_mask, mag_mask):
    """Steps between two bit patterns of one format, zeros counted once (uint64)."""
    a = np.uint64(a_raw)
    b = np.uint64(b_raw)
    ma = a & mag_mask
    mb = b & mag_mask
    apart = ma - mb if ma >= mb else mb - ma
    return apart if ((a ^ b) & sign_mask) == np.uint64(0) else ma + mb


@njit(inline="always", error_model="numpy")
def _ulp_error(ad, ay, emin, emax, inv_ulp, ulp_size):
    """``|x - y| / ulp(y)``: Goldberg's ulp at ``y``'s binary exponent, clipped to the format."""
    e = ((_bits(ay) >> 52) & 0x7FF) - 1023
    e = imin(imax(e, emin), emax) - emin
    inv = inv_ulp[e]
    return ad * inv if inv > 0.0 else ad / ulp_size[e]


_KERNEL = dict(nogil=True, cache=True, error_model="numpy")
#: Sums may be reordered (reassociated) so that loops of sums compile to vector instructions.
_VECTOR = dict(_KERNEL, fastmath={"reassoc"})
#: A kernel called only from compiled code: no wrappers to call it from Python.
_SUB = dict(_KERNEL, no_cpython_wrapper=True, no_cfunc_wrapper=True)
#: A kernel called from Python only: no C function wrapper either.
_KERNEL_PY = dict(_KERNEL, no_cfunc_wrapper=True)
_SUB_VECTOR = dict(_VECTOR, no_cpython_wrapper=True, no_cfunc_wrapper=True)


@njit(**_SUB)
def _decode_block(ua, ub, fa, fb, table_a, table_b, use_table, lo, m, xs, ys):
    """Both sides' values of elements ``lo .. lo + m - 1`` into ``xs[:m]``, ``ys[:m]`` as
    float64: through the decode tables (8/16-bit formats) or from the float views. A block kernel
    of its own, not inlined as numba inlines (its typing and lowering once per caller): the pass,
    its rarer work and KL's pass call one compile of it (~0.3 s less CPU in a first call)."""
    # slices: indices known to be non-negative (no wraparound test per element)
    if use_table:
        block_a = ua[lo : lo + m]
        block_b = ub[lo : lo + m]
        for j in range(m):
            xs[j] = table_a[block_a[j]]
            ys[j] = table_b[block_b[j]]
    else:
        float_a = fa[lo : lo + m]
        float_b = fb[lo : lo + m]
        for j in range(m):
            xs[j] = float_a[j]
            ys[j] = float_b[j]


@njit(inline="always", error_model="numpy")
def _sketch_slot(v, counts, lane):
    """The slot of a sketch store (:data:`SKETCH_STORE`) that element ``v`` increments."""
    k = sketch_key(v)
    return np.int32((k if k != 0 else SKETCH_ZERO + lane) if counts else SKETCH_SKIP + lane)


@njit(**_SUB_VECTOR)
def _ulp_diff_block(ua, ub, xs, ys, m, sign_mask, mag_mask, slots):
    """Over one block, kind "diff": counts of bit-equal pairs, of distances of
    :data:`SMALL_DIST` and more, of +0 against -0, the exact sum of the distances below
    2**32, and the largest distance. ``slots[j]`` gets element ``j``'s slot in the small
    table: ``LANES * d + j % LANES`` for a distance ``d < SMALL_DIST``, ``LANES * SMALL_DIST
    + j % LANES`` for the others and for elements not both finite. ``ua``, ``ub`` are the
    block's bit patterns (slices: an index known to be non-negative, and no branch, let the
    loop compile to vector instructions)."""
    zero_u = np.uint64(0)
    small_limit = np.uint64(1 << 32)
    n_bits = n_far = n_signed_zero = 0
    total = zero_u
    top = zero_u
    for j in range(m):
        fin = math.isfinite(xs[j]) & math.isfinite(ys[j])
        a_raw = ua[j]
        b_raw = ub[j]
        n_bits += a_raw == b_raw
        dist = _ulp_distance(a_raw, b_raw, sign_mask, mag_mask) * np.uint64(fin)
        near = dist < np.uint64(SMALL_DIST)
        n_far += ~near
        slot = np.int64(dist) if near else np.int64(SMALL_DIST)
        slot = slot if fin else np.int64(SMALL_DIST)
        slots[j] = np.int32(slot * LANES + (j & (LANES - 1)))
        # equal values with different bits: +0 against -0
        n_signed_zero += fin & (dist == zero_u) & (a_raw != b_raw)
        total += dist if dist < small_limit else zero_u
        top = imax(top, dist)
    return n_bits, n_far, n_signed_zero, total, top


@njit(**_SUB)
def _scatter(slots, m, table):
    """``table[slots[j]] += 1`` for the first ``m`` slots."""
    for j in range(m):
        table[slots[j]] += 1


@njit(**_SUB_VECTOR)
def _ulp_error_block(xs, ys, m, emin, emax, inv_ulp, ulp_size, share_tol, slots):
    """Over one block, kind "error": the sum of the ULP errors, the largest one's bits (-1 for
    none), and the counts within ``share_tol`` and within ``1 + share_tol``; ``slots[j]`` gets
    element ``j``'s sketch slot (:func:`_sketch_slot`)."""
    total = 0.0
    top = np.int64(-1)
    n_tol = n_le1 = 0
    for j in range(m):
        x = xs[j]
        y = ys[j]
        fin = math.isfinite(x) & math.isfinite(y)
        err = _ulp_error(abs(x - y), abs(y), emin, emax, inv_ulp, ulp_size)
        total += err if fin else 0.0
        top = imax(top, _bits(err) if fin else np.int64(-1))
        n_tol += fin & (err <= share_tol)
        n_le1 += fin & (err <= 1.0 + share_tol)
        slots[j] = _sketch_slot(err, fin, j & (LANES - 1))
    return total, top, n_tol, n_le1


@njit(**_SUB_VECTOR)
def _sums_block(xs, ys, m, cx, cy):
    """The sums over one decoded block's elements finite on both sides: ``(x*y, x*x, y*y,
    (x - y)^2, |x - y|, x - cx, (x - cx)^2, y - cy, (y - cy)^2, count)``. A vector loop (no
    branch, no store); a second loop, :func:`_ratios_block`, takes the rest: one loop holding
    every running value would spill registers."""
    s_dot = s_xx = s_yy = s_d2 = s_ad = sx = sxx = sy = syy = 0.0
    n_fin = 0
    for j in range(m):
        x = xs[j]
        y = ys[j]
        fin = math.isfinite(x) & math.isfinite(y)
        n_fin += fin
        xf = x if fin else 0.0
        yf = y if fin else 0.0
        s_dot += xf * yf
        s_xx += xf * xf
        s_yy += yf * yf
        df = xf - yf
        s_d2 += df * df
        s_ad += abs(df)
        dx = x - cx if fin else 0.0
        dy = y - cy if fin else 0.0
        sx += dx
        sxx += dx * dx
        sy += dy
        syy += dy * dy
    return s_dot, s_xx, s_yy, s_d2, s_ad, sx, sxx, sy, syy, n_fin


@njit(**_SUB_VECTOR)
def _ratios_block(xs, ys, m, tiny, slots):
    """The maxima, ranges and relative errors over one decoded block's elements finite on both
    sides: a vector loop (no branch). Maxima are taken over integer bit patterns (exact;
    elements that do not count -1 or 0), ranges over order keys (:func:`_order_key`).
    ``slots[0, j]`` and ``slots[1, j]`` get element ``j``'s slots in the abs and rel sketches
    (:func:`_sketch_slot`)."""
    s_rms = s_rel = 0.0
    n_re1 = n_re5 = n_rel = 0
    script_rel_bits = rms_bits = np.int64(0)
    abs_bits = rel_bits = np.int64(-1)
    min_x_key = min_y_key = _I64_MAX
    max_x_key = max_y_key = _I64_MIN
    for j in range(m):
        x = xs[j]
        y = ys[j]
        fin = math.isfinite(x) & math.isfinite(y)
        ad = abs(x - y)
        ax = abs(x)
        ay = abs(y)
        abs_bits = imax(abs_bits, _bits(ad) if fin else np.int64(-1))
        kx = _order_key(x)
        ky = _order_key(y)
        min_x_key = imin(min_x_key, kx if fin else _I64_MAX)
        max_x_key = imax(max_x_key, kx if fin else _I64_MIN)
        min_y_key = imin(min_y_key, ky if fin else _I64_MAX)
        max_y_key = imax(max_y_key, ky if fin else _I64_MIN)
        # the reference script's relative error (its non-finite elements: _count_specials)
        r = ad / ((ax if ax > ay else ay) + _REF_GUARD)
        script_rel_bits = imax(script_rel_bits, _bits(r) if fin else np.int64(0))
        # one quotient serves the three relative errors; they differ only where |y| is tiny
        q = ad / ay
        rms = q if fin & (ay > _EPS64) else 0.0
        s_rms += rms
        rms_bits = imax(rms_bits, _bits(rms))
        re = q if ay != 0.0 else ad * _INV_EPS32
        n_re5 += fin & (re < 0.005)
        n_re1 += fin & (re < 0.001)
        counted = fin & (ay >= tiny)
        n_rel += counted
        s_rel += q if counted else 0.0
        rel_bits = imax(rel_bits, _bits(q) if counted else np.int64(-1))
        lane = j & (LANES - 1)
        slots[0, j] = _sketch_slot(ad, fin, lane)
        slots[1, j] = _sketch_slot(q, counted, lane)
    return (
        abs_bits,
        min_x_key,
        max_x_key,
        min_y_key,
        max_y_key,
        script_rel_bits,
        s_rms,
        rms_bits,
        n_re5,
        n_re1,
        n_rel,
        s_rel,
        rel_bits,
    )


@njit(**_SUB)
def _bit_equal(ua, ub, m):
    """Whether the first ``m`` bit patterns of ``ua`` and ``ub`` are all equal (stops at the
    first difference: a block that differs costs a few elements)."""
    for j in range(m):
        if ua[j] != ub[j]:
            return False
    return True


@njit(**_SUB_VECTOR)
def _equal_block(xs, m, tiny):
    """For a block whose two sides have equal bit patterns (``x == y`` where finite), what
    :func:`_ratios_block` would find: every error is 0, so only the range of the finite values
    and the count of those at least ``tiny`` in magnitude remain: ``(min key, max key,
    count)`` (:func:`_order_key`)."""
    min_key = _I64_MAX
    max_key = _I64_MIN
    n_rel = 0
    for j in range(m):
        x = xs[j]
        fin = math.isfinite(x)
        k = _order_key(x)
        min_key = imin(min_key, k if fin else _I64_MAX)
        max_key = imax(max_key, k if fin else _I64_MIN)
        n_rel += fin & (abs(x) >= tiny)
    return min_key, max_key, n_rel


@njit(**_SUB)
def _count_specials(xs, ys, m, cnt):
    """Count the special values of one block, and take them into the reference script's trio,
    which runs over all elements: ``(mismatches, sum x*y, sum x*x, sum y*y, max |x - y| (-1 if
    none), 1 if some |x - y| is NaN, max script relative error (-1 if none), 1 if one is NaN)``
    over the elements not finite on both sides."""
    mismatches = 0
    s_dot = s_xx = s_yy = 0.0
    script_abs = script_rel = -1.0
    abs_nan = rel_nan = 0
    for j in range(m):
        x = xs[j]
        y = ys[j]
        if math.isfinite(x) and math.isfinite(y):
            continue
        s_dot += x * y
        s_xx += x * x
        s_yy += y * y
        ad = abs(x - y)
        ax = abs(x)
        ay = abs(y)
        r = ad / ((ax if ax > ay else ay) + _REF_GUARD)
        if ad != ad:
            abs_nan = 1
        else:
            script_abs = imax(script_abs, ad)
        if r != r:
            rel_nan = 1
        else:
            script_rel = imax(script_rel, r)
        nx, ny = x != x, y != y
        if nx and ny:
            cnt[BOTH_NAN] += 1
        elif nx or ny:
            cnt[NAN_MISMATCH] += 1
            mismatches += 1
        elif math.isinf(x) and x == y:
            cnt[BOTH_INF] += 1
        else:
            cnt[INF_MISMATCH] += 1
            mismatches += 1
    return mismatches, s_dot, s_xx, s_yy, script_abs, abs_nan, script_rel, rel_nan


@njit(**_SUB)
def _first_index(
    ua, ub, xs, ys, start, m, what, value, tiny, sign_mask, mag_mask, emin, emax, inv_ulp, ulp_size
):
    """Position in the block of the first finite element whose abs error (``what`` 0), relative
    error (1), ULP distance (2) or ULP error (3) equals ``value``; -1 if none."""
    for j in range(m):
        x = xs[j]
        y = ys[j]
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        ad = abs(x - y)
        ay = abs(y)
        if what == 0:
            hit = ad == value
        elif what == 1:
            hit = ay >= tiny and ad / ay == value
        elif what == 2:
            hit = np.float64(_ulp_distance(ua[start + j], ub[start + j], sign_mask, mag_mask)) == value
        else:
            hit = _ulp_error(ad, ay, emin, emax, inv_ulp, ulp_size) == value
        if hit:
            return j
    return -1


@njit(**_SUB)
def _count_large_distances(ua, ub, xs, ys, start, m, sign_mask, mag_mask, hist_exact, hist_log):
    """Histogram the ULP distances of :data:`SMALL_DIST` and more of one block; return the
    float64 sum of those of 2**32 and more. Few elements are that far apart: a branch skips
    the others."""
    huge = 0.0
    for j in range(m):
        dist = _ulp_distance(ua[start + j], ub[start + j], sign_mask, mag_mask)
        if dist >= np.uint64(SMALL_DIST) and math.isfinite(xs[j]) and math.isfinite(ys[j]):
            if dist < EXACT_BINS:
                hist_exact[np.intp(dist)] += 1
            else:
                hist_log[int_log_bin(dist)] += 1
                if dist >= np.uint64(1 << 32):
                    huge += np.float64(dist)
    return huge


@njit(**_SUB)
def _keep_block(xs, ys, m, first, tiny, same, emin, emax, inv_ulp, ulp_size, keep_abs, keep_rel, keep_ulp):
    """Store each element's abs / rel / ULP error at its flat index (NaN where it does not count)."""
    nan = np.nan
    for j in range(m):
        x = xs[j]
        y = ys[j]
        fin = math.isfinite(x) & math.isfinite(y)
        ad = abs(x - y)
        ay = abs(y)
        keep_abs[first + j] = ad if fin else nan
        keep_rel[first + j] = ad / ay if fin & (ay >= tiny) else nan
    if not same:
        for j in range(m):
            x = xs[j]
            y = ys[j]
            fin = math.isfinite(x) & math.isfinite(y)
            err = _ulp_error(abs(x - y), abs(y), emin, emax, inv_ulp, ulp_size)
            keep_ulp[first + j] = err if fin else nan


@njit(**_SUB)
def _worst_block(
    ua,
    ub,
    xs,
    ys,
    start,
    m,
    first,
    same,
    by_bits,
    sign_mask,
    mag_mask,
    emin,
    emax,
    inv_ulp,
    ulp_size,
    floor,
    worst_score,
    worst_index,
    cnt,
):
    """Offer the elements of one block to the k worst (special-value mismatches score inf);
    return the new floor. ``by_bits``: the block is of one format and finite on both sides
    throughout, so each score is the ULP distance of the bit patterns (``xs``, ``ys`` unread:
    the block need not be decoded)."""
    for j in range(m):
        # one loop, each helper inlined once (numba types and lowers an inlined call once per
        # call site: two loops had cost this kernel's compile ~0.2 s more)
        x = y = 0.0
        if not by_bits:
            x = xs[j]
            y = ys[j]
        if by_bits or (math.isfinite(x) and math.isfinite(y)):
            if same:
                score = np.float64(_ulp_distance(ua[start + j], ub[start + j], sign_mask, mag_mask))
            else:
                score = _ulp_error(abs(x - y), abs(y), emin, emax, inv_ulp, ulp_size)
        else:
            both_nan = x != x and y != y
            same_inf = math.isinf(x) and x == y
            score = -1.0 if both_nan or same_inf else np.inf
        if score > floor:
            floor = _offer_worst(score, first + j, worst_score, worst_index, cnt)
    return floor


#: Rows of the per-block record :func:`fused_pass` leaves for :func:`finish_pass` (int64, one
#: column per block of the chunk): the elements finite on both sides, those whose ULP distance is
#: :data:`SMALL_DIST` or more (kind "diff"), and the bit patterns of the block's largest abs error,
#: relative error and ULP score (the distance, kind "diff"; the error's bits, kind "error"), -1
#: where none counts.
@njit(**_SUB)
def _centre(ua, ub, fa, fb, table_a, table_b, use_table, n):
    """The centre of a chunk's moment sums: the mean of its first finite elements (of the first
    :data:`_CENTRE_SAMPLE`), ``(0, 0)`` where none is; a kernel of its own for the reason
    :func:`_fold_chunk` is."""
    cx = cy = 0.0
    nc = 0
    for i in range(imin(n, _CENTRE_SAMPLE)):
        if use_table:
            x, y = table_a[ua[i]], table_b[ub[i]]
        else:
            x, y = np.float64(fa[i]), np.float64(fb[i])
        if math.isfinite(x) and math.isfinite(y):
            cx += x
            cy += y
            nc += 1
    if nc:
        cx /= nc
        cy /= nc
    return cx, cy


@njit(**_SUB)
def _fold_chunk(acc, cnt, ucnt, hist_exact, small, same, n, nf, sums, u_sum, counts, maxima):
    """Add one chunk's sums, counts and extrema to the running state ``acc``, ``cnt``, ``ucnt``,
    and the small ULP distances counted in ``small`` (zeroed again) to ``hist_exact``: ``n``
    elements, ``nf`` finite on both sides; ``sums``, ``counts`` and ``maxima`` are
    :func:`fused_pass`'s locals of those names (float64, int64: its centre and sums, its counts,
    its maxima as bit patterns and order keys). A kernel of its own, not the pass's tail: typed
    and lowered inside the pass it took numba ~0.4 s of the pass's compile, which the other
    process can do meanwhile (:mod:`~fpinspect.numerics.compile_ahead`)."""
    cx, cy, s_dot, s_xx, s_yy, s_d2, s_ad, s_rms, s_rel, s_ulp, sx, sxx, sy, syy = sums
    n_bits, n_signed_zero, n_re1, n_re5, n_rel, n_tol, n_le1 = counts
    script_abs_bits, script_rel_bits, rms_bits, min_x_key, max_x_key, min_y_key, max_y_key = maxima
    # the script's sums take finish_pass's terms of the elements not finite on both sides
    # after these: those are each inf or NaN, so the sum comes out the same in either order
    acc[SCRIPT_DOT] += s_dot
    acc[SCRIPT_SUM_XX] += s_xx
    acc[SCRIPT_SUM_YY] += s_yy
    acc[SCRIPT_MAX_ABS] = _from_bits(script_abs_bits)
    acc[SCRIPT_MAX_REL] = _from_bits(script_rel_bits)
    acc[SUM_SQ_DIFF] += s_d2
    acc[SUM_ABS_DIFF] += s_ad
    acc[SUM_SQ_REF] += s_yy
    acc[MSACCUCMP_SUM_REL] += s_rms
    acc[MSACCUCMP_MAX_REL] = _from_bits(rms_bits)
    acc[SUM_REL] += s_rel
    acc[SUM_ULP_ERROR] += s_ulp
    acc[MIN_X], acc[MAX_X] = _from_order_key(min_x_key), _from_order_key(max_x_key)
    acc[MIN_Y], acc[MAX_Y] = _from_order_key(min_y_key), _from_order_key(max_y_key)
    if acc[MIN_Y] <= acc[MAX_Y]:  # some element was finite on both sides: max |y| is an end
        acc[MAX_ABS_REF] = imax(abs(acc[MIN_Y]), abs(acc[MAX_Y]))
    if nf:
        mean_x = cx + sx / nf
        mean_y = cy + sy / nf
        _merge_moments(acc, MEAN_X, M2_X, cnt[FINITE], nf, mean_x, imax(sxx - sx * sx / nf, 0.0))
        _merge_moments(acc, MEAN_Y, M2_Y, cnt[FINITE], nf, mean_y, imax(syy - sy * sy / nf, 0.0))
    ucnt[SUM_ULP_DIFF] += u_sum
    if same:
        for i in range(small.size):
            if i < SMALL_DIST * LANES:
                hist_exact[i // LANES] += small[i]
            small[i] = 0
    cnt[COUNT] += n
    cnt[FINITE] += nf
    cnt[BIT_EQUAL] += n_bits
    cnt[SIGNED_ZERO] += n_signed_zero
    cnt[BELOW_ONE_THOUSANDTH] += n_re1
    cnt[BELOW_FIVE_THOUSANDTHS] += n_re5
    cnt[REL_COUNT] += n_rel
    cnt[REL_EXCLUDED] += nf - n_rel
    cnt[ULP_WITHIN_TOL] += n_tol
    cnt[ULP_WITHIN_ONE] += n_le1 - n_tol
    cnt[ULP_ABOVE_ONE] += 0 if same else nf - n_le1


REC_FINITE = 0
REC_FAR = 1
REC_ABS = 2
REC_REL = 3
REC_SCORE = 4
N_REC = 5


@njit(**_KERNEL_PY)
def fused_pass(
    ua,
    ub,
    fa,
    fb,
    table_a,
    table_b,
    mode,
    offset,
    tiny,
    sign_mask,
    mag_mask,
    emin,
    inv_ulp,
    ulp_size,
    acc,
    cnt,
    ucnt,
    hist_exact,
    share_tol,
    keep_abs,
    keep_rel,
    keep_ulp,
    sketch_abs,
    sketch_rel,
    sketch_ulp,
    values,
    slots,
    small,
    rec,
):
    """Update the running statistics with one chunk: everything every element takes part in;
    :func:`finish_pass` then does the rarer work it leaves, from the record ``rec`` it fills.
    Element ``i`` has flat index ``offset + i``.

    ``values`` (float64, ``(2, BLOCK)``), ``slots`` (int32, ``(3, BLOCK)``), ``small``
    (int64, ``(SMALL_DIST + 1) * LANES``, zero) and ``rec`` (int64, ``(N_REC, blocks)``, at
    least one column per :data:`BLOCK` elements) are scratch arrays the caller allocates once
    (:func:`scratch`): allocating here would cost each chunk and numba more compile time.

    ``tiny`` is the smallest normal of the measured format (below it a relative error is
    excluded); ``share_tol`` the tolerance of the ULP share cuts; ``sign_mask`` / ``mag_mask``
    split a bit pattern (kind "diff"); for kind "error" the ULP of a reference with binary
    exponent ``e`` (clipped to the format's range) is ``ulp_size[e - emin]`` and, where
    representable, ``inv_ulp[e - emin]`` is its exact inverse (multiplying by it is dividing).

    The chunk is walked in blocks of :data:`BLOCK`, decoded to float64 once. Two loops per
    block have no branches, so they compile to vector instructions: sums (their order may
    differ from a plain loop), counts, maxima and the sketch slots; scatter loops count the
    slots. A block whose two sides are equal bit for bit (same format) skips every error
    loop: its errors are all 0. (Each loop is a function of its own: one big function takes
    numba far longer to compile, and LLVM vectorises small loops more readily.)

    Where ``mode`` keeps them (:data:`KEEP_VALUES`), each element's errors are stored at its
    flat index. The work only some blocks need (special values, the first index of a new
    maximum, ULP distances of :data:`SMALL_DIST` and more, the worst elements) is
    :func:`finish_pass`'s, a kernel of its own so that its compile can run on another core
    while this one's does (:mod:`~fpinspect.numerics.compile_ahead`); so are the chunk's
    centre (:func:`_centre`) and what it adds to the running state (:func:`_fold_chunk`), so
    that this kernel's own code is little more than its block loop. It calls its block kernels
    through the table ``fns`` (:mod:`~fpinspect.numerics.calls`: its compile holds none of their
    code, and needs none of them compiled first).
    """
    n = ua.size
    use_table = (mode & USE_TABLE) != 0
    same = (mode & SAME_FORMAT) != 0
    keep = (mode & KEEP_VALUES) != 0
    sketch = (mode & SKETCH) != 0
    emax = emin + inv_ulp.size - 1
    xs = values[0]
    ys = values[1]

    cx, cy = _centre(ua, ub, fa, fb, table_a, table_b, use_table, n)

    s_dot = s_xx = s_yy = s_d2 = s_ad = s_rms = s_rel = s_ulp = 0.0
    sx = sxx = sy = syy = 0.0
    u_sum = np.uint64(0)
    # int64, not the literal 0: a call typed with literals compiles once more (_fold_chunk)
    nf = n_bits = n_re1 = n_re5 = n_rel = n_signed_zero = np.int64(0)
    n_tol = n_le1 = np.int64(0)
    script_abs_bits = _bits(acc[SCRIPT_MAX_ABS])
    script_rel_bits = _bits(acc[SCRIPT_MAX_REL])
    rms_bits = _bits(acc[MSACCUCMP_MAX_REL])
    min_x_key, max_x_key = _order_key(acc[MIN_X]), _order_key(acc[MAX_X])
    min_y_key, max_y_key = _order_key(acc[MIN_Y]), _order_key(acc[MAX_Y])

    for start in range(0, n, BLOCK):
        m = imin(BLOCK, n - start)
        col = start // BLOCK
        # slices: indices known to be non-negative (no wraparound test per element)
        block_a = ua[start : start + m]
        block_b = ub[start : start + m]
        _decode_block(ua, ub, fa, fb, table_a, table_b, use_table, start, m, xs, ys)

        b_dot, b_xx, b_yy, b_d2, b_ad, b_sx, b_sxx, b_sy, b_syy, b_nf = _sums_block(xs, ys, m, cx, cy)
        s_dot += b_dot
        s_xx += b_xx
        s_yy += b_yy
        s_d2 += b_d2
        s_ad += b_ad
        sx += b_sx
        sxx += b_sxx
        sy += b_sy
        syy += b_syy
        nf += b_nf
        # both sides bit for bit equal: every error is 0, decided without computing one
        equal = same and _bit_equal(block_a, block_b, m)
        if equal:
            b_min_x, b_max_x, b_rel = _equal_block(xs, m, tiny)
            b_min_y, b_max_y = b_min_x, b_max_x
            b_abs_bits = np.int64(0) if b_nf > 0 else np.int64(-1)
            b_rel_bits = np.int64(0) if b_rel > 0 else np.int64(-1)
            b_script_rel_bits = b_rms_bits = np.int64(0)
            b_rms = b_s_rel = 0.0
            b_re5 = b_re1 = b_nf
        else:
            (
                b_abs_bits,
                b_min_x,
                b_max_x,
                b_min_y,
                b_max_y,
                b_script_rel_bits,
                b_rms,
                b_rms_bits,
                b_re5,
                b_re1,
                b_rel,
                b_s_rel,
                b_rel_bits,
            ) = _ratios_block(xs, ys, m, tiny, slots)
        script_abs_bits = imax(script_abs_bits, b_abs_bits)
        script_rel_bits = imax(script_rel_bits, b_script_rel_bits)
        min_x_key, max_x_key = imin(min_x_key, b_min_x), imax(max_x_key, b_max_x)
        min_y_key, max_y_key = imin(min_y_key, b_min_y), imax(max_y_key, b_max_y)
        s_rms += b_rms
        rms_bits = imax(rms_bits, b_rms_bits)
        n_re5 += b_re5
        n_re1 += b_re1
        n_rel += b_rel
        s_rel += b_s_rel

        b_score = np.int64(-1)
        b_far = 0
        if equal:
            n_bits += m
            small[0] += b_nf  # distance 0 (copy 0 of bin 0)
            b_score = np.int64(0)
        elif same:
            b_bits, b_far, b_signed_zero, b_sum, b_dist = _ulp_diff_block(
                block_a, block_b, xs, ys, m, sign_mask, mag_mask, slots[2]
            )
            _scatter(slots[2], m, small)
            n_bits += b_bits
            n_signed_zero += b_signed_zero
            u_sum += b_sum
            b_score = np.int64(b_dist)  # the same 64 bits: finish_pass reads them as uint64
        else:
            b_ulp, b_score, b_tol, b_le1 = _ulp_error_block(
                xs, ys, m, emin, emax, inv_ulp, ulp_size, share_tol, slots[2]
            )
            s_ulp += b_ulp
            n_tol += b_tol
            n_le1 += b_le1
        rec[REC_FINITE, col] = b_nf
        rec[REC_FAR, col] = b_far
        rec[REC_ABS, col] = b_abs_bits
        rec[REC_REL, col] = b_rel_bits
        rec[REC_SCORE, col] = b_score

        if keep:
            _keep_block(
                xs,
                ys,
                m,
                offset + start,
                tiny,
                same,
                emin,
                emax,
                inv_ulp,
                ulp_size,
                keep_abs,
                keep_rel,
                keep_ulp,
            )
        if sketch and equal:  # every counted error is an exact zero
            sketch_abs[SKETCH_ZERO] += b_nf
            sketch_rel[SKETCH_ZERO] += b_rel
        elif sketch:
            _scatter(slots[0], m, sketch_abs)
            _scatter(slots[1], m, sketch_rel)
            if not same:
                _scatter(slots[2], m, sketch_ulp)

    sums = (cx, cy, s_dot, s_xx, s_yy, s_d2, s_ad, s_rms, s_rel, s_ulp, sx, sxx, sy, syy)
    counts = (n_bits, n_signed_zero, n_re1, n_re5, n_rel, n_tol, n_le1)
    maxima = (script_abs_bits, script_rel_bits, rms_bits, min_x_key, max_x_key, min_y_key, max_y_key)
    _fold_chunk(acc, cnt, ucnt, hist_exact, small, same, n, nf, sums, u_sum, counts, maxima)


@njit(**_KERNEL_PY)
def finish_pass(
    ua,
    ub,
    fa,
    fb,
    table_a,
    table_b,
    mode,
    offset,
    tiny,
    sign_mask,
    mag_mask,
    emin,
    inv_ulp,
    ulp_size,
    acc,
    cnt,
    ucnt,
    hist_exact,
    hist_log,
    worst_score,
    worst_index,
    values,
    rec,
):
    """The rest of one chunk's pass, after :func:`fused_pass` (the same chunk, its record ``rec``
    of each block): in block order, it decodes again the blocks that need any of the rarer work
    and does it. Element ``i`` has flat index ``offset + i``.

    That work: the special values (counted, and taken into the reference script's trio, which
    runs over all elements), the maxima and the first index of each (ties keep the lower index),
    the ULP distances of :data:`SMALL_DIST` and more (kind "diff"), and the ``k`` worst
    elements (special-value mismatches score inf)."""
    n = ua.size
    use_table = (mode & USE_TABLE) != 0
    same = (mode & SAME_FORMAT) != 0
    track_worst = worst_score.size > 0
    worst_floor = 0.0
    if track_worst and cnt[WORST_FILLED] == worst_score.size:
        worst_floor = worst_score[worst_score.size - 1]
    emax = emin + inv_ulp.size - 1
    xs = values[0]
    ys = values[1]
    x_dot = x_xx = x_yy = s_ulp_huge = 0.0
    script_abs_bits = _bits(acc[SCRIPT_MAX_ABS])
    script_rel_bits = _bits(acc[SCRIPT_MAX_REL])
    n_nan_abs = n_nan_rel = 0
    max_abs, max_rel, max_err = acc[MAX_ABS], acc[MAX_REL], acc[MAX_ULP_ERROR]
    max_dist = ucnt[MAX_ULP_DIFF]
    have_dist = cnt[MAX_ULP_INDEX] >= 0
    # not literals: numba would compile _first_index once per literal value
    what_abs, what_rel, what_dist, what_err = np.int64(0), np.int64(1), np.int64(2), np.int64(3)
    # the format's facts, as the block kernels take them
    ulp = (sign_mask, mag_mask, emin, emax, inv_ulp, ulp_size)

    for start in range(0, n, BLOCK):
        m = imin(BLOCK, n - start)
        block = (ua, ub, xs, ys, start, m)  # what the block kernels below take first
        col = start // BLOCK
        first = offset + start
        b_nf = rec[REC_FINITE, col]
        b_abs = _from_bits(rec[REC_ABS, col]) if rec[REC_ABS, col] >= 0 else -1.0
        b_rel = _from_bits(rec[REC_REL, col]) if rec[REC_REL, col] >= 0 else -1.0
        b_dist = np.uint64(rec[REC_SCORE, col])
        b_err = _from_bits(rec[REC_SCORE, col]) if rec[REC_SCORE, col] >= 0 else -1.0
        b_score = np.float64(b_dist) if same else b_err
        new_dist = same and b_nf > 0 and (b_dist > max_dist or not have_dist)
        far = same and rec[REC_FAR, col] > 0
        new_max = b_abs > max_abs or b_rel > max_rel or new_dist or (not same and b_err > max_err)
        special = b_nf < m
        if not (special or new_max or far or (track_worst and b_score > worst_floor)):
            continue
        # the worst elements of a block of one format finite throughout come from the bit patterns
        by_bits = same and not special
        if not by_bits or new_max or far:
            _decode_block(ua, ub, fa, fb, table_a, table_b, use_table, start, m, xs, ys)

        n_mismatch = 0
        if b_nf < m:
            n_mismatch, e_dot, e_xx, e_yy, e_abs, e_abs_nan, e_rel, e_rel_nan = _count_specials(
                xs, ys, m, cnt
            )
            x_dot += e_dot
            x_xx += e_xx
            x_yy += e_yy
            script_abs_bits = imax(script_abs_bits, _bits(e_abs))
            script_rel_bits = imax(script_rel_bits, _bits(e_rel))
            n_nan_abs += e_abs_nan
            n_nan_rel += e_rel_nan

        if b_abs > max_abs:
            max_abs = b_abs
            cnt[MAX_ABS_INDEX] = first + _first_index(*(block + (what_abs, b_abs, tiny) + ulp))
        if b_rel > max_rel:
            max_rel = b_rel
            cnt[MAX_REL_INDEX] = first + _first_index(*(block + (what_rel, b_rel, tiny) + ulp))
        if same:
            if new_dist:
                max_dist = b_dist
                have_dist = True
                cnt[MAX_ULP_INDEX] = first + _first_index(
                    *(block + (what_dist, np.float64(b_dist), tiny) + ulp)
                )
            if far:
                s_ulp_huge += _count_large_distances(*(block + (sign_mask, mag_mask, hist_exact, hist_log)))
        elif b_err > max_err:
            max_err = b_err
            cnt[MAX_ULP_INDEX] = first + _first_index(*(block + (what_err, b_err, tiny) + ulp))

        if track_worst and (n_mismatch > 0 or b_score > worst_floor):
            worst_floor = _worst_block(
                *(block + (first, same, by_bits) + ulp + (worst_floor, worst_score, worst_index, cnt))
            )

    acc[SCRIPT_DOT] += x_dot
    acc[SCRIPT_SUM_XX] += x_xx
    acc[SCRIPT_SUM_YY] += x_yy
    acc[SCRIPT_MAX_ABS] = _from_bits(script_abs_bits)
    acc[SCRIPT_MAX_REL] = _from_bits(script_rel_bits)
    cnt[SCRIPT_MAX_ABS_NAN] |= n_nan_abs > 0
    cnt[SCRIPT_MAX_REL_NAN] |= n_nan_rel > 0
    acc[SUM_ULP_DIFF_HUGE] += s_ulp_huge
    acc[MAX_ABS] = max_abs
    acc[MAX_REL] = max_rel
    acc[MAX_ULP_ERROR] = max_err
    ucnt[MAX_ULP_DIFF] = max_dist


def scratch(elements: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The scratch arrays :func:`fused_pass` works in, for chunks of at most ``elements``:
    ``(values, slots, small, rec)`` (:func:`finish_pass` reads ``rec`` and works in ``values``)."""
    return (
        np.empty((2, BLOCK), dtype=np.float64),
        np.empty((3, BLOCK), dtype=np.int32),
        np.zeros((SMALL_DIST + 1) * LANES, dtype=np.int64),
        np.empty((N_REC, max(-(-elements // BLOCK), 1)), dtype=np.int64),
    )


# log(p / q) = k log(2) + log(1 + f) with 1 + f = p / t, t = q * 2**k, and
# log(1 + f) = log((1 + s) / (1 - s)) = 2s + s * R(s*s) for s = f / (2 + f) = (p - t) / (p + t),
# as in fdlibm's ``e_log.c``; k from the bit patterns' difference rounded to whole exponents puts
# p / t in [2/3, 3/2], |s| <= 1/5. R: the polynomial z * (C1 + C2 z + ... + C8 z**7) with equal
# errors at 9 points of z in [0, 1/25] (Chebyshev's, the first step of Remez's exchange; mpmath,
# 50 digits); with these float64 coefficients |R(z) - (log((1 + s)/(1 - s)) - 2s) / s| < 2**-59.4
# on a grid of 20 000 z there.
_LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of log(2): k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_C1 = 0.6666666666666663
_C2 = 0.40000000000042685
_C3 = 0.28571428557906187
_C4 = 0.22222224162185336
_C5 = 0.1818166967257003
_C6 = 0.15391087645804086
_C7 = 0.1317278397179837
_C8 = 0.1385468050149105
_HALF_EXPONENT = np.int64(1) << 51


@njit(inline="always", error_model="numpy")
def _log_ratio(p, q):
    """``log(p / q)`` for positive normal float64 ``p``, ``q`` whose ratio is a normal number,
    without forming ``p / q``: ``s = (p - t) / (p + t)`` with ``t = q * 2**k`` (exact) and
    ``p - t`` exact (Sterbenz: p / t in [2/3, 3/2]). One division where ``log(p / q)`` takes two,
    no test or select to reduce the range, and more exact where KL's terms are, p / q near 1:
    rounding ``p / q`` had cost ``f`` its last digits (about 1e-16 absolute, against 1e-19
    now). Within 2 ULP of ``log(p / q)``, contracted and reassociated as :func:`_kl_sums` is."""
    bq = _bits(q)
    k = (_bits(p) - bq + _HALF_EXPONENT) >> 52  # log2(p / q) to the nearest integer, about
    t = _from_bits(bq + (k << 52))
    dk = np.float64(k)
    s = (p - t) / (p + t)
    z = s * s
    w = z * z
    big_r = z * (_C1 + w * (_C3 + w * (_C5 + w * _C7))) + w * (_C2 + w * (_C4 + w * (_C6 + w * _C8)))
    return dk * _LN2_HI + ((s * big_r + dk * _LN2_LO) + 2.0 * s)


# -- how kl_pass reads values (per chunk) -------------------------------------------------------
DECODE_FLOAT = 0  #: from the float views fa / fb (32/64-bit formats, mixed pairs as float64)
DECODE_TABLE = 1  #: through the decode tables (8-bit formats)
DECODE_HALF = 2  #: float16 bit patterns, by integer arithmetic
DECODE_BFLOAT = 3  #: bfloat16 bit patterns, by integer arithmetic
_HALF_REBIAS = np.int32((127 - 15) << 23)
_F32_EXPONENT = np.int32(0x7F800000)
_TWO_M24 = np.float32(2.0**-24)


@njit(inline="always", error_model="numpy")
def _half_value(h):
    """The float16 whose bit pattern is ``h``, as float64, exactly (subnormals, inf and NaN
    included), in 32-bit integer arithmetic: a vector loop of it decodes ~2.5x faster than one
    through the 512 KiB table, whose loads are one per element, not a vector's."""
    b = np.int32(h)
    mag = b & 0x7FFF
    normal = bits_float32((mag << 13) + _HALF_REBIAS)
    subnormal = np.float32(mag) * _TWO_M24  # mag < 0x400 here: exact
    special = bits_float32((mag << 13) | _F32_EXPONENT)  # inf, NaN (payload kept nonzero)
    v = where(mag >= 0x7C00, special, where(mag >= 0x400, normal, subnormal))
    return np.float64(where((b & 0x8000) != 0, -v, v))


@njit(inline="always", error_model="numpy")
def _bfloat_value(h):
    """The bfloat16 whose bit pattern is ``h``, as float64: the top half of a float32."""
    return np.float64(bits_float32(np.int32(h) << 16))


@njit(inline="always", error_model="numpy")
def _kl_decode(ua, ub, fa, fb, table_a, table_b, decode, lo, m, xs, ys):
    """Both sides' values of elements ``lo .. lo + m - 1`` into ``xs[:m]``, ``ys[:m]``, read as
    ``decode`` says (``DECODE_*``); the tables and float views by the fused pass's own
    :func:`_decode_block`, through the table ``fns``."""
    if decode == DECODE_HALF or decode == DECODE_BFLOAT:
        block_a = ua[lo : lo + m]
        block_b = ub[lo : lo + m]
        if decode == DECODE_HALF:
            for j in range(m):
                xs[j] = _half_value(block_a[j])
                ys[j] = _half_value(block_b[j])
        else:
            for j in range(m):
                xs[j] = _bfloat_value(block_a[j])
                ys[j] = _bfloat_value(block_b[j])
    else:
        _decode_block(ua, ub, fa, fb, table_a, table_b, decode == DECODE_TABLE, lo, m, xs, ys)


#: :func:`_kl_sums` reassociates its sums (a vector loop) and contracts a * b + c to one fused
#: multiply-add where the machine has one (the log's polynomial: a fifth of the loop's time).
_KL_FASTMATH = {"reassoc", "contract"}


@njit(**dict(_SUB, fastmath=_KL_FASTMATH))
def _kl_sums(xs, ys, m, min_x, inv_x, floor_x, min_y, inv_y, floor_y, out):
    """Adds to ``out`` the KL sums of decoded ``xs[:m]``, ``ys[:m]``: ``sum p``, ``sum q``,
    ``sum p * log(p / q)``, ``sum (p - q)`` over the elements finite on both sides, with
    ``p = max(floor_x, (x - min_x) * inv_x)`` and ``q`` likewise. One vector loop: reassociating
    and contracting :func:`_log_ratio` with it changes the log by an ULP at most (its test
    compiles it so; ``test_kl_of_a_pair_one_ulp_apart_keeps_its_digits`` holds KL to 1e-9)."""
    sum_p = sum_q = cross = diff = 0.0
    for j in range(m):
        x = xs[j]
        y = ys[j]
        fin = math.isfinite(x) & math.isfinite(y)
        # NaN products (0 * inf) take the floor; elements not finite get p = q = 1: 0 terms
        p = where(fin, imax(floor_x, (x - min_x) * inv_x), 1.0)
        q = where(fin, imax(floor_y, (y - min_y) * inv_y), 1.0)
        sum_p += where(fin, p, 0.0)
        sum_q += where(fin, q, 0.0)
        cross += p * _log_ratio(p, q)
        diff += p - q
    out[0] += sum_p
    out[1] += sum_q
    out[2] += cross
    out[3] += diff


@njit(**_KERNEL)
def kl_pass(
    ua, ub, fa, fb, table_a, table_b, decode, min_x, inv_x, floor_x, min_y, inv_y, floor_y, values, out
):
    """msaccucmp's KL sums over the elements finite on both sides: ``out += (sum p, sum q,
    sum p * log(p / q), sum (p - q))`` with ``p = max(floor_x, (x - min_x) * inv_x)``: the
    caller's ``(min_x, inv_x, floor_x)`` make p msaccucmp's ``max((x - min x) / (max x - min x),
    eps32)`` (1 on a constant side) times a factor that q shares (KL does not change); ``q``
    likewise for ``y``. Block by block: decoded (:func:`_kl_decode`) into the scratch ``values``
    (float64, ``(2, BLOCK)``, the caller's: an allocation here costs numba a compile of its own),
    then summed (:func:`_kl_sums`), both through the table ``fns`` (:func:`kl_calls`)."""
    n = ua.size
    xs = values[0]
    ys = values[1]
    for lo in range(0, n, BLOCK):
        m = imin(BLOCK, n - lo)
        _kl_decode(ua, ub, fa, fb, table_a, table_b, decode, lo, m, xs, ys)
        _kl_sums(xs, ys, m, min_x, inv_x, floor_x, min_y, inv_y, floor_y, out)


@njit(**_KERNEL)
def sketch_add(values, buckets):
    """Count non-negative float64 ``values`` into the sketch ``buckets``."""
    for v in values:
        buckets[sketch_key(v)] += 1


@njit(**_KERNEL)
def int_histogram_add(dist, exact, log):
    """Count integer distances into the exact bins (``< EXACT_BINS``) and the log2 bins;
    return ``(exact sum of those < 2**32, float64 sum of the others, max)``."""
    small = np.uint64(0)
    huge = 0.0
    top = np.uint64(0)
    for d0 in dist:
        d = np.uint64(d0)
        if d < EXACT_BINS:
            exact[np.intp(d)] += 1
        else:
            log[int_log_bin(d)] += 1
        if d < np.uint64(1 << 32):
            small += d
        else:
            huge += np.float64(d)
        if d > top:
            top = d
    return small, huge, top


#: Buckets of one narrowing step of :func:`select_ranks` at most (a 32 KiB count table: in L1) ...
_SELECT_BUCKETS = 1 << 12
#: ... and at least: fewer values get about as many buckets as values (zeroing and walking 4096
#: buckets had cost a 32-element pair more than its values).
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


@njit(**_SUB)
def _select_within(cand, m, r, counts):
    """The pattern of 0-based rank ``r`` among the patterns ``cand[:m]`` of non-negative floats
    (reordered in place): narrowed to the bucket holding the rank, bucket by bucket, until its
    patterns are all equal or few enough to sort."""
    while True:
        if m <= _SELECT_SORT:
            # an insertion sort: numba's np.sort costs ~1 s to compile, this a fraction
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
    it belongs (a branch there would mispredict on most of them: 3x slower). Integer loads and
    stores: moving each float to an integer register for its test cost a third more."""
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


@njit(**_KERNEL)
def select_ranks(bits, ranks, out, work):
    """The values of 0-based ``ranks`` (ascending) among non-negative float64 values, given as
    their bit patterns ``bits`` (``values.view(np.int64)``), as a full sort would place them;
    positive NaNs may be among them (elements that did not count), above every rank asked for:
    their patterns sort above all others, and the values need no compaction first. Bit
    patterns of non-negative floats are monotone in the value, and integer loads and stores
    spare the scalar loops a move from float to integer registers per value (a third of a
    gather's time): one pass counts the values into up to :data:`_SELECT_BUCKETS` buckets (about
    as many as values, :func:`_select_buckets`), exact
    zeros (the commonest error) in bucket 0 and equal ranges of patterns from the smallest
    positive value to the largest in the others. A rank in bucket 0 is 0; in another, a vector pass finds the
    smallest and largest value of its bucket (two buckets per pass): equal, they are the rank's
    value, as they mostly are for errors (ties, and few distinct values in one of the ranges);
    else the bucket's values are gathered and narrowed (:func:`_select_within`). No full sort,
    no per-call table larger than 32 KiB.

    The values land in ``out`` (float64, ``ranks.size``); ``work`` (int64) is the scratch the
    kernel works in; :func:`select_scratch` makes both. An array allocated here would cost
    numba a compile of its own per kind of allocation (a third of this kernel's compile, which
    a first small pair waits for). ``fns`` is the table of :func:`select_calls`, through which it
    calls :func:`_select_within`."""
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
            out[j] = _from_bits(low[u])
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
        out[j] = _from_bits(_select_within(cand, m, ranks[j] - below_of[j], counts))
    return out


def select_scratch(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(out, work)`` for :func:`select_ranks` to find ``k`` ranks among ``n`` values in: the
    count table, six slots per rank, room for one bucket's values and a copy of them."""
    return np.empty(k, dtype=np.float64), np.empty(_SELECT_BUCKETS + 6 * k + 2 * n + 1, dtype=np.int64)
