"""Bit-level equality and ULP distances.

Two distinct measures (see ``shared/reference/ulp_spec.md``):

* :func:`ulp_diff` — an integer: how many steps apart two values of the *same* format are.
  Use it to compare two devices or two kernels.
* :func:`ulp_error` — a real number: ``|x - ref| / ulp_T(ref)`` against a higher-precision
  reference, with Goldberg's ulp at the reference's exponent. A correctly rounded result
  scores ``<= 0.5``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .chunks import iter_chunks
from .dtypes import FloatFormat, common_format, float_format

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


def _key_dtype(fmt: FloatFormat) -> np.dtype:
    return np.dtype(np.int32) if fmt.bits <= 16 else np.dtype(np.int64)


def _keys(u: np.ndarray, fmt: FloatFormat):
    """Ordered-integer key and magnitude bits of raw patterns ``u``.

    ``key = -(u & ~S)`` when the sign bit ``S`` is set, else ``u``: monotone in value and
    +0 / -0 both map to 0 (:func:`_keys_of`). An 8- or 16-bit format's are looked up in its
    table of every pattern's: two numpy calls instead of five, which on the few elements of a
    comparison's worst ones is what they cost.
    """
    if fmt.bits <= 16:
        keys, mags = _key_tables(fmt)
        return keys[u], mags[u]
    return _keys_of(u, fmt)


def _keys_of(u: np.ndarray, fmt: FloatFormat):
    """:func:`_keys` computed: the sign bit is set where the pattern is not its magnitude."""
    kd = _key_dtype(fmt)
    ui = u.astype(kd) if fmt.bits < kd.itemsize * 8 else u.view(kd)
    mag = ui & (fmt.sign_mask - 1)
    return np.where(ui == mag, mag, -mag), mag


@cache
def _key_tables(fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_keys_of` every bit pattern of an 8- or 16-bit format (2 x 256 KiB for 16 bits)."""
    keys, mags = _keys_of(np.arange(1 << fmt.bits, dtype=np.int64).astype(fmt.uint), fmt)
    keys.flags.writeable = mags.flags.writeable = False
    return keys, mags


def _as_format(a: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    return a if a.dtype == fmt.dtype else a.astype(fmt.dtype)


def _ulp_diff_chunk(a: np.ndarray, b: np.ndarray, fmt: FloatFormat, status: bool):
    # both sides' keys and magnitudes in one lookup (or one computation) and their NaN patterns
    # in one maximum: on the few elements of a comparison's worst ones, numpy's cost per call
    # is the time
    n = a.size
    k, m = _keys(np.concatenate((a.view(fmt.uint), b.view(fmt.uint))), fmt)
    ka, kb, ma, mb = k[:n], k[n:], m[:n], m[n:]
    if fmt.bits <= 32:
        # Keys are int32 (16/8-bit formats) or int64 (float32): differences cannot overflow.
        dist = np.abs(ka - kb).view(_dist_dtype(fmt))
    else:
        # Key differences of float64 overflow int64: compare in a biased unsigned space.
        bias = np.uint64(1 << 63)
        ua = ka.view(np.uint64) ^ bias
        ub = kb.view(np.uint64) ^ bias
        dist = np.where(ua >= ub, ua - ub, ub - ua)
    # NaN patterns are the magnitudes above the infinity's: looked for element by element only
    # where there are any (or the status is asked for)
    nan = m.max(initial=0) > fmt.max_key
    if nan or status:
        nan_a = ma > fmt.max_key
        nan_b = mb > fmt.max_key
    if nan:
        dist[nan_a & nan_b] = 0
        dist[nan_a ^ nan_b] = np.iinfo(dist.dtype).max
    if not status:
        return dist, None
    st = np.zeros(dist.shape, dtype=np.uint8)
    if fmt.has_inf:
        inf_a = ma == fmt.max_key
        inf_b = mb == fmt.max_key
        st[(inf_a | inf_b) & ~(nan_a | nan_b)] = INF_MISMATCH
        st[inf_a & inf_b & (ka == kb)] = INF_MATCH
    st[nan_a & nan_b] = BOTH_NAN
    st[nan_a ^ nan_b] = NAN_MISMATCH
    return dist, st


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
    return _as_format(a, fmt), _as_format(b, fmt), fmt


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
    if a.size <= _CHUNK:
        # one chunk is the whole arrays: computed as they are, without the chunk loop's readers
        # and copies (most of the time of the few elements a comparison's worst ones are)
        dist, st = _ulp_diff_chunk(a.reshape(-1), b.reshape(-1), fmt, return_status)
        dist = dist.reshape(a.shape)
        return (dist, st.reshape(a.shape)) if return_status else dist
    dist = np.empty(a.shape, dtype=_dist_dtype(fmt))
    st = np.empty(a.shape, dtype=np.uint8) if return_status else None
    flat_d = dist.reshape(-1)
    flat_s = st.reshape(-1) if st is not None else None
    for lo, (ca, cb) in iter_chunks(a, b, chunk=_CHUNK):
        d, s = _ulp_diff_chunk(ca, cb, fmt, return_status)
        flat_d[lo : lo + d.size] = d
        if flat_s is not None:
            flat_s[lo : lo + d.size] = s
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
