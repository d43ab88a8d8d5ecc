"""The compiled loops behind the streaming statistics (numba, machine code, no GIL).

:func:`fused_pass` reads one chunk of both tensors once and updates every running statistic
of :class:`~fpinspect.numerics.stats.PairStats`: the reference script's trio, the special-value
counts, the finite-only sums, maxima with their first index, both sides' moments and ranges,
the msaccucmp / msprobe counts, the ULP histogram or real-valued ULP errors, the quantile
stores and the ``k`` worst elements. :func:`kl_pass` is msaccucmp's KL divergence, which needs
both sides' ranges first. :func:`axis_profile_pass` bins the ULP errors along the axes of a
tensor for the drill-down. The bucket rules of the quantile stores live here once
(:func:`sketch_key`, :func:`int_log_bin`); :mod:`fpinspect.numerics.quantiles` reads them.

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

#: Elements sampled at the start of a chunk to centre the moment sums (keeps them exact-ish).
_CENTRE_SAMPLE = 64
#: Integer ULP distances below this go to the exact histogram bins.
EXACT_BINS = 1 << 16
LOG_BINS = 64
#: Sketch bucket of a non-negative float64: its bit pattern >> (52 - SKETCH_MANT_BITS).
SKETCH_MANT_BITS = 7
SKETCH_BUCKETS = 1 << (11 + SKETCH_MANT_BITS)
_SKETCH_SHIFT = np.uint64(52 - SKETCH_MANT_BITS)
_EPS64 = float(np.finfo(np.float64).eps)
_EPS32 = float(np.finfo(np.float32).eps)
_INV_EPS32 = 1.0 / _EPS32  # a power of two: multiplying is dividing exactly
_REF_GUARD = 1e-8
#: A product ``m * d`` is within this relative distance of its exact value: a quotient is
#: computed only when it may beat the running maximum ``m``.
_ROUND_MARGIN = 1.0 - 1e-15


@njit(inline="always", error_model="numpy")
def sketch_key(v):
    """Sketch bucket of a non-negative float64 ``v``: exponent and top mantissa bits."""
    return np.intp(np.float64(v).view(np.uint64) >> _SKETCH_SHIFT)


@njit(inline="always", error_model="numpy")
def int_log_bin(d):
    """Log2 bin of an integer distance ``d >= EXACT_BINS``: ``floor(log2(float64(d)))``."""
    return min(math.frexp(np.float64(d))[1] - 1, LOG_BINS - 1)


@njit(inline="always", error_model="numpy")
def _ulp_distance(ua, ub, sign_mask, mag_mask):
    """Steps between two bit patterns of one format, zeros counted once (uint64)."""
    a = np.uint64(ua)
    b = np.uint64(ub)
    ma = a & mag_mask
    mb = b & mag_mask
    if (a & sign_mask) == (b & sign_mask):
        return ma - mb if ma >= mb else mb - ma
    return ma + mb


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


@njit(nogil=True, cache=True, error_model="numpy")
def fused_pass(ua, ub, fa, fb, table_a, table_b, mode, offset, tiny, share_tol, sign_mask, mag_mask,
               emin, inv_ulp, ulp_size, acc, cnt, ucnt, hist_exact, hist_log, keep_abs, keep_rel, keep_ulp,
               sketch_abs, sketch_rel, sketch_ulp, worst_score, worst_index):  # fmt: skip
    """Update the running statistics with one chunk; element ``i`` has flat index ``offset + i``.

    ``tiny`` is the smallest normal of the measured format (below it a relative error is
    excluded); ``share_tol`` the tolerance of the ULP share cuts; ``sign_mask`` / ``mag_mask``
    split a bit pattern (kind "diff"); for kind "error" the ULP of a reference with binary
    exponent ``e`` (clipped to the format's range by the caller's tables) is
    ``ulp_size[e - emin]`` and, where representable, ``inv_ulp[e - emin]`` is its exact inverse.
    """
    n = ua.size
    use_table = (mode & USE_TABLE) != 0
    same = (mode & SAME_FORMAT) != 0
    keep = (mode & KEEP_VALUES) != 0
    sketch = (mode & SKETCH) != 0
    track_worst = worst_score.size > 0
    worst_floor = 0.0
    if track_worst and cnt[WORST_FILLED] == worst_score.size:
        worst_floor = worst_score[worst_score.size - 1]
    n_exp = inv_ulp.size
    emax = emin + n_exp - 1

    # centre of this chunk's moment sums: mean of its first finite elements
    cx = cy = 0.0
    nc = 0
    for i in range(min(n, _CENTRE_SAMPLE)):
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

    s_dot = s_xx = s_yy = 0.0
    s_d2 = s_ad = s_yy_fin = 0.0
    s_rms = s_rel = s_ulp = s_ulp_huge = 0.0
    sx = sxx = sy = syy = 0.0
    u_sum = np.uint64(0)
    script_max_abs = acc[SCRIPT_MAX_ABS]
    script_max_rel = acc[SCRIPT_MAX_REL]
    max_abs = acc[MAX_ABS]
    max_rel = acc[MAX_REL]
    max_rms = acc[MSACCUCMP_MAX_REL]
    max_ay = acc[MAX_ABS_REF]
    max_err = acc[MAX_ULP_ERROR]
    max_dist = ucnt[MAX_ULP_DIFF]
    min_x, max_x, min_y, max_y = acc[MIN_X], acc[MAX_X], acc[MIN_Y], acc[MAX_Y]
    nf = 0
    n_bits = n_re1 = n_re5 = n_rel = 0
    n_zero = n_one = n_signed_zero = 0
    dist_huge = False
    n_tol = n_le1 = 0
    nan_abs = nan_rel = False
    nan = np.nan

    # Arrays are never passed to helpers inside the loop: numba would count references per call.
    for i in range(n):
        if use_table:
            x, y = table_a[ua[i]], table_b[ub[i]]
        else:
            x, y = np.float64(fa[i]), np.float64(fb[i])
        gi = offset + i
        s_dot += x * y
        s_xx += x * x
        s_yy += y * y
        d = x - y
        ad = abs(d)
        ax = abs(x)
        ay = abs(y)
        if same:
            n_bits += ua[i] == ub[i]
        if not (math.isfinite(x) and math.isfinite(y)):
            # special values: counted, kept out of every finite statistic
            if ad > script_max_abs:
                script_max_abs = ad
            elif ad != ad:
                nan_abs = True
            den = (ax if ax > ay else ay) + _REF_GUARD
            r = ad / den
            if r > script_max_rel:
                script_max_rel = r
            elif r != r:
                nan_rel = True
            nx, ny = x != x, y != y
            ix, iy = math.isinf(x), math.isinf(y)
            mismatch = False
            if nx and ny:
                cnt[BOTH_NAN] += 1
            elif nx or ny:
                cnt[NAN_MISMATCH] += 1
                mismatch = True
            elif ix and iy and x == y:
                cnt[BOTH_INF] += 1
            else:
                cnt[INF_MISMATCH] += 1
                mismatch = True
            if mismatch and track_worst and np.inf > worst_floor:
                worst_floor = _offer_worst(np.inf, gi, worst_score, worst_index, cnt)
            if keep:
                keep_abs[gi] = nan
                keep_rel[gi] = nan
                if not same:
                    keep_ulp[gi] = nan
            continue

        nf += 1
        # the reference script's trio (maxima over all elements)
        if ad > script_max_abs:
            script_max_abs = ad
        den = (ax if ax > ay else ay) + _REF_GUARD
        if ad >= script_max_rel * den * _ROUND_MARGIN:
            r = ad / den
            if r > script_max_rel:
                script_max_rel = r
        # finite-only sums and maxima
        s_d2 += d * d
        s_ad += ad
        s_yy_fin += y * y
        if ad > max_abs:
            max_abs = ad
            cnt[MAX_ABS_INDEX] = gi
        if ay > max_ay:
            max_ay = ay
        dx = x - cx
        dy = y - cy
        sx += dx
        sxx += dx * dx
        sy += dy
        syy += dy * dy
        if x < min_x:
            min_x = x
        if x > max_x:
            max_x = x
        if y < min_y:
            min_y = y
        if y > max_y:
            max_y = y
        # one quotient serves the three relative errors; they differ only where |y| is tiny
        q = ad / ay
        if ay > _EPS64:
            s_rms += q
            if q > max_rms:
                max_rms = q
        re = q if ay != 0.0 else ad * _INV_EPS32
        n_re5 += re < 0.005
        n_re1 += re < 0.001
        if ay >= tiny:
            n_rel += 1
            s_rel += q
            if q > max_rel:
                max_rel = q
                cnt[MAX_REL_INDEX] = gi
            if keep:
                keep_rel[gi] = q
            if sketch:
                sketch_rel[sketch_key(q)] += 1
        elif keep:
            keep_rel[gi] = nan
        if keep:
            keep_abs[gi] = ad
        if sketch:
            sketch_abs[sketch_key(ad)] += 1
        # ULP
        if same:
            dist = _ulp_distance(ua[i], ub[i], sign_mask, mag_mask)
            # branch-free for the common 0 and 1 (an unpredictable branch costs more than all else)
            n_zero += dist == 0
            n_one += dist == 1
            # equal values with different bits: +0 against -0
            n_signed_zero += (dist == 0) & (ua[i] != ub[i])
            if dist > 1:
                if dist < EXACT_BINS:
                    hist_exact[np.intp(dist)] += 1
                else:
                    hist_log[int_log_bin(dist)] += 1
                if dist >= np.uint64(1 << 32):
                    s_ulp_huge += np.float64(dist)
                    dist_huge = True
            u_sum += dist if dist < np.uint64(1 << 32) else np.uint64(0)
            if dist > max_dist:
                max_dist = dist
                cnt[MAX_ULP_INDEX] = gi
            score = np.float64(dist)
        else:
            e = np.int64((np.float64(ay).view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)) - 1023
            e = min(max(e, emin), emax) - emin
            inv = inv_ulp[e]
            err = ad * inv if inv > 0.0 else ad / ulp_size[e]
            s_ulp += err
            if err > max_err:
                max_err = err
                cnt[MAX_ULP_INDEX] = gi
            n_tol += err <= share_tol
            n_le1 += err <= 1.0 + share_tol
            if keep:
                keep_ulp[gi] = err
            if sketch:
                sketch_ulp[sketch_key(err)] += 1
            score = err
        if track_worst and score > worst_floor:
            worst_floor = _offer_worst(score, gi, worst_score, worst_index, cnt)

    acc[SCRIPT_DOT] += s_dot
    acc[SCRIPT_SUM_XX] += s_xx
    acc[SCRIPT_SUM_YY] += s_yy
    acc[SCRIPT_MAX_ABS] = script_max_abs
    acc[SCRIPT_MAX_REL] = script_max_rel
    cnt[SCRIPT_MAX_ABS_NAN] |= nan_abs
    cnt[SCRIPT_MAX_REL_NAN] |= nan_rel
    acc[SUM_SQ_DIFF] += s_d2
    acc[SUM_ABS_DIFF] += s_ad
    acc[SUM_SQ_REF] += s_yy_fin
    acc[MAX_ABS_REF] = max_ay
    acc[MSACCUCMP_SUM_REL] += s_rms
    acc[MSACCUCMP_MAX_REL] = max_rms
    acc[SUM_REL] += s_rel
    acc[SUM_ULP_ERROR] += s_ulp
    acc[SUM_ULP_DIFF_HUGE] += s_ulp_huge
    acc[MAX_ABS] = max_abs
    acc[MAX_REL] = max_rel
    acc[MAX_ULP_ERROR] = max_err
    acc[MIN_X], acc[MAX_X], acc[MIN_Y], acc[MAX_Y] = min_x, max_x, min_y, max_y
    if nf:
        mean_x = cx + sx / nf
        mean_y = cy + sy / nf
        _merge_moments(acc, MEAN_X, M2_X, cnt[FINITE], nf, mean_x, max(sxx - sx * sx / nf, 0.0))
        _merge_moments(acc, MEAN_Y, M2_Y, cnt[FINITE], nf, mean_y, max(syy - sy * sy / nf, 0.0))
    ucnt[SUM_ULP_DIFF] += u_sum
    ucnt[MAX_ULP_DIFF] = max_dist
    if same:
        hist_exact[0] += n_zero
        hist_exact[1] += n_one
    cnt[COUNT] += n
    cnt[FINITE] += nf
    cnt[BIT_EQUAL] += n_bits
    cnt[BELOW_ONE_THOUSANDTH] += n_re1
    cnt[BELOW_FIVE_THOUSANDTHS] += n_re5
    cnt[REL_COUNT] += n_rel
    cnt[REL_EXCLUDED] += nf - n_rel
    cnt[ULP_WITHIN_TOL] += n_tol
    cnt[ULP_WITHIN_ONE] += n_le1 - n_tol
    cnt[ULP_ABOVE_ONE] += 0 if same else nf - n_le1
    cnt[SIGNED_ZERO] += n_signed_zero


@njit(nogil=True, cache=True, error_model="numpy")
def kl_pass(ua, ub, fa, fb, table_a, table_b, use_table, min_x, range_x, min_y, range_y, out):
    """msaccucmp's KL sums over the elements finite on both sides: ``out += (sum p, sum q,
    sum p * log(p / q))`` with ``p = max((x - min_x) / range_x, eps32)`` (1 where the range
    is 0: a constant side is uniform), ``q`` likewise for ``y``."""
    sp = sq = cross = 0.0
    for i in range(ua.size):
        if use_table:
            x, y = table_a[ua[i]], table_b[ub[i]]
        else:
            x, y = np.float64(fa[i]), np.float64(fb[i])
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        p = max((x - min_x) / range_x, _EPS32) if range_x > 0 else 1.0
        q = max((y - min_y) / range_y, _EPS32) if range_y > 0 else 1.0
        sp += p
        sq += q
        cross += p * math.log(p / q)
    out[0] += sp
    out[1] += sq
    out[2] += cross


@njit(nogil=True, cache=True, error_model="numpy")
def sketch_add(values, buckets):
    """Count non-negative float64 ``values`` into the sketch ``buckets``."""
    for v in values:
        buckets[sketch_key(v)] += 1


@njit(nogil=True, cache=True, error_model="numpy")
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
