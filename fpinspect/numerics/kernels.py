"""The compiled pass behind the streaming statistics (numba, machine code, no GIL).

:func:`fused_pass` reads one chunk of both tensors once and updates every running value of
:class:`~fpinspect.numerics.stats.PairStats` (:data:`FIELDS`). Every storage format is first
decoded, block by block, into one canonical form (:func:`decode`: float64 values and the bit
patterns as uint64), so one compiled kernel serves all widths. The bucket rules of the quantile
stores live here once (:func:`sketch_key`, :func:`int_log_bin`).
"""

from __future__ import annotations

import math

import numpy as np

from .decode import decode, width
from .intrinsics import bits_float, float_bits, float_ubits, from_order_key, imax, imin, order_key
from .jit import KERNEL, SUB, njit
from .ulp import ulp_distance

#: Every running value of a pass, each spelled once: ``(name, numpy type, start, merge rule)``. The
#: kernels read and write them as the fields of one record (:data:`STATE`, ``state[0].name``);
#: :func:`~fpinspect.numerics.stats.merge_states` merges two passes' by the rules: ``sum``,
#: ``max``, ``min``, ``or``; ``argmax:INDEX`` a maximum and, in the field INDEX, its first index
#: (larger wins, an equal value the lower index); ``mean:M2`` one side's mean and, in M2, its
#: sum of squared deviations (Chan et al., over ``finite`` elements); ``own`` by the caller.
FIELDS = (
    # the reference script's trio, over all elements (NaN / inf propagate as in the script)
    ("script_dot", "f8", 0.0, "sum"),  # sum x*y
    ("script_sum_sq_x", "f8", 0.0, "sum"),
    ("script_sum_sq_y", "f8", 0.0, "sum"),
    ("script_max_abs", "f8", 0.0, "max"),  # max |x - y| (a NaN: script_max_abs_nan)
    ("script_max_rel", "f8", 0.0, "max"),  # max |x - y| / (max(|x|, |y|) + 1e-8)
    ("script_max_abs_nan", "i8", 0, "or"),  # 1 once a NaN entered the script's max |x - y|
    ("script_max_rel_nan", "i8", 0, "or"),
    # over the elements finite on both sides
    ("sum_sq_diff", "f8", 0.0, "sum"),
    ("sum_abs_diff", "f8", 0.0, "sum"),
    ("sum_sq_ref", "f8", 0.0, "sum"),
    ("max_abs_ref", "f8", 0.0, "max"),
    ("msaccucmp_sum_rel", "f8", 0.0, "sum"),  # |x - y| / |y| where |y| > float64 eps, 0 elsewhere
    ("msaccucmp_max_rel", "f8", 0.0, "max"),
    ("mean_x", "f8", 0.0, "mean:m2_x"),
    ("m2_x", "f8", 0.0, "own"),
    ("mean_y", "f8", 0.0, "mean:m2_y"),
    ("m2_y", "f8", 0.0, "own"),
    ("min_x", "f8", math.inf, "min"),
    ("max_x", "f8", -math.inf, "max"),
    ("min_y", "f8", math.inf, "min"),
    ("max_y", "f8", -math.inf, "max"),
    ("sum_rel", "f8", 0.0, "sum"),  # |x - y| / |y| where |y| >= the measured format's smallest normal
    ("sum_ulp_error", "f8", 0.0, "sum"),  # kind "error"
    ("sum_ulp_diff_huge", "f8", 0.0, "sum"),  # kind "diff": distances >= 2**32, as float64
    ("sum_ulp_diff", "u8", 0, "sum"),  # kind "diff": distances < 2**32, exact (the caller flushes it)
    ("max_abs", "f8", -1.0, "argmax:max_abs_index"),
    ("max_rel", "f8", -1.0, "argmax:max_rel_index"),
    ("max_ulp_error", "f8", -1.0, "argmax:max_ulp_index"),  # kind "error"
    ("max_ulp_diff", "u8", 0, "argmax:max_ulp_index"),  # kind "diff"
    ("max_abs_index", "i8", -1, "own"),
    ("max_rel_index", "i8", -1, "own"),
    ("max_ulp_index", "i8", -1, "own"),
    ("count", "i8", 0, "sum"),
    ("finite", "i8", 0, "sum"),  # elements finite on both sides
    ("both_nan", "i8", 0, "sum"),
    ("nan_mismatch", "i8", 0, "sum"),
    ("both_inf", "i8", 0, "sum"),
    ("inf_mismatch", "i8", 0, "sum"),
    ("bit_equal", "i8", 0, "sum"),
    ("signed_zero", "i8", 0, "sum"),
    ("below_one_thousandth", "i8", 0, "sum"),  # msprobe: |x - y| / |y| < 0.001 (eps32 for y == 0)
    ("below_five_thousandths", "i8", 0, "sum"),
    ("rel_count", "i8", 0, "sum"),
    ("rel_excluded", "i8", 0, "sum"),
    ("ulp_within_tol", "i8", 0, "sum"),  # kind "error": error <= tol
    ("ulp_within_one", "i8", 0, "sum"),  # kind "error": tol < error <= 1 + tol
    ("ulp_above_one", "i8", 0, "sum"),
    ("worst_filled", "i8", 0, "own"),  # how many of the worst slots hold an element
)
STATE = np.dtype([(name, kind) for name, kind, _, _ in FIELDS])


