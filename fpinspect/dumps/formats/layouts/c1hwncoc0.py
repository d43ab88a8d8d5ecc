"""C1HWNCoC0: HWCN (H, W, C, N) stored as (C1, H, W, N, Co, C0) with Co == C0 and
C1 = ceil(C / C0); only the diagonal Co == C0 carries data.

``HWCN[h, w, c, n] = X[c // C0, h, w, n, c % C0, c % C0]``; channels past C are padding.
"""

from __future__ import annotations

import numpy as np

from .checks import blocked, ceil_div, dims, same, zero_pad
from .registry import FormatConversionError, converter, packer


@converter("C1HWNCoC0", "HWCN")
def c1hwncoc0_to_hwcn(x: np.ndarray, origin: tuple[int, ...]) -> np.ndarray:
    """(C1, H, W, N, C0, C0) -> (H, W, C, N), reading the diagonal."""
    h, w, c, n = dims(origin, 4, "HWCN origin shape")
    c1, sh, sw, sn, co, c0 = dims(x.shape, 6, "C1HWNCoC0 array")
    if co != c0:
        raise FormatConversionError(f"the dumped Co={co} differs from C0={c0}")
    same("H", h, sh)
    same("W", w, sw)
    same("N", n, sn)
    blocked("C", c, c1, c0)
    diagonal = np.diagonal(x, axis1=4, axis2=5)  # (C1, H, W, N, C0)
    return diagonal.transpose(1, 2, 0, 4, 3).reshape(h, w, c1 * c0, n)[:, :, :c, :]


@packer("C1HWNCoC0", "HWCN")
def hwcn_to_c1hwncoc0(x: np.ndarray, c0: int) -> np.ndarray:
    """(H, W, C, N) -> (C1, H, W, N, C0, C0): zeros off the diagonal and in padded channels."""
    h, w, c, n = dims(x.shape, 4, "HWCN array")
    c1 = ceil_div(c, c0)
    blocks = zero_pad(x, (h, w, c1 * c0, n)).reshape(h, w, c1, c0, n).transpose(2, 0, 1, 4, 3)
    out = np.zeros((c1, h, w, n, c0, c0), dtype=x.dtype)
    k = np.arange(c0)
    out[..., k, k] = blocks
    return out
