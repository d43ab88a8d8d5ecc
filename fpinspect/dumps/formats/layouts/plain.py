"""Permutations between plain layouts with the same axes (NCHW <-> NHWC <-> HWCN ...).

No padding is involved, so the origin shape must equal the permuted shape.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from .checks import dims
from .registry import FormatConversionError, converter

#: Layouts that name the same axes in different orders; one letter per axis.
FAMILIES = (("NC", "CN"), ("NCHW", "NHWC", "HWCN", "CHWN"), ("NCDHW", "NDHWC", "DHWCN", "DHWNC"))


def permutation(src: str, dst: str) -> tuple[int, ...]:
    """Axes such that ``x.transpose(axes)`` turns layout ``src`` into ``dst``."""
    return tuple(src.index(axis) for axis in dst)


def _permuter(src: str, dst: str):
    axes = permutation(src, dst)

    def permute(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
        dims(x.shape, len(src), f"{src} array")
        expected = tuple(x.shape[a] for a in axes)
        if origin != expected:
            raise FormatConversionError(f"origin shape {origin} is not the permuted shape {expected}")
        return x.transpose(axes)

    permute.__doc__ = f"{src} -> {dst}: ``x.transpose({axes})``."
    return permute


def _register_families() -> None:
    for family in FAMILIES:
        for src, dst in permutations(family, 2):
            converter(src, dst)(_permuter(src, dst))


_register_families()