def new_state() -> np.ndarray:
    """A pass's running values at their start (a one-record array of :data:`STATE`)."""
    state = np.empty(1, dtype=STATE)
    state[0] = tuple(start for _, _, start, _ in FIELDS)
    return state


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
EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
_INV_EPS32 = 1.0 / EPS32  # a power of two: multiplying is dividing exactly
#: Denominator guard of the reference script's cosine and relative error.
REF_GUARD = 1e-8


@njit(inline="always", error_model="numpy")
def sketch_key(v):
    """Sketch bucket of a non-negative float64 ``v``: exponent and top mantissa bits."""
    return np.intp(float_ubits(v) >> _SKETCH_SHIFT)


@njit(inline="always", error_model="numpy")
def int_log_bin(d):
    """Log2 bin of an integer distance ``d >= EXACT_BINS``: ``floor(log2(float64(d)))``."""
    return imin(math.frexp(np.float64(d))[1] - 1, LOG_BINS - 1)


@njit(inline="always", error_model="numpy")
def merge_moments(mean, m2, n_old, n_new, mean_new, m2_new):
    """``(mean, m2)`` of ``n_old`` elements merged with another ``n_new``'s (Chan et al.)."""
    n = n_old + n_new
    delta = mean_new - mean
    return mean + delta * n_new / n, m2 + (m2_new + delta * delta * n_old * n_new / n)


#: Elements per block inside a chunk: the scratch arrays of a block stay in the L1 / L2 caches.
BLOCK = 4096
_I64_MAX = np.iinfo(np.int64).max
_I64_MIN = np.iinfo(np.int64).min


@njit(inline="always", error_model="numpy")
def ulp_error(ad, ay, emin, emax, inv_ulp, ulp_size):
    """``|x - y| / ulp(y)``: Goldberg's ulp at ``y``'s binary exponent, clipped to the format."""
    e = ((float_bits(ay) >> 52) & 0x7FF) - 1023
    e = imin(imax(e, emin), emax) - emin
    inv = inv_ulp[e]
    return ad * inv if inv > 0.0 else ad / ulp_size[e]


#: Sums may be reordered (reassociated) so that loops of sums compile to vector instructions.
_SUB_VECTOR = dict(SUB, fastmath={"reassoc"})
#: A kernel called from Python only: no C function wrapper.
KERNEL_PY = dict(KERNEL, no_cfunc_wrapper=True)


@njit(inline="always", error_model="numpy")
def _sketch_slot(v, counts, lane):
    """The slot of a sketch store (:data:`SKETCH_STORE`) that element ``v`` increments."""
    k = sketch_key(v)
    return np.int32((k if k != 0 else SKETCH_ZERO + lane) if counts else SKETCH_SKIP + lane)


