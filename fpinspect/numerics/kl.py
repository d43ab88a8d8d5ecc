"""msaccucmp's KL divergence of a pair: a second compiled pass, once both sides' ranges are known.

Over the elements finite on both sides, ``p = max((x - min x) / (max x - min x), eps32)`` (1 where
the range is 0: a constant side is uniform), ``q`` likewise for ``y``, each normalised to sum 1:
``KL = sum p log(p / q)``.
"""

from __future__ import annotations

import math

import numpy as np

from .chunks import CHUNK, ChunkReader, chunk_ranges, on_threads
from .decode import decode, width
from .intrinsics import bits_float, float_bits, imax, imin, where
from .jit import KERNEL, SUB, njit
from .kernels import BLOCK, EPS32, EPS64, scratch

_bits = float_bits
_from_bits = bits_float


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


#: :func:`_kl_sums` reassociates its sums (a vector loop) and contracts a * b + c to one fused
#: multiply-add where the machine has one (the log's polynomial: a fifth of the loop's time).
_KL_FASTMATH = {"reassoc", "contract"}


@njit(**dict(SUB, fastmath=_KL_FASTMATH))
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


@njit(**KERNEL)
def kl_pass(chunk, min_x, inv_x, floor_x, min_y, inv_y, floor_y, values, bits, out):
    """msaccucmp's KL sums over the elements finite on both sides: ``out += (sum p, sum q,
    sum p * log(p / q), sum (p - q))`` with ``p = max(floor_x, (x - min_x) * inv_x)``: the
    caller's ``(min_x, inv_x, floor_x)`` make p msaccucmp's ``max((x - min x) / (max x - min x),
    eps32)`` (1 on a constant side) times a factor that q shares (KL does not change); ``q``
    likewise for ``y``. ``chunk`` is the fused pass's; block by block, decoded into the scratch
    ``values`` and ``bits`` (:func:`~fpinspect.numerics.kernels.scratch`), then summed."""
    raw_a, raw_b, code, table = chunk
    n = raw_a.size // width(code)
    for lo in range(0, n, BLOCK):
        m = imin(BLOCK, n - lo)
        decode(raw_a, code, table, lo, m, values[0], bits[0])
        decode(raw_b, code, table, lo, m, values[1], bits[1])
        _kl_sums(values[0], values[1], m, min_x, inv_x, floor_x, min_y, inv_y, floor_y, out)


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
    """``(min, inv, floor)`` of one side for :func:`kl_pass`, whose
    ``max(floor, (v - min) * inv)`` is ``scale`` times msaccucmp's ``max((v - lo) / (hi - lo),
    eps32)`` (1 on a constant side): KL is the same for p and q both scaled, and multiplying by
    the inverse spares the vector loop a division per element and side."""
    r = hi - lo
    if not r > 0:
        return lo, 0.0, scale
    if r < _TINY64:
        return lo, scale / (r * _TWO_1022) * _TWO_1022, EPS32 * scale
    return lo, scale / r, EPS32 * scale


def kl_of_pass(s, views, ra: ChunkReader, rr: ChunkReader, jobs: int) -> float | None:
    """KL over ``views`` (the pass's bytes of a one-chunk pair's chunk), else over the data read again."""
    if s.finite == 0:
        return None
    scale = _kl_scale(s.max_x - s.min_x, s.max_y - s.min_y)
    side_x, side_y = _kl_side(s.min_x, s.max_x, scale), _kl_side(s.min_y, s.max_y, scale)
    plan = s.plan

    def sums_of(pairs) -> np.ndarray:
        sums = np.zeros(4, dtype=np.float64)
        values, bits, _, _ = scratch()
        for raw_a, raw_b in pairs:
            kl_pass((raw_a, raw_b, plan.code, plan.table), *side_x, *side_y, values, bits, sums)
        return sums

    if views is not None:  # a one-chunk pair: one call, no reader
        return _kl_from_sums(*sums_of(views).tolist())  # Python floats: numpy scalars are slower

    def reread(part) -> np.ndarray:
        return sums_of((raw_a, raw_b) for _, _, raw_a, raw_b in plan.chunks(ra, rr, part, CHUNK))

    first, *others = on_threads(reread, chunk_ranges(ra.size), jobs)
    return _kl_from_sums(*sum(others, first).tolist())


def _kl_from_sums(sum_p: float, sum_q: float, cross: float, diff: float) -> float:
    """KL from the KL pass's sums, ``cross / sum_p - log1p(sum (p - q) / sum_q)`` with ``cross =
    sum p log(p / q)`` (p and q normalised to sum 1); ``|KL| < eps64`` is reported as 0."""
    # log(sum_p / sum_q) as log1p of the summed differences: sum_p and sum_q agree to ~1e-9 in
    # fused-against-eager pairs, and taking each one's log lost their difference's last digits
    kl = cross / sum_p - math.log1p(diff / sum_q)
    return 0.0 if abs(kl) < EPS64 else kl
