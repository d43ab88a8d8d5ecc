"""FRACTAL_NZ: ND (..., m, n) stored as (..., N1, M1, M0, C0) with N1 = ceil(n / C0),
M1 = ceil(m / M0), M0 = 16; a 1-D (n,) is stored as m = 1.

``ND[..., r, c] = X[..., c // C0, r // M0, r % M0, c % C0]``; rows past m and columns past n
are padding. C0 and M0 are read from the stored shape.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import blocked, ceil_div, zero_pad
from .registry import FormatConversionError, converter, packer

#: Rows per fractal block (GE ``kCubeSize``).
M0 = 16


def _matrix_dims(shape: tuple[int, ...], what: str) -> tuple[tuple[int, ...], int, int]:
    """(batch dims, m, n) of an ND shape; a 1-D (n,) is one row."""
    if len(shape) == 0:
        raise FormatConversionError(f"the {what} must have at least 1 dimension")
    if len(shape) == 1:
        return (), 1, shape[0]
    return tuple(shape[:-2]), shape[-2], shape[-1]


@converter("FRACTAL_NZ", "ND")
def fractal_nz_to_nd(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(..., N1, M1, M0, C0) -> origin (..., m, n)."""
    if x.ndim < 4:
        raise FormatConversionError(f"the FRACTAL_NZ array must have at least 4 dimensions, not {x.ndim}")
    *stored_batch, n1, m1, m0, c0 = x.shape
    batch, m, n = _matrix_dims(origin, "ND origin shape")
    b = math.prod(stored_batch)
    if math.prod(batch) != b:
        raise FormatConversionError(
            f"origin batch dims {batch} hold {math.prod(batch)} matrices, "
            f"the dumped shape {tuple(stored_batch)} holds {b}"
        )
    blocked("m (rows)", m, m1, m0)
    blocked("n (columns)", n, n1, c0)
    full = x.reshape(b, n1, m1, m0, c0).transpose(0, 2, 3, 1, 4).reshape(b, m1 * m0, n1 * c0)
    return full[:, :m, :n].reshape(origin)


@packer("FRACTAL_NZ", "ND")
def nd_to_fractal_nz(x: np.ndarray, c0: int) -> np.ndarray:
    """(..., m, n) -> (..., N1, M1, 16, C0), padding rows and columns with zeros."""
    batch, m, n = _matrix_dims(x.shape, "ND array")
    b, n1, m1 = math.prod(batch), ceil_div(n, c0), ceil_div(m, M0)
    padded = zero_pad(x.reshape(b, m, n), (b, m1 * M0, n1 * c0))
    blocks = padded.reshape(b, m1, M0, n1, c0).transpose(0, 3, 1, 2, 4)
    return np.ascontiguousarray(blocks).reshape(*batch, n1, m1, M0, c0)