@njit(**_SUB_VECTOR)
def _ulp_diff_block(ua, ub, xs, ys, m, sign_mask, mag_mask, slots):
    """Over one block, kind "diff": counts of bit-equal pairs, of distances of :data:`SMALL_DIST`
    and more, of +0 against -0, the exact sum of the distances below 2**32, and the largest
    distance; ``slots[j]`` gets ``LANES * min(d, SMALL_DIST) + j % LANES`` (``SMALL_DIST`` where
    not both finite), element ``j``'s slot in the small table."""
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
        dist = ulp_distance(a_raw, b_raw, sign_mask, mag_mask) * np.uint64(fin)
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


@njit(**SUB)
def _scatter(slots, m, table):
    """``table[slots[j]] += 1`` for the first ``m`` slots."""
    for j in range(m):
        table[slots[j]] += 1


@njit(**_SUB_VECTOR)
def _ulp_error_block(xs, ys, m, emin, emax, inv_ulp, ulp_size, share_tol, slots):
    """Over one block, kind "error": the sum of the ULP errors, the largest one's bits (-1 for
    none), the counts within ``share_tol`` and ``1 + share_tol``, and ``slots[j]`` the sketch slots."""
    total = 0.0
    top = np.int64(-1)
    n_tol = n_le1 = 0
    for j in range(m):
        x = xs[j]
        y = ys[j]
        fin = math.isfinite(x) & math.isfinite(y)
        err = ulp_error(abs(x - y), abs(y), emin, emax, inv_ulp, ulp_size)
        total += err if fin else 0.0
        top = imax(top, float_bits(err) if fin else np.int64(-1))
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
    """The maxima (as bit patterns: exact; -1 or 0 where nothing counts), ranges (as
    :func:`~fpinspect.numerics.intrinsics.order_key`) and relative errors over one block's elements
    finite on both sides; ``slots[0]``, ``slots[1]`` get the abs and rel sketch slots."""
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
        abs_bits = imax(abs_bits, float_bits(ad) if fin else np.int64(-1))
        kx = order_key(x)
        ky = order_key(y)
        min_x_key = imin(min_x_key, kx if fin else _I64_MAX)
        max_x_key = imax(max_x_key, kx if fin else _I64_MIN)
        min_y_key = imin(min_y_key, ky if fin else _I64_MAX)
        max_y_key = imax(max_y_key, ky if fin else _I64_MIN)
        # the reference script's relative error (its non-finite elements: _count_specials)
        r = ad / ((ax if ax > ay else ay) + REF_GUARD)
        script_rel_bits = imax(script_rel_bits, float_bits(r) if fin else np.int64(0))
        # one quotient serves the three relative errors; they differ only where |y| is tiny
        q = ad / ay
        rms = q if fin & (ay > EPS64) else 0.0
        s_rms += rms
        rms_bits = imax(rms_bits, float_bits(rms))
        re = q if ay != 0.0 else ad * _INV_EPS32
        n_re5 += fin & (re < 0.005)
        n_re1 += fin & (re < 0.001)
        counted = fin & (ay >= tiny)
        n_rel += counted
        s_rel += q if counted else 0.0
        rel_bits = imax(rel_bits, float_bits(q) if counted else np.int64(-1))
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


@njit(**SUB)
def _bit_equal(ua, ub, m):
    """Whether the first ``m`` bit patterns of ``ua`` and ``ub`` are all equal (stops at the
    first difference: a block that differs costs a few elements)."""
    for j in range(m):
        if ua[j] != ub[j]:
            return False
    return True


@njit(**_SUB_VECTOR)
def _equal_block(xs, m, tiny):
    """What :func:`_ratios_block` finds in a block equal bit for bit on both sides, where every
    error is 0: the range of the finite values and the count of those at least ``tiny``."""
    min_key = _I64_MAX
    max_key = _I64_MIN
    n_rel = 0
    for j in range(m):
        x = xs[j]
        fin = math.isfinite(x)
        k = order_key(x)
        min_key = imin(min_key, k if fin else _I64_MAX)
        max_key = imax(max_key, k if fin else _I64_MIN)
        n_rel += fin & (abs(x) >= tiny)
    return min_key, max_key, n_rel


