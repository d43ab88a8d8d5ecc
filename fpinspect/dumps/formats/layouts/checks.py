"""Shape checks and padding shared by the layout converters.

Each check raises :class:`FormatConversionError` with the problem only; the registry adds
the layouts and shapes to the message.
"""

from __future__ import annotations

import numpy as np

from .registry import FormatConversionError


def ceil_div(size: int, block: int) -> int:
    """Number of blocks of ``block`` needed to hold ``size`` elements: ``ceil(size / block)``.

    A block size below 1 (a zero-length C0 or cube axis in a corrupt dump) is a
    FormatConversionError, not a division by zero.
    """
    if block < 1:
        raise FormatConversionError(
            f"the block size is {block}; a storage layout's blocks hold at least 1 element"
        )
    return -(-size // block)


def dims(shape: tuple[int, ...], rank: int, what: str) -> tuple[int, ...]:
    """``shape`` if it has ``rank`` dimensions, else FormatConversionError naming ``what``."""
    if len(shape) != rank:
        raise FormatConversionError(f"the {what} must have {rank} dimensions, not {len(shape)}")
    return tuple(shape)


def same(name: str, origin: int, stored: int) -> None:
    """An unblocked dimension: the origin size must equal the stored size."""
    if origin != stored:
        raise FormatConversionError(f"origin {name}={origin} differs from the dumped {name}={stored}")


def blocked(name: str, origin: int, blocks: int, block: int) -> None:
    """A blocked dimension: ``origin`` elements must fill exactly ``blocks`` blocks of ``block``.

    That is ``ceil(origin / block) == blocks``: the last block may be partly padding, no
    block may be all padding, and the origin size may not exceed ``blocks * block``.
    """
    if block < 1:
        raise FormatConversionError(f"the dumped {name} block size is {block}; it must be at least 1")
    if origin > blocks * block:
        raise FormatConversionError(f"origin {name}={origin} is larger than the dumped {blocks} x {block}")
    if ceil_div(origin, block) != blocks:
        raise FormatConversionError(
            f"origin {name}={origin} needs {ceil_div(origin, block)} blocks of "
            f"{block}, the dumped shape has {blocks}"
        )


def zero_pad(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``array`` in the top corner of a zero array of ``shape`` (each dim >= the array's)."""
    out = np.zeros(shape, dtype=array.dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out
