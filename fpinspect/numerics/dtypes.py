"""The one registry of floating-point formats fpinspect understands.

Every other module asks this registry for bit widths, unsigned views and exponent limits
instead of testing ``dtype == ...`` itself. Adding a format means adding one entry.

numpy's own formats are there from the start; bfloat16 and the float8 formats come from
ml_dtypes, which is imported only once one of them is named (:func:`dtype_of`, a lookup in
:data:`FORMATS`) or met (an array of one exists only where ml_dtypes was imported): importing
it costs a noticeable part of a second with some ml_dtypes versions, paid by every ``diff``,
``compare`` and ``open`` that never sees those formats otherwise.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property

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
        if self.dtype.kind == "f":  # numpy's own: its finfo, without importing ml_dtypes
            return np.finfo(self.dtype)
        import ml_dtypes

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


#: numpy's own formats, in :data:`FORMATS` from the start.
_NUMPY_FORMATS = (_fmt("float16", np.float16), _fmt("float32", np.float32), _fmt("float64", np.float64))


def _all_formats() -> tuple[FloatFormat, ...]:
    """Every supported format, narrowest first (imports ml_dtypes)."""
    import ml_dtypes

    return (
        _fmt("float8_e4m3fn", ml_dtypes.float8_e4m3fn, has_inf=False),
        _fmt("float8_e5m2", ml_dtypes.float8_e5m2),
        _fmt("bfloat16", ml_dtypes.bfloat16),
        *_NUMPY_FORMATS,
    )


class _Registry(Mapping):
    """:data:`FORMATS`: name -> :class:`FloatFormat`, narrowest first. Looking up one of
    numpy's formats, by name or dtype, imports nothing; naming another, or listing them all,
    completes the registry with ml_dtypes' formats (:func:`_all_formats`)."""

    def __init__(self):
        self._by_name = {f.name: f for f in _NUMPY_FORMATS}
        self._by_dtype = {f.dtype: f for f in _NUMPY_FORMATS}
        self._complete = False
        self._lock = threading.Lock()

    def complete(self) -> None:
        """Add ml_dtypes' formats (once)."""
        if self._complete:
            return
        with self._lock:
            if not self._complete:
                formats = _all_formats()
                self._by_dtype = {f.dtype: f for f in formats}
                self._by_name = {f.name: f for f in formats}
                self._complete = True

    def __getitem__(self, name: str) -> FloatFormat:
        fmt = self._by_name.get(name)
        if fmt is None and not self._complete:
            self.complete()
            fmt = self._by_name.get(name)
        if fmt is None:
            raise KeyError(name)
        return fmt

    def __iter__(self) -> Iterator[str]:
        self.complete()
        return iter(self._by_name)

    def __len__(self) -> int:
        self.complete()
        return len(self._by_name)

    def known(self) -> Iterator[FloatFormat]:
        """The formats registered so far, narrowest first, completing nothing: every format
        of a dtype that exists (:meth:`of_dtype`)."""
        return iter(self._by_name.values())

    def of_dtype(self, dtype: np.dtype) -> FloatFormat | None:
        """The format of native ``dtype``, ``None`` if unsupported. A dtype of ml_dtypes' exists
        only once ml_dtypes is imported: the registry completes only then."""
        fmt = self._by_dtype.get(dtype)
        if fmt is None and not self._complete and "ml_dtypes" in sys.modules:
            self.complete()
            fmt = self._by_dtype.get(dtype)
        return fmt


#: Supported formats, narrowest first. Names follow numpy / ml_dtypes spelling.
FORMATS = _Registry()


def dtype_of(spec) -> np.dtype:
    """``np.dtype(spec)``, where ``spec`` may also be the name of one of ml_dtypes' types
    (``"bfloat16"``, ``"float8_e4m3fn"``, ``"float8_e8m0fnu"``, ``"int4"``, ...), which numpy
    knows only once ml_dtypes is imported: it is imported for such a name."""
    try:
        return np.dtype(spec)
    except TypeError:
        if not isinstance(spec, str) or "ml_dtypes" in sys.modules:
            raise
    import ml_dtypes  # noqa: F401  (gives numpy its types' names)

    return np.dtype(spec)


def native(dtype) -> np.dtype:
    """``dtype`` in the machine's byte order.

    Formats are looked up by kind and size, never by byte order: a big-endian ``>f2`` file
    holds float16 values like any other, once its bytes are swapped (:func:`as_native`).
    """
    dt = dtype_of(dtype)
    return dt if dt.isnative else dt.newbyteorder("=")


def as_native(x: np.ndarray) -> np.ndarray:
    """``x`` itself when its bytes are in machine order, else a byte-swapped copy."""
    return x if x.dtype.isnative else x.astype(native(x.dtype))


@cache
def dtype_name(dtype: np.dtype) -> str:
    """``str(dtype)``, once per dtype (numpy builds the name anew each time)."""
    return str(dtype)


def is_supported(dtype) -> bool:
    try:
        return FORMATS.of_dtype(native(dtype)) is not None
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
    fmt = FORMATS.of_dtype(dt)
    if fmt is None:
        supported = ", ".join(FORMATS)
        raise TypeError(f"unsupported dtype {dt}; supported: {supported}")
    return fmt


def common_format(a_dtype, b_dtype) -> FloatFormat:
    """The narrowest supported format that holds both dtypes exactly.

    Integer or boolean inputs are compared as float64 (as the reference script does after
    ``np.promote_types``); mixing bfloat16 with float16 gives float32.
    """
    a, b = native(a_dtype), native(b_dtype)
    fa, fb = FORMATS.of_dtype(a), FORMATS.of_dtype(b)
    if a == b and fa is not None:
        return fa
    if fa is None or fb is None:
        return FORMATS["float64"]
    # Formats that hold each other: wider exponent range and precision (ml_dtypes' formats
    # are registered where either side is one; none of them holds a numpy format)
    for cand in FORMATS.known():
        if cand.bits >= max(fa.bits, fb.bits) and all(
            cand.p >= f.p and cand.emax >= f.emax and cand.emin <= f.emin for f in (fa, fb)
        ):
            return cand
    return FORMATS["float64"]
