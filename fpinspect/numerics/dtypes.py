"""The one registry of floating-point formats fpinspect understands.

Every other module asks this registry for bit widths, unsigned views and exponent limits
instead of testing ``dtype == ...`` itself. Adding a format means adding one entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class FloatFormat:
    """Facts about one binary floating-point format.

    ``p`` is the precision in bits including the implicit bit; ``emin`` the exponent of the
    smallest normal number; ``emax`` the exponent of the largest finite number. Each fact is
    computed once (every pair's pass asks for several). A format pickles as its name: it is
    the registry's entry again when unpickled.
    """

    name: str
    dtype: np.dtype
    bits: int
    has_inf: bool

    @cached_property
    def uint(self) -> np.dtype:
        return np.dtype(f"uint{self.bits}")

    @cached_property
    def finfo(self):
        return ml_dtypes.finfo(self.dtype)

    @cached_property
    def p(self) -> int:
        return int(self.finfo.nmant) + 1

    @cached_property
    def emin(self) -> int:
        return int(np.frexp(np.float64(self.finfo.smallest_normal))[1]) - 1

    @cached_property
    def emax(self) -> int:
        return int(np.frexp(np.float64(self.finfo.max))[1]) - 1

    @cached_property
    def max(self) -> float:
        return float(self.finfo.max)

    @cached_property
    def tiny(self) -> float:
        """Smallest positive normal number."""
        return float(self.finfo.smallest_normal)

    @cached_property
    def eps(self) -> float:
        return float(self.finfo.eps)

    @cached_property
    def sign_mask(self) -> int:
        return 1 << (self.bits - 1)

    @cached_property
    def max_key(self) -> int:
        """Ordered-integer key of the largest non-NaN value (inf where the format has it)."""
        top = np.array(np.inf if self.has_inf else self.max, dtype=np.float64).astype(self.dtype)
        return int(top.view(self.uint))

    def __reduce__(self):
        return float_format, (self.name,)


def _fmt(name: str, dtype, has_inf: bool = True) -> FloatFormat:
    dt = np.dtype(dtype)
    return FloatFormat(name=name, dtype=dt, bits=dt.itemsize * 8, has_inf=has_inf)


#: Supported formats, narrowest first. Names follow numpy / ml_dtypes spelling.
FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        _fmt("float8_e4m3fn", ml_dtypes.float8_e4m3fn, has_inf=False),
        _fmt("float8_e5m2", ml_dtypes.float8_e5m2),
        _fmt("bfloat16", ml_dtypes.bfloat16),
        _fmt("float16", np.float16),
        _fmt("float32", np.float32),
        _fmt("float64", np.float64),
    )
}

_BY_DTYPE: dict[np.dtype, FloatFormat] = {f.dtype: f for f in FORMATS.values()}


def native(dtype) -> np.dtype:
    """``dtype`` in the machine's byte order.

    Formats are looked up by kind and size, never by byte order: a big-endian ``>f2`` file
    holds float16 values like any other, once its bytes are swapped (:func:`as_native`).
    """
    dt = np.dtype(dtype)
    return dt if dt.isnative else dt.newbyteorder("=")


def as_native(x: np.ndarray) -> np.ndarray:
    """``x`` itself when its bytes are in machine order, else a byte-swapped copy."""
    return x if x.dtype.isnative else x.astype(native(x.dtype))


@cache
def dtype_name(dtype: np.dtype) -> str:
    """``str(dtype)``, once per dtype (numpy builds the name anew each time, ~7 us)."""
    return str(dtype)


def is_supported(dtype) -> bool:
    try:
        return native(dtype) in _BY_DTYPE
    except TypeError:
        return False


def float_format(dtype) -> FloatFormat:
    """Return the registry entry for ``dtype`` (a dtype, an array, or a name)."""
    if isinstance(dtype, FloatFormat):
        return dtype
    if isinstance(dtype, str) and dtype in FORMATS:
        return FORMATS[dtype]
    dt = dtype if isinstance(dtype, (type, np.dtype)) else getattr(dtype, "dtype", dtype)
    try:
        dt = native(dt)
    except TypeError as exc:
        raise TypeError(f"not a floating-point dtype: {dtype!r}") from exc
    try:
        return _BY_DTYPE[dt]
    except KeyError:
        supported = ", ".join(FORMATS)
        raise TypeError(f"unsupported dtype {dt}; supported: {supported}") from None


def common_format(a_dtype, b_dtype) -> FloatFormat:
    """The narrowest supported format that holds both dtypes exactly.

    Integer or boolean inputs are compared as float64 (as the reference script does after
    ``np.promote_types``); mixing bfloat16 with float16 gives float32.
    """
    a, b = native(a_dtype), native(b_dtype)
    if a == b and a in _BY_DTYPE:
        return _BY_DTYPE[a]
    fa, fb = _BY_DTYPE.get(a), _BY_DTYPE.get(b)
    if fa is None or fb is None:
        return FORMATS["float64"]
    # Formats that hold each other: wider exponent range and precision.
    for cand in FORMATS.values():
        if cand.bits >= max(fa.bits, fb.bits) and all(
            cand.p >= f.p and cand.emax >= f.emax and cand.emin <= f.emin for f in (fa, fb)
        ):
            return cand
    return FORMATS["float64"]