@njit(**SUB)
def _keep_block(xs, ys, m, first, tiny, same, fmt, keep):
    """Store each element's abs / rel / ULP error at its flat index (NaN where it does not count)."""
    _, _, emin, emax, inv_ulp, ulp_size = fmt
    keep_abs, keep_rel, keep_ulp = keep
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
            err = ulp_error(abs(x - y), abs(y), emin, emax, inv_ulp, ulp_size)
            keep_ulp[first + j] = err if fin else nan


@njit(**SUB)
def _centre(xs, ys, m):
    """The centre of a chunk's moment sums: the mean of its first finite elements (of the first
    ``m``), ``(0, 0)`` where none is."""
    cx = cy = 0.0
    nc = 0
    for i in range(m):
        x, y = xs[i], ys[i]
        if math.isfinite(x) and math.isfinite(y):
            cx += x
            cy += y
            nc += 1
    if nc:
        cx /= nc
        cy /= nc
    return cx, cy


@njit(inline="always", error_model="numpy")
def _offer_worst(score, index, worst_score, worst_index, state):
    """Insert ``(score, index)`` among the k worst, larger first (elements arrive in index order:
    a tie with the k-th never enters); return the floor, the k-th score once all are filled."""
    s = state[0]
    k = worst_score.size
    filled = s.worst_filled
    j = filled if filled < k else k - 1
    while j > 0 and worst_score[j - 1] < score:
        worst_score[j] = worst_score[j - 1]
        worst_index[j] = worst_index[j - 1]
        j -= 1
    worst_score[j] = score
    worst_index[j] = index
    if filled < k:
        filled += 1
        s.worst_filled = filled
    return worst_score[k - 1] if filled == k else 0.0


@njit(**SUB)
def _count_specials(xs, ys, m, state):
    """Count one block's special values and return their terms of the reference script's trio:
    ``(mismatches, sum x*y, sum x*x, sum y*y, max |x - y| (-1 if none), 1 if one is NaN, max
    script relative error (-1 if none), 1 if one is NaN)``."""
    mismatches = 0
    s_dot = s_xx = s_yy = 0.0
    script_abs = script_rel = -1.0
    abs_nan = rel_nan = 0
    s = state[0]
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
        r = ad / ((ax if ax > ay else ay) + REF_GUARD)
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
            s.both_nan += 1
        elif nx or ny:
            s.nan_mismatch += 1
            mismatches += 1
        elif math.isinf(x) and x == y:
            s.both_inf += 1
        else:
            s.inf_mismatch += 1
            mismatches += 1
    return mismatches, s_dot, s_xx, s_yy, script_abs, abs_nan, script_rel, rel_nan


@njit(**SUB)
def _first_index(ua, ub, xs, ys, m, what, value, tiny, fmt):
    """Position in the block of the first finite element whose abs error (``what`` 0), relative
    error (1), ULP distance (2) or ULP error (3) equals ``value``; -1 if none."""
    sign_mask, mag_mask, emin, emax, inv_ulp, ulp_size = fmt
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
            hit = np.float64(ulp_distance(ua[j], ub[j], sign_mask, mag_mask)) == value
        else:
            hit = ulp_error(ad, ay, emin, emax, inv_ulp, ulp_size) == value
        if hit:
            return j
    return -1


@njit(**SUB)
def _count_large_distances(ua, ub, xs, ys, m, sign_mask, mag_mask, hist_exact, hist_log):
    """Histogram one block's (rare) ULP distances of :data:`SMALL_DIST` and more; return the
    float64 sum of those of 2**32 and more."""
    huge = 0.0
    for j in range(m):
        dist = ulp_distance(ua[j], ub[j], sign_mask, mag_mask)
        if dist >= np.uint64(SMALL_DIST) and math.isfinite(xs[j]) and math.isfinite(ys[j]):
            if dist < EXACT_BINS:
                hist_exact[np.intp(dist)] += 1
            else:
                hist_log[int_log_bin(dist)] += 1
                if dist >= np.uint64(1 << 32):
                    huge += np.float64(dist)
    return huge


