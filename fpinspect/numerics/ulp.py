"""Bit-level equality and ULP distances.

Two distinct measures (see ``shared/reference/ulp_spec.md``):

* :func:`ulp_diff` — an integer: how many steps apart two values of the *same* format are.
  Use it to compare two devices or two kernels.
* :func:`ulp_error` — a real number: ``|x - ref| / ulp_T(ref)`` against a higher-precision
  reference, with Goldberg's ulp at the reference's exponent. A correctly rounded result
  scores ``<= 0.5``.
"""

from __future__ import annotations

import numpy as np

from .chunks import iter_chunks, readonly
from .dtypes import FloatFormat, common_format, float_format
from .jit import njit

# Element status codes shared by ulp_diff, ulp_error and error_stats.
FINITE = 0  #: both values are numbers (finite), or equal after the status rules below
INF_MATCH = 1  #: the same infinity on both sides: distance 0
INF_MISMATCH = 2  #: exactly one side is infinite, or opposite infinities: key distance kept
BOTH_NAN = 3  #: NaN on both sides (sign and payload ignored): distance 0
NAN_MISMATCH = 4  #: NaN on exactly one side: distance is :func:`ulp_nan`

STATUS_NAMES = {
    FINITE: "FINITE",
    INF_MATCH: "INF_MATCH",
    INF_MISMATCH: "INF_MISMATCH",
    BOTH_NAN: "BOTH_NAN",
    NAN_MISMATCH: "NAN_MISMATCH",
}


#: Elements per chunk of :func:`ulp_diff` and :func:`ulp_error` (their temporaries are a few per element).
_CHUNK = 1 << 18


def _dist_dtype(fmt: FloatFormat) -> np.dtype:
    """Narrowest unsigned type holding every distance of ``fmt`` (and the NaN sentinel)."""
    return np.dtype(np.uint32) if fmt.bits <= 16 else np.dtype(np.uint64)


def ulp_nan(dtype) -> int:
    """The distance :func:`ulp_diff` reports for NaN against a number in ``dtype``.

    It is the largest value of the result's unsigned type, larger than any real distance,
    so a NaN mismatch can never pass a ``max_ulp`` test by accident.
    """
    return (1 << (8 * _dist_dtype(float_format(dtype)).itemsize)) - 1


@njit(inline="always", error_model="numpy")
def ulp_distance(a_raw, b_raw, sign_mask, mag_mask):
    """Steps between two bit patterns of one format, zeros counted once (uint64)."""
    a = np.uint64(a_raw)
    b = np.uint64(b_raw)
    ma = a & mag_mask
    mb = b & mag_mask
    apart = ma - mb if ma >= mb else mb - ma
    return apart if ((a ^ b) & sign_mask) == np.uint64(0) else ma + mb


@njit(nogil=True, cache=True, error_model="numpy")
def _ulp_diff_kernel(ua, ub, mag_mask, max_key, has_inf, nan_dist, dist, st):
    """:func:`ulp_diff` of the bit patterns ``ua``, ``ub`` into ``dist`` and, where ``st`` is
    not empty, the status codes into ``st``: one pass, no temporaries."""
    status = st.size > 0
    sign_mask = mag_mask + np.uint64(1)
    for i in range(ua.size):
        a = np.uint64(ua[i])
        b = np.uint64(ub[i])
        ma = a & mag_mask
        mb = b & mag_mask
        d = ulp_distance(a, b, sign_mask, mag_mask)
        nan_a = ma > max_key
        nan_b = mb > max_key
        if nan_a or nan_b:
            d = np.uint64(0) if nan_a and nan_b else nan_dist
        dist[i] = d
        if status:
            code = FINITE
            if nan_a and nan_b:
                code = BOTH_NAN
            elif nan_a or nan_b:
                code = NAN_MISMATCH
            elif has_inf and (ma == max_key or mb == max_key):
                code = INF_MATCH if a == b else INF_MISMATCH
            st[i] = code


