"""When do two training curves separate beyond normal noise? (numpy only)

Curves are sampled at the same steps. The *noise band* of a metric is measured, not
assumed: it is the gap between the reference run and a noise run that differs from it
only by a perturbation that should not matter (every initial weight moved one ULP, or the
next data-order seed), as a running maximum — ``band[i] = max_{j <= i} |ref[j] − noise[j]|``
— because chaotic training amplifies any perturbation and a gap once reached is normal
from then on.

The candidate (fused) curve *diverges* at the first sample ``i`` where

    |candidate[i] − ref[i]| > FACTOR · band[i] + resolution[i],

``FACTOR`` = 2 (one noise run is a single draw of the noise, so a gap must clearly exceed
it), and ``resolution[i]`` the finest difference the metric can show at all, computed by
the caller (task E: ``2 · spacing_float32(value) · sqrt(n)``, ``n`` the number of per-token
losses or steps averaged into the value). The size of a divergence is that gap, also as a
multiple of the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FACTOR = 2.0


def noise_band(reference: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``max_{j <= i} |reference[j] − noise[j]|`` for every sample ``i`` (float64)."""
    gap = np.abs(np.asarray(reference, np.float64) - np.asarray(noise, np.float64))
    return np.maximum.accumulate(gap) if gap.size else gap


@dataclass(frozen=True)
class Divergence:
    """The first sample beyond the band: its index and step, the gap, the band there, and
    the gap as a multiple of ``FACTOR · band + floor``; ``beyond`` counts the samples beyond
    it in all and ``last_step`` is the last of them (a transient excursion and a lasting
    separation read differently)."""

    index: int
    step: int
    size: float
    band: float
    ratio: float
    beyond: int
    last_step: int


def first_divergence(
    steps: np.ndarray, reference: np.ndarray, candidate: np.ndarray, band: np.ndarray, floor: np.ndarray
) -> Divergence | None:
    """The first sample where ``|candidate − reference| > FACTOR · band + floor`` (module
    docstring), or None when the curves stay within it. NaN or infinite values count as
    beyond any band."""
    ref = np.asarray(reference, np.float64)
    gap = np.abs(np.asarray(candidate, np.float64) - ref)
    limit = FACTOR * np.asarray(band, np.float64) + np.asarray(floor, np.float64)
    beyond = ~(gap <= limit)  # NaN gaps are beyond
    if not beyond.any():
        return None
    i = int(np.argmax(beyond))
    ratio = float(gap[i] / limit[i]) if limit[i] > 0 else float("inf")
    last = int(np.flatnonzero(beyond)[-1])
    return Divergence(
        i, int(steps[i]), float(gap[i]), float(band[i]), ratio, int(beyond.sum()), int(steps[last])
    )
