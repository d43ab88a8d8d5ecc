"""NDC1HWC0 (6HD): (N, D, C1, H, W, C0) with C1 = ceil(C / C0); channels past C are padding.

``NCDHW[n, c, d, h, w] = X[n, d, c // C0, h, w, c % C0]``. ``ND`` here means channel-last
(N, D, H, W, C), as the reference script reads it.
"""

from __future__ import annotations

import numpy as np

from .checks import blocked, ceil_div, dims, same, zero_pad
from .registry import converter, packer


def _check(x: np.ndarray, n: int, c: int, d: int, h: int, w: int) -> tuple[int, int, int, int, int, int]:
    sn, sd, c1, sh, sw, c0 = dims(x.shape, 6, "NDC1HWC0 array")
    same("N", n, sn)
    same("D", d, sd)
    same("H", h, sh)
    same("W", w, sw)
    blocked("C", c, c1, c0)
    return sn, sd, c1, sh, sw, c0


@converter("NDC1HWC0", "NCDHW")
def ndc1hwc0_to_ncdhw(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(N, D, C1, H, W, C0) -> (N, C, D, H, W)."""
    n, c, d, h, w = dims(origin, 5, "NCDHW origin shape")
    _, _, c1, _, _, c0 = _check(x, n, c, d, h, w)
    return x.transpose(0, 2, 5, 1, 3, 4).reshape(n, c1 * c0, d, h, w)[:, :c]


@converter("NDC1HWC0", "NDHWC")
@converter("NDC1HWC0", "ND")
def ndc1hwc0_to_ndhwc(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(N, D, C1, H, W, C0) -> (N, D, H, W, C)."""
    n, d, h, w, c = dims(origin, 5, "NDHWC origin shape")
    _, _, c1, _, _, c0 = _check(x, n, c, d, h, w)
    return x.transpose(0, 1, 3, 4, 2, 5).reshape(n, d, h, w, c1 * c0)[..., :c]


@packer("NDC1HWC0", "NCDHW")
def ncdhw_to_ndc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    """(N, C, D, H, W) -> (N, D, C1, H, W, C0), padding channels with zeros."""
    n, c, d, h, w = dims(x.shape, 5, "NCDHW array")
    c1 = ceil_div(c, c0)
    padded = zero_pad(x, (n, c1 * c0, d, h, w))
    return np.ascontiguousarray(padded.reshape(n, c1, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2))


@packer("NDC1HWC0", "NDHWC")
@packer("NDC1HWC0", "ND")
def ndhwc_to_ndc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    """(N, D, H, W, C) -> (N, D, C1, H, W, C0), padding channels with zeros."""
    dims(x.shape, 5, "NDHWC array")
    return ncdhw_to_ndc1hwc0(x.transpose(0, 4, 1, 2, 3), c0)