def _prepare_pair(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise ValueError(f"shapes {a.shape} and {b.shape} do not match") from None
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    fmt = common_format(a.dtype, b.dtype)
    return (
        (a if a.dtype == fmt.dtype else a.astype(fmt.dtype)),
        (b if b.dtype == fmt.dtype else b.astype(fmt.dtype)),
        fmt,
    )


def ulp_diff(a, b, *, return_status: bool = False):
    """Element-wise ULP distance between ``a`` and ``b`` in their common float format.

    The distance is the number of representable values you step through to go from one to
    the other, counting zero once: ``ulp_diff(+0, -0) == 0``, ``ulp_diff(0, min_subnormal)
    == 1``, ``ulp_diff(max, inf) == 1``, and ``ulp_diff(-x, x) == 2 * ulp_diff(0, x)``
    (signs are handled across zero; numpy's ``nulp_diff`` wraps around there).

    Special values:

    * NaN on both sides (any sign or payload) → 0, status :data:`BOTH_NAN`.
    * NaN on one side → :func:`ulp_nan` of the format (the largest value of the result
      type), status :data:`NAN_MISMATCH`: a NaN never looks like a small distance.
    * One side infinite, or opposite infinities → the step distance, status
      :data:`INF_MISMATCH`; the same infinity → 0, :data:`INF_MATCH`.

    Inputs of different dtypes are first cast exactly to their common format. The result
    is ``uint32`` for 8/16-bit formats and ``uint64`` for 32/64-bit ones. With
    ``return_status=True`` a ``uint8`` status array (codes in :data:`STATUS_NAMES`) is
    returned as well.
    """
    a, b, fmt = _prepare_pair(a, b)
    dist = np.empty(a.shape, dtype=_dist_dtype(fmt))
    st = np.empty(a.shape if return_status else 0, dtype=np.uint8)
    mag_mask = np.uint64(fmt.sign_mask - 1)
    nan_dist = np.uint64(np.iinfo(dist.dtype).max)
    ua, ub = (readonly(np.ascontiguousarray(x).reshape(-1)).view(fmt.uint) for x in (a, b))
    _ulp_diff_kernel(
        ua, ub, mag_mask, np.uint64(fmt.max_key), fmt.has_inf, nan_dist, dist.reshape(-1), st.reshape(-1)
    )
    return (dist, st) if return_status else dist


def ulp_status(a, b) -> np.ndarray:
    """The element status codes of :func:`ulp_diff` alone (``uint8``)."""
    return ulp_diff(a, b, return_status=True)[1]


def ulp_of(ref, dtype) -> np.ndarray:
    """Goldberg's ulp in format ``dtype`` at the exponent of the real value ``ref``.

    For ``|ref|`` in ``[2**e, 2**(e+1))``: ``2**(max(e, emin) - p + 1)``; ``ulp(0)`` is the
    smallest subnormal; beyond the largest finite value the exponent is clamped (Kahan).
    The exponent comes from ``frexp`` (``floor(log2)`` is wrong just below powers of two).
    """
    fmt = float_format(dtype)
    r = np.abs(np.asarray(ref, dtype=np.float64))
    e = np.frexp(r)[1].astype(np.int64) - 1
    e = np.clip(np.where(r == 0, fmt.emin, e), fmt.emin, fmt.emax)
    return np.ldexp(1.0, (e - fmt.p + 1).astype(np.int32))


def _ulp_error_chunk(x: np.ndarray, ref64: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(x64 - ref64) / ulp_of(ref64, fmt)
    nan_x, nan_r = np.isnan(x64), np.isnan(ref64)
    if nan_x.any() or nan_r.any():
        err[nan_x & nan_r] = 0.0
        err[nan_x ^ nan_r] = np.nan
    inf_same = np.isinf(x64) & (x64 == ref64)
    if inf_same.any():
        err[inf_same] = 0.0
    return err


def ulp_error(x, ref, *, dtype=None) -> np.ndarray:
    """Real-valued error of ``x`` in units of ``ulp_T(ref)``, ``T`` = ``x``'s format.

    ``ref`` is a reference of higher precision (usually float64 from
    :func:`fp64_reference`). ``|x - ref| / ulp_T(ref)`` with Goldberg's ulp at ``ref``'s
    exponent (:func:`ulp_of`), so a correctly rounded ``x`` scores ``<= 0.5``.

    Special values: both NaN → 0; NaN on one side → NaN; the same infinity → 0; an
    infinity against a finite value → inf. Pass ``dtype`` to measure in another format
    than ``x``'s (for example when ``x`` was already upcast).
    """
    x = np.asarray(x)
    fmt = float_format(dtype if dtype is not None else x.dtype)
    ref = np.asarray(ref)
    if x.shape != ref.shape:
        shape = np.broadcast_shapes(x.shape, ref.shape)
        x, ref = np.broadcast_to(x, shape), np.broadcast_to(ref, shape)
    if x.size <= _CHUNK:  # one chunk: as in ulp_diff
        return _ulp_error_chunk(x.reshape(-1), ref.reshape(-1).astype(np.float64), fmt).reshape(x.shape)
    out = np.empty(x.shape, dtype=np.float64)
    flat = out.reshape(-1)
    for lo, (cx, cr) in iter_chunks(x, ref, chunk=_CHUNK):
        flat[lo : lo + cx.size] = _ulp_error_chunk(cx, cr.astype(np.float64), fmt)
    return out


def _uint_view(a: np.ndarray) -> np.ndarray:
    size = a.dtype.itemsize
    if size in (1, 2, 4, 8):
        return a.view(f"u{size}")
    return a.view(np.uint8)


def bit_equal(a, b) -> bool:
    """True only if ``a`` and ``b`` have the same shape, the same dtype and identical bits.

    So ``+0`` vs ``-0`` is False, and two NaNs are equal only with the same bit pattern.
    Works chunk by chunk, so memory-mapped inputs larger than RAM are fine.
    """
    a = np.asanyarray(a)
    b = np.asanyarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    for _, (ca, cb) in iter_chunks(a, b):
        if not np.array_equal(_uint_view(np.ascontiguousarray(ca)), _uint_view(np.ascontiguousarray(cb))):
            return False
    return True


def bit_mismatch(a, b) -> np.ndarray:
    """Element-wise ``True`` where the bit patterns of ``a`` and ``b`` differ.

    ``a`` and ``b`` must have the same shape and dtype.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(
            f"bit_mismatch needs equal shapes and dtypes, got {a.shape}/{a.dtype} and {b.shape}/{b.dtype}"
        )
    ua = _uint_view(np.ascontiguousarray(a))
    ub = _uint_view(np.ascontiguousarray(b))
    neq = ua != ub
    return neq.reshape(a.shape) if ua.shape == a.shape else neq.reshape(*a.shape, -1).any(axis=-1)