@njit(**SUB)
def _worst_block(ua, ub, xs, ys, m, first, same, fmt, floor, worst_score, worst_index, state):
    """Offer the elements of one block to the k worst (special-value mismatches score inf);
    return the new floor."""
    sign_mask, mag_mask, emin, emax, inv_ulp, ulp_size = fmt
    for j in range(m):
        x = xs[j]
        y = ys[j]
        if math.isfinite(x) and math.isfinite(y):
            if same:
                score = np.float64(ulp_distance(ua[j], ub[j], sign_mask, mag_mask))
            else:
                score = ulp_error(abs(x - y), abs(y), emin, emax, inv_ulp, ulp_size)
        else:
            both_nan = x != x and y != y
            same_inf = math.isinf(x) and x == y
            score = -1.0 if both_nan or same_inf else np.inf
        if score > floor:
            floor = _offer_worst(score, first + j, worst_score, worst_index, state)
    return floor


@njit(inline="always", error_model="numpy")
def _larger(v, b):
    """The larger of a non-negative float64 ``v`` and the float whose bit pattern is ``b`` (a
    negative pattern: none)."""
    return bits_float(imax(float_bits(v), b))


@njit(inline="always", error_model="numpy")
def _lower(v, key):
    """The smaller of float64 ``v`` and the float whose :func:`order_key` is ``key``."""
    return from_order_key(imin(order_key(v), key))


@njit(inline="always", error_model="numpy")
def _upper(v, key):
    """The larger of float64 ``v`` and the float whose :func:`order_key` is ``key``."""
    return from_order_key(imax(order_key(v), key))


