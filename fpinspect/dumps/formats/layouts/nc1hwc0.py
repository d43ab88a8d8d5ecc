"""NC1HWC0 (5HD): (N, C1, H, W, C0) with C1 = ceil(C / C0); channels C..C1*C0-1 are padding.

``NCHW[n, c, h, w] = X[n, c // C0, h, w, c % C0]``. ``ND`` here means channel-last
(N, H, W, C), as the reference script ``fusion_precision_analyzer.py`` reads it.
"""

from __future__ import annotations

import numpy as np

from .checks import blocked, ceil_div, dims, same, zero_pad
from .registry import converter, packer


def _check(x: np.ndarray, n: int, c: int, h: int, w: int) -> tuple[int, int, int, int, int]:
    sn, c1, sh, sw, c0 = dims(x.shape, 5, "NC1HWC0 array")
    same("N", n, sn)
    same("H", h, sh)
    same("W", w, sw)
    blocked("C", c, c1, c0)
    return sn, c1, sh, sw, c0


@converter("NC1HWC0", "NCHW")
def nc1hwc0_to_nchw(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(N, C1, H, W, C0) -> (N, C, H, W)."""
    n, c, h, w = dims(origin, 4, "NCHW origin shape")
    _, c1, _, _, c0 = _check(x, n, c, h, w)
    return x.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :c]


@converter("NC1HWC0", "NHWC")
@converter("NC1HWC0", "ND")
def nc1hwc0_to_nhwc(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(N, C1, H, W, C0) -> (N, H, W, C)."""
    n, h, w, c = dims(origin, 4, "NHWC origin shape")
    _, c1, _, _, c0 = _check(x, n, c, h, w)
    return x.transpose(0, 2, 3, 1, 4).reshape(n, h, w, c1 * c0)[..., :c]


@packer("NC1HWC0", "NCHW")
def nchw_to_nc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    """(N, C, H, W) -> (N, C1, H, W, C0), padding channels with zeros."""
    n, c, h, w = dims(x.shape, 4, "NCHW array")
    c1 = ceil_div(c, c0)
    padded = zero_pad(x, (n, c1 * c0, h, w))
    return np.ascontiguousarray(padded.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2))


@packer("NC1HWC0", "NHWC")
@packer("NC1HWC0", "ND")
def nhwc_to_nc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    """(N, H, W, C) -> (N, C1, H, W, C0), padding channels with zeros."""
    dims(x.shape, 4, "NHWC array")
    return nchw_to_nc1hwc0(x.transpose(0, 3, 1, 2), c0)
