"""FRACTAL_Z (convolution weights): NCHW (N=Cout, C=Cin, H, W) stored as
(C1 * H * W, N1, N0, C0) with C1 = ceil(C / C0), N1 = ceil(N / N0), N0 = 16.

``NCHW[n, c, h, w] = X[(c // C0) * H * W + h * W + w, n // N0, n % N0, c % C0]``; output and
input channels past N and C are padding. C0 and N0 are read from the stored shape; H and W
from the origin shape. Grouped weights (sub-format = groups) use another layout and are
refused by the registry.
"""

from __future__ import annotations

import numpy as np

from .checks import blocked, ceil_div, dims, zero_pad
from .registry import FormatConversionError, converter, packer

#: Output channels per block (GE ``kNiSize``).
N0 = 16


@converter("FRACTAL_Z", "NCHW")
def fractal_z_to_nchw(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(C1*H*W, N1, N0, C0) -> (N, C, H, W)."""
    n, c, h, w = dims(origin, 4, "NCHW origin shape")
    rows, n1, n0, c0 = dims(x.shape, 4, "FRACTAL_Z array")
    blocked("N", n, n1, n0)
    c1 = ceil_div(c, c0)
    if rows != c1 * h * w:
        raise FormatConversionError(
            f"the dumped first axis {rows} is not C1*H*W = {c1}*{h}*{w} for origin C={c}, C0={c0}"
        )
    full = x.reshape(c1, h, w, n1, n0, c0).transpose(3, 4, 0, 5, 1, 2).reshape(n1 * n0, c1 * c0, h, w)
    return full[:n, :c]


@converter("FRACTAL_Z", "HWCN")
def fractal_z_to_hwcn(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(C1*H*W, N1, N0, C0) -> (H, W, C, N)."""
    h, w, c, n = dims(origin, 4, "HWCN origin shape")
    return fractal_z_to_nchw(x, (n, c, h, w)).transpose(2, 3, 1, 0)


@packer("FRACTAL_Z", "NCHW")
def nchw_to_fractal_z(x: np.ndarray, c0: int) -> np.ndarray:
    """(N, C, H, W) -> (C1*H*W, N1, 16, C0), padding N and C with zeros."""
    n, c, h, w = dims(x.shape, 4, "NCHW array")
    c1, n1 = ceil_div(c, c0), ceil_div(n, N0)
    padded = zero_pad(x, (n1 * N0, c1 * c0, h, w))
    blocks = padded.reshape(n1, N0, c1, c0, h, w).transpose(2, 4, 5, 0, 1, 3)
    return np.ascontiguousarray(blocks).reshape(c1 * h * w, n1, N0, c0)


@packer("FRACTAL_Z", "HWCN")
def hwcn_to_fractal_z(x: np.ndarray, c0: int) -> np.ndarray:
    """(H, W, C, N) -> (C1*H*W, N1, 16, C0)."""
    dims(x.shape, 4, "HWCN array")
    return nchw_to_fractal_z(x.transpose(3, 2, 0, 1), c0)
