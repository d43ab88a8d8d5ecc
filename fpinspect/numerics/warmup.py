"""Compile (or load from numba's disk cache) every kernel the statistics call, for each format.

A first comparison after an install otherwise waits while numba compiles; ``fpinspect warm``
and the checkout's ``make`` call :func:`warm` once so that no later command does.
"""

from __future__ import annotations

import numpy as np

from . import kernels as K
from .dtypes import FORMATS
from .jit import forget_other_versions, is_cached
from .kl import kl_pass
from .quantiles import select_ranks
from .stats import EXACT_CAP, accumulate
from .ulp import ulp_diff

#: Seconds a first command usually spends compiling the kernels of its formats (told before it starts).
COMPILE_SECONDS = 10


def needs_compile() -> bool:
    """Whether the kernels are yet to be compiled into numba's disk cache (cheap: no compile)."""
    return not all(is_cached(k) for k in (K.fused_pass, kl_pass, select_ranks))


def warm(formats=None) -> list[str]:
    """Run every kernel once on a few elements of each supported format (``formats``: names, by
    default all), as pairs of one format and against a float64 reference, small (exact
    percentiles) and large (sketches), and their ULP distances; return the format names warmed.
    The cached kernels of other versions of the sources are deleted first."""
    forget_other_versions()
    names = list(formats) if formats is not None else list(FORMATS)
    rng = np.random.default_rng(0)
    for size in (1000, EXACT_CAP + 1):
        ref = rng.standard_normal(size)
        for name in names:
            dtype = FORMATS[name].dtype
            a = (ref * 1.001).astype(dtype)
            for b in (ref.astype(dtype), ref):
                accumulate(a, b, worst=1, kl=True).error_stats()
            for status in (False, True):
                ulp_diff(a[:8], ref[:8].astype(dtype), return_status=status)
    return names
