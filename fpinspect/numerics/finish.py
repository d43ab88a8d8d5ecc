"""The rarer work of a chunk's pass, after :func:`~fpinspect.numerics.kernels.fused_pass`: the
special values, the first index of each new maximum, the large ULP distances and the ``k`` worst
elements. :func:`finish_pass` decodes again only the blocks that need any of it (the fused pass's
block record tells which).
"""

from __future__ import annotations

import math

import numpy as np

from .intrinsics import bits_float, float_bits, imax, imin
from .jit import SUB, njit
from .kernels import (
    BLOCK,
    EXACT_BINS,
    KERNEL_PY,
    REC_ABS,
    REC_FAR,
    REC_FINITE,
    REC_REL,
    REC_SCORE,
    REF_GUARD,
    SAME_FORMAT,
    SMALL_DIST,
    USE_TABLE,
    decode_block,
    int_log_bin,
    ulp_distance,
    ulp_error,
)


@njit(inline="always", error_model="numpy")
def _offer_worst(score, index, worst_score, worst_index, state):
    """Insert ``(score, index)`` among the k worst: larger first, lower index first on ties.

    Elements arrive in increasing index order, so a tie with the k-th never enters. The
    caller offers only scores above the returned floor: the k-th score once all are filled."""
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
    """Count the special values of one block, and take them into the reference script's trio,
    which runs over all elements: ``(mismatches, sum x*y, sum x*x, sum y*y, max |x - y| (-1 if
    none), 1 if some |x - y| is NaN, max script relative error (-1 if none), 1 if one is NaN)``
    over the elements not finite on both sides."""
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
            hit = np.float64(ulp_distance(ua[start + j], ub[start + j], sign_mask, mag_mask)) == value
        else:
            hit = ulp_error(ad, ay, emin, emax, inv_ulp, ulp_size) == value
        if hit:
            return j
    return -1


@njit(**SUB)
def _count_large_distances(ua, ub, xs, ys, start, m, sign_mask, mag_mask, hist_exact, hist_log):
    """Histogram the ULP distances of :data:`SMALL_DIST` and more of one block; return the
    float64 sum of those of 2**32 and more. Few elements are that far apart: a branch skips
    the others."""
    huge = 0.0
    for j in range(m):
        dist = ulp_distance(ua[start + j], ub[start + j], sign_mask, mag_mask)
        if dist >= np.uint64(SMALL_DIST) and math.isfinite(xs[j]) and math.isfinite(ys[j]):
            if dist < EXACT_BINS:
                hist_exact[np.intp(dist)] += 1
            else:
                hist_log[int_log_bin(dist)] += 1
                if dist >= np.uint64(1 << 32):
                    huge += np.float64(dist)
    return huge


@njit(**SUB)
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
    state,
):
    """Offer the elements of one block to the k worst (special-value mismatches score inf);
    return the new floor. ``by_bits``: the block is of one format and finite on both sides
    throughout, so each score is the ULP distance of the bit patterns (``xs``, ``ys`` unread:
    the block need not be decoded)."""
    for j in range(m):
        # one loop, each helper inlined once (numba types and lowers an inlined call per call site)
        x = y = 0.0
        if not by_bits:
            x = xs[j]
            y = ys[j]
        if by_bits or (math.isfinite(x) and math.isfinite(y)):
            if same:
                score = np.float64(ulp_distance(ua[start + j], ub[start + j], sign_mask, mag_mask))
            else:
                score = ulp_error(abs(x - y), abs(y), emin, emax, inv_ulp, ulp_size)
        else:
            both_nan = x != x and y != y
            same_inf = math.isinf(x) and x == y
            score = -1.0 if both_nan or same_inf else np.inf
        if score > floor:
            floor = _offer_worst(score, first + j, worst_score, worst_index, state)
    return floor


