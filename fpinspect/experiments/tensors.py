"""Torch-side helpers shared by the tasks: dtypes by name, seeded inputs, exact host
copies, output hashes, and bit-exact tensor files.

Imports torch, so only the child process imports this module.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from fpinspect.numerics import float_format

_INT_OF_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of a format name from the numerics registry (``"float16"``, …)."""
    fmt = float_format(name)
    dtype = getattr(torch, fmt.name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"torch has no dtype {fmt.name}")
    return dtype


def uniform(shape: Sequence[int], low: float, high: float, dtype: str, seed: int) -> torch.Tensor:
    """``U(low, high)`` on the CPU: drawn in float32 from a generator seeded with ``seed``,
    then rounded to ``dtype``. Drawn on the CPU so every device gets the same bits."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(tuple(shape), generator=g, dtype=torch.float32) * (high - low) + low
    return x.to(torch_dtype(dtype))


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """An exact host copy in the same float format (bfloat16 and float8 via ml_dtypes)."""
    t = t.detach().cpu().contiguous()
    fmt = float_format(str(t.dtype).removeprefix("torch."))
    return t.view(_INT_OF_WIDTH[t.element_size()]).numpy().view(fmt.dtype)


def md5(a: np.ndarray) -> str:
    """MD5 of the array's bytes in C order: equal exactly when the bits are equal."""
    return hashlib.md5(np.ascontiguousarray(a).tobytes()).hexdigest()


def save_bits(path: Path, a: np.ndarray) -> None:
    """Write ``a``'s bit patterns as an unsigned-integer ``.npy`` (exact for every format,
    including those numpy cannot name)."""
    np.save(path, a.view(float_format(a.dtype).uint))


def load_bits(path: Path, dtype: str) -> np.ndarray:
    """Read a file written by :func:`save_bits` back as format ``dtype``."""
    return np.load(path, allow_pickle=False).view(float_format(dtype).dtype)


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """A CPU tensor with the same bits as ``a``."""
    fmt = float_format(a.dtype)
    ints = np.ascontiguousarray(a).view(f"i{a.dtype.itemsize}") if a.dtype.itemsize > 1 else a.view(np.uint8)
    return torch.from_numpy(ints.copy()).view(torch_dtype(fmt.name))