@njit(**KERNEL_PY)
def fused_pass(chunk, mode, offset, fmt, state, hists, worst, keep, sketches, scratch):
    """Update the running ``state`` (:data:`STATE`) with one chunk, whose element ``i`` has flat
    index ``offset + i``: ``chunk`` is ``(raw_a, raw_b, code, table)``, both sides' bytes as
    :func:`~fpinspect.numerics.decode.decode` reads them; ``fmt`` the measured format's ``(tiny,
    sign_mask, mag_mask, emin, inv_ulp, ulp_size, share_tol)``: its smallest normal (below it a
    relative error is excluded), the masks splitting a bit pattern, the ULP at binary exponent
    ``e`` (``ulp_size[e - emin]``, ``inv_ulp`` its exact inverse where representable) and the
    tolerance of the ULP share cuts. ``hists`` is the ULP histogram ``(exact, log)``, ``worst``
    the ``(scores, indices)`` of the k worst; ``keep`` (:data:`KEEP_VALUES`) and ``sketches``
    (:data:`SKETCH`) the abs / rel / ULP quantile stores.

    Block by block (:data:`BLOCK`, decoded once), branch-free loops that compile to vector
    instructions take every element (their sums' order differs from a plain loop); a block equal
    bit for bit on both sides skips the error loops, and the rarer work (special values, first
    indices of new maxima, large ULP distances, the worst) runs only in the blocks that need it.
    """
    raw_a, raw_b, code, table = chunk
    tiny, sign_mask, mag_mask, emin, inv_ulp, ulp_size, share_tol = fmt
    hist_exact, hist_log = hists
    worst_score, worst_index = worst
    sketch_abs, sketch_rel, sketch_ulp = sketches
    values, bits, slots, small = scratch
    s = state[0]
    n = raw_a.size // width(code)
    same = (mode & SAME_FORMAT) != 0
    keep_values = (mode & KEEP_VALUES) != 0
    sketch = (mode & SKETCH) != 0
    emax = emin + inv_ulp.size - 1
    ulp = (sign_mask, mag_mask, emin, emax, inv_ulp, ulp_size)
    xs, ys, ua, ub = values[0], values[1], bits[0], bits[1]
    track_worst = worst_score.size > 0
    worst_floor = 0.0
    if track_worst and s.worst_filled == worst_score.size:
        worst_floor = worst_score[worst_score.size - 1]

    m = imin(n, _CENTRE_SAMPLE)
    decode(raw_a, code, table, 0, m, xs, ua)
    decode(raw_b, code, table, 0, m, ys, ub)
    cx, cy = _centre(xs, ys, m)

    # the chunk's floating-point sums, added to the running ones at its end; the special values'
    # terms of the script's sums come after the others' (each is inf or NaN: either order gives
    # the same sum). Counts, maxima and ranges go to ``s`` block by block: any order is exact.
    s_dot = s_xx = s_yy = s_d2 = s_ad = s_rms = s_rel = s_ulp = 0.0
    sx = sxx = sy = syy = 0.0
    x_dot = x_xx = x_yy = s_ulp_huge = 0.0
    nf = np.int64(0)
    # not literals: numba would compile _first_index once per literal value
    what_abs, what_rel, what_dist, what_err = np.int64(0), np.int64(1), np.int64(2), np.int64(3)

    for start in range(0, n, BLOCK):
        m = imin(BLOCK, n - start)
        first = offset + start
        decode(raw_a, code, table, start, m, xs, ua)
        decode(raw_b, code, table, start, m, ys, ub)

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
        equal = same and _bit_equal(ua, ub, m)
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
        s.script_max_abs = _larger(s.script_max_abs, b_abs_bits)
        s.script_max_rel = _larger(s.script_max_rel, b_script_rel_bits)
        s.min_x, s.max_x = _lower(s.min_x, b_min_x), _upper(s.max_x, b_max_x)
        s.min_y, s.max_y = _lower(s.min_y, b_min_y), _upper(s.max_y, b_max_y)
        s_rms += b_rms
        s.msaccucmp_max_rel = _larger(s.msaccucmp_max_rel, b_rms_bits)
        s.below_five_thousandths += b_re5
        s.below_one_thousandth += b_re1
        s.rel_count += b_rel
        s.rel_excluded += b_nf - b_rel
        s_rel += b_s_rel

        b_score = np.int64(-1)  # the block's largest distance (kind "diff") or error's bits
        b_far = 0
        if equal:
            s.bit_equal += m
            small[0] += b_nf  # distance 0 (copy 0 of bin 0)
            b_score = np.int64(0)
        elif same:
            b_bits, b_far, b_signed_zero, b_sum, b_dist = _ulp_diff_block(
                ua, ub, xs, ys, m, sign_mask, mag_mask, slots[2]
            )
            _scatter(slots[2], m, small)
            s.bit_equal += b_bits
            s.signed_zero += b_signed_zero
            s.sum_ulp_diff += b_sum
            b_score = np.int64(b_dist)  # the same 64 bits: read back as uint64 below
        else:
            b_ulp, b_score, b_tol, b_le1 = _ulp_error_block(
                xs, ys, m, emin, emax, inv_ulp, ulp_size, share_tol, slots[2]
            )
            s_ulp += b_ulp
            s.ulp_within_tol += b_tol
            s.ulp_within_one += b_le1 - b_tol
            s.ulp_above_one += b_nf - b_le1

        if keep_values:
            _keep_block(xs, ys, m, first, tiny, same, ulp, keep)
        if sketch and equal:  # every counted error is an exact zero
            sketch_abs[SKETCH_ZERO] += b_nf
            sketch_rel[SKETCH_ZERO] += b_rel
        elif sketch:
            _scatter(slots[0], m, sketch_abs)
            _scatter(slots[1], m, sketch_rel)
            if not same:
                _scatter(slots[2], m, sketch_ulp)

        # the rarer work: special values, first indices of new maxima, large distances, the worst
        b_abs = bits_float(b_abs_bits) if b_abs_bits >= 0 else -1.0
        b_rel_max = bits_float(b_rel_bits) if b_rel_bits >= 0 else -1.0
        b_dist = np.uint64(b_score)
        b_err = bits_float(b_score) if b_score >= 0 else -1.0
        b_worst = np.float64(b_dist) if same else b_err
        new_dist = same and b_nf > 0 and (b_dist > s.max_ulp_diff or s.max_ulp_index < 0)
        far = same and b_far > 0
        new_err = not same and b_err > s.max_ulp_error
        new_max = b_abs > s.max_abs or b_rel_max > s.max_rel or new_dist or new_err
        special = b_nf < m
        if not (special or new_max or far or (track_worst and b_worst > worst_floor)):
            continue
        n_mismatch = 0
        if special:
            n_mismatch, e_dot, e_xx, e_yy, e_abs, e_abs_nan, e_rel, e_rel_nan = _count_specials(
                xs, ys, m, state
            )
            x_dot += e_dot
            x_xx += e_xx
            x_yy += e_yy
            s.script_max_abs = _larger(s.script_max_abs, float_bits(e_abs))
            s.script_max_rel = _larger(s.script_max_rel, float_bits(e_rel))
            s.script_max_abs_nan |= e_abs_nan
            s.script_max_rel_nan |= e_rel_nan
        if b_abs > s.max_abs:
            s.max_abs = b_abs
            s.max_abs_index = first + _first_index(ua, ub, xs, ys, m, what_abs, b_abs, tiny, ulp)
        if b_rel_max > s.max_rel:
            s.max_rel = b_rel_max
            s.max_rel_index = first + _first_index(ua, ub, xs, ys, m, what_rel, b_rel_max, tiny, ulp)
        if new_dist:
            s.max_ulp_diff = b_dist
            value = np.float64(b_dist)
            s.max_ulp_index = first + _first_index(ua, ub, xs, ys, m, what_dist, value, tiny, ulp)
        if far:
            s_ulp_huge += _count_large_distances(ua, ub, xs, ys, m, sign_mask, mag_mask, hist_exact, hist_log)
        if new_err:
            s.max_ulp_error = b_err
            s.max_ulp_index = first + _first_index(ua, ub, xs, ys, m, what_err, b_err, tiny, ulp)
        if track_worst and (n_mismatch > 0 or b_worst > worst_floor):
            worst_floor = _worst_block(
                ua, ub, xs, ys, m, first, same, ulp, worst_floor, worst_score, worst_index, state
            )

    # fold the chunk's sums into the running values
    s.script_dot = (s.script_dot + s_dot) + x_dot
    s.script_sum_sq_x = (s.script_sum_sq_x + s_xx) + x_xx
    s.script_sum_sq_y = (s.script_sum_sq_y + s_yy) + x_yy
    s.sum_sq_diff += s_d2
    s.sum_abs_diff += s_ad
    s.sum_sq_ref += s_yy
    s.msaccucmp_sum_rel += s_rms
    s.sum_rel += s_rel
    s.sum_ulp_error += s_ulp
    s.sum_ulp_diff_huge += s_ulp_huge
    if s.min_y <= s.max_y:  # some element was finite on both sides: max |y| is an end
        s.max_abs_ref = imax(abs(s.min_y), abs(s.max_y))
    if nf:
        mean_x = cx + sx / nf
        mean_y = cy + sy / nf
        m2_x, m2_y = imax(sxx - sx * sx / nf, 0.0), imax(syy - sy * sy / nf, 0.0)
        s.mean_x, s.m2_x = merge_moments(s.mean_x, s.m2_x, s.finite, nf, mean_x, m2_x)
        s.mean_y, s.m2_y = merge_moments(s.mean_y, s.m2_y, s.finite, nf, mean_y, m2_y)
    if same:
        for i in range(small.size):
            if i < SMALL_DIST * LANES:
                hist_exact[i // LANES] += small[i]
            small[i] = 0
    s.count += n
    s.finite += nf


def scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The scratch arrays :func:`fused_pass` works in: ``(values, bits, slots, small)``."""
    return (
        np.empty((2, BLOCK), dtype=np.float64),
        np.empty((2, BLOCK), dtype=np.uint64),
        np.empty((3, BLOCK), dtype=np.int32),
        np.zeros((SMALL_DIST + 1) * LANES, dtype=np.int64),
    )


@njit(**KERNEL)
def sketch_add(values, buckets):
    """Count non-negative float64 ``values`` into the sketch ``buckets``."""
    for v in values:
        buckets[sketch_key(v)] += 1