@njit(**KERNEL_PY)
def finish_pass(chunk, mode, offset, fmt, state, hists, worst, scratch):
    """The rest of one chunk's pass, after :func:`fused_pass` (the same arguments, the histograms
    ``hists`` = ``(exact, log)`` and the ``worst`` = ``(scores, indices)`` slots): in block order,
    it decodes again the blocks that need any of the rarer work and does it. That work: the
    special values (counted, and taken into the reference script's trio), the maxima's first
    indices (ties keep the lower index), the ULP distances of :data:`SMALL_DIST` and more (kind
    "diff"), and the ``k`` worst elements (special-value mismatches score inf)."""
    ua, ub, fa, fb, table_a, table_b = chunk
    tiny, sign_mask, mag_mask, emin, inv_ulp, ulp_size, _ = fmt
    hist_exact, hist_log = hists
    worst_score, worst_index = worst
    values, _, _, rec = scratch
    s = state[0]
    n = ua.size
    use_table = (mode & USE_TABLE) != 0
    same = (mode & SAME_FORMAT) != 0
    track_worst = worst_score.size > 0
    worst_floor = 0.0
    if track_worst and s.worst_filled == worst_score.size:
        worst_floor = worst_score[worst_score.size - 1]
    emax = emin + inv_ulp.size - 1
    xs = values[0]
    ys = values[1]
    x_dot = x_xx = x_yy = s_ulp_huge = 0.0
    script_abs_bits = float_bits(s.script_max_abs)
    script_rel_bits = float_bits(s.script_max_rel)
    n_nan_abs = n_nan_rel = 0
    max_abs, max_rel, max_err = s.max_abs, s.max_rel, s.max_ulp_error
    max_dist = s.max_ulp_diff
    have_dist = s.max_ulp_index >= 0
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
        b_abs = bits_float(rec[REC_ABS, col]) if rec[REC_ABS, col] >= 0 else -1.0
        b_rel = bits_float(rec[REC_REL, col]) if rec[REC_REL, col] >= 0 else -1.0
        b_dist = np.uint64(rec[REC_SCORE, col])
        b_err = bits_float(rec[REC_SCORE, col]) if rec[REC_SCORE, col] >= 0 else -1.0
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
            decode_block(ua, ub, fa, fb, table_a, table_b, use_table, start, m, xs, ys)

        n_mismatch = 0
        if b_nf < m:
            n_mismatch, e_dot, e_xx, e_yy, e_abs, e_abs_nan, e_rel, e_rel_nan = _count_specials(
                xs, ys, m, state
            )
            x_dot += e_dot
            x_xx += e_xx
            x_yy += e_yy
            script_abs_bits = imax(script_abs_bits, float_bits(e_abs))
            script_rel_bits = imax(script_rel_bits, float_bits(e_rel))
            n_nan_abs += e_abs_nan
            n_nan_rel += e_rel_nan

        if b_abs > max_abs:
            max_abs = b_abs
            s.max_abs_index = first + _first_index(*(block + (what_abs, b_abs, tiny) + ulp))
        if b_rel > max_rel:
            max_rel = b_rel
            s.max_rel_index = first + _first_index(*(block + (what_rel, b_rel, tiny) + ulp))
        if same:
            if new_dist:
                max_dist = b_dist
                have_dist = True
                s.max_ulp_index = first + _first_index(*(block + (what_dist, np.float64(b_dist), tiny) + ulp))
            if far:
                s_ulp_huge += _count_large_distances(*(block + (sign_mask, mag_mask, hist_exact, hist_log)))
        elif b_err > max_err:
            max_err = b_err
            s.max_ulp_index = first + _first_index(*(block + (what_err, b_err, tiny) + ulp))

        if track_worst and (n_mismatch > 0 or b_score > worst_floor):
            worst_floor = _worst_block(
                *(block + (first, same, by_bits) + ulp + (worst_floor, worst_score, worst_index, state))
            )

    s.script_dot += x_dot
    s.script_sum_xx += x_xx
    s.script_sum_yy += x_yy
    s.script_max_abs = bits_float(script_abs_bits)
    s.script_max_rel = bits_float(script_rel_bits)
    s.script_max_abs_nan |= n_nan_abs > 0
    s.script_max_rel_nan |= n_nan_rel > 0
    s.sum_ulp_diff_huge += s_ulp_huge
    s.max_abs = max_abs
    s.max_rel = max_rel
    s.max_ulp_error = max_err
    s.max_ulp_diff = max_dist
