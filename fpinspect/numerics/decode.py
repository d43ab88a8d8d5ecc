"""Every storage format decoded into one canonical block form: float64 values and their bit
patterns as uint64 (:func:`decode`), so that one compiled kernel set serves all widths."""

from __future__ import annotations

from functools import cache

import numpy as np

from .dtypes import FloatFormat
from .intrinsics import bits_float32, where
from .jit import SUB, njit

#: How a chunk's bytes are decoded (:func:`decode`): float64, float32, float16 and bfloat16 by
#: arithmetic, 8-bit formats through a table of their 256 values.
F64, F32, HALF, BFLOAT, TABLE = 0, 1, 2, 3, 4
_CODES = {"float64": F64, "float32": F32, "float16": HALF, "bfloat16": BFLOAT}
_NO_TABLE = np.empty(0, dtype=np.float64)
_NO_TABLE.flags.writeable = False


def storage(fmt: FloatFormat) -> tuple[int, np.ndarray]:
    """``(code, table)`` that :func:`decode` reads a chunk of ``fmt`` with."""
    code = _CODES.get(fmt.name, TABLE)
    return code, _decode_table(fmt) if code == TABLE else _NO_TABLE


@cache
def _decode_table(fmt: FloatFormat) -> np.ndarray:
    """float64 value of every bit pattern of an 8-bit format (NaN patterns decode to NaN)."""
    with np.errstate(invalid="ignore"):  # NaN patterns of fp8 warn on the cast
        table = np.arange(256, dtype=np.uint8).view(fmt.dtype).astype(np.float64)
    table.flags.writeable = False
    return table


_HALF_REBIAS = np.int32((127 - 15) << 23)
_F32_EXPONENT = np.int32(0x7F800000)
_TWO_M24 = np.float32(2.0**-24)


@njit(inline="always", error_model="numpy")
def _half_value(h):
    """The float16 whose bit pattern is ``h``, as float64, exactly (subnormals, inf and NaN
    included), in 32-bit integer arithmetic: a vector loop of it decodes faster than one through
    a 512 KiB table, whose loads are one per element, not a vector's."""
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
def width(code):
    """Bytes per element of storage ``code``."""
    return 8 if code == F64 else 4 if code == F32 else 2 if code != TABLE else 1


@njit(inline="always", error_model="numpy")
def _copy(floats, patterns, values, bits):
    """``floats`` as float64 into ``values``, their bit ``patterns`` into ``bits``."""
    for j in range(floats.size):
        values[j] = floats[j]
        bits[j] = patterns[j]


@njit(**SUB)
def decode(raw, code, table, lo, m, values, bits):
    """Elements ``lo .. lo + m - 1`` of the chunk whose bytes are ``raw`` (stored as ``code``
    says; ``table``: the 256 values of an 8-bit format) into ``values[:m]`` as float64 and
    ``bits[:m]`` as their bit patterns: the canonical block every kernel reads. Exact."""
    if code == F64:
        _copy(raw.view(np.float64)[lo : lo + m], raw.view(np.uint64)[lo : lo + m], values, bits)
    elif code == F32:
        _copy(raw.view(np.float32)[lo : lo + m], raw.view(np.uint32)[lo : lo + m], values, bits)
    elif code == TABLE:
        u8 = raw[lo : lo + m]
        for j in range(m):
            values[j] = table[u8[j]]
            bits[j] = u8[j]
    else:
        u16 = raw.view(np.uint16)[lo : lo + m]
        if code == HALF:
            for j in range(m):
                values[j] = _half_value(u16[j])
                bits[j] = u16[j]
        else:
            for j in range(m):
                values[j] = _bfloat_value(u16[j])
                bits[j] = u16[j]
