"""How each dumped tensor is stored and described: dtype, layout, storage and origin shape.

``plain`` keeps every tensor as the model holds it (4-D activations tagged ``NCHW``, the
rest ``ND``). ``ascend`` stores them as an Ascend device does, so that compare's layout
conversions run on real data: matmul outputs as ``FRACTAL_NZ`` (origin ``ND``), other 4-D
floating tensors as ``NC1HWC0`` (origin ``NCHW``), with C0 = 16. Model inputs and weights
stay in their origin layout in both modes, as GE feeds them.

Arrays are written as ``msaccucmp.py convert`` writes them: bfloat16 data as float32 (numpy
has no bfloat16 ``.npy`` type), the graph still saying ``DT_BF16``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dumps.formats.ge_types import GE_TO_NUMPY
from ..dumps.formats.layouts import pack_layout

#: Channel / column block of NC1HWC0 and FRACTAL_NZ for 16- and 32-bit floats.
C0 = 16
#: numpy dtype name -> GE dtype name.
GE_DTYPE = {np_name: ge for ge, np_name in GE_TO_NUMPY.items()}


@dataclass(frozen=True)
class Desc:
    """One tensor as the graph describes it and the dump stores it.

    ``dtype`` is the model's dtype name (``"bfloat16"``), ``shape`` the origin shape,
    ``layout`` the storage layout, ``origin_format`` the layout of ``shape``.
    ``origin`` is ``(op, index)`` of the original output a fused output stands for.
    """

    dtype: str
    shape: tuple[int, ...]
    layout: str
    origin_format: str
    storage_shape: tuple[int, ...]
    origin: tuple[str, int] | None = None

    @property
    def ge_dtype(self) -> str:
        return GE_DTYPE[self.dtype]


def _layouts(shape: tuple[int, ...], floating: bool, cube: bool, mode: str) -> tuple[str, str]:
    """(storage layout, origin format) of one tensor."""
    origin = "NCHW" if len(shape) == 4 else "ND"
    if mode == "ascend" and floating:
        if cube and len(shape) >= 2:
            return "FRACTAL_NZ", "ND"
        if len(shape) == 4:
            return "NC1HWC0", "NCHW"
    return origin, origin


def _dump_dtype(dtype: str) -> np.dtype:
    return np.dtype("float32" if dtype == "bfloat16" else dtype)


def store(
    array: np.ndarray, dtype: str, *, cube: bool = False, mode: str = "plain"
) -> tuple[np.ndarray, Desc]:
    """The array as dumped (storage layout, dump dtype) and its description.

    ``array`` holds the values in the model's dtype ``dtype`` or, for bfloat16, in float32.
    """
    shape = tuple(int(d) for d in array.shape)
    layout, origin_format = _layouts(shape, _dump_dtype(dtype).kind == "f", cube, mode)
    data = np.asarray(array, dtype=_dump_dtype(dtype))
    if layout != origin_format:
        data = pack_layout(data, origin_format, layout, C0)
    return data, Desc(dtype, shape, layout, origin_format, tuple(data.shape))


def describe(shape: tuple[int, ...], dtype: str) -> Desc:
    """The description of a tensor that is fed, not dumped (model inputs, weights)."""
    layout, origin_format = _layouts(shape, False, False, "plain")
    return Desc(dtype, shape, layout, origin_format, shape)
