"""msprobe's benchmark standard, applied to a replayed fused output: a second, familiar opinion.

msprobe's API accuracy checker (``Ascend/msprobe``, ``docs/en/accuracy_checker/``) judges a
device result by its errors against a higher-precision reference, each divided by the error
of a benchmark result against that reference. Here the device result is the fused output,
the benchmark the eager (fusion-off) output, and each side's reference the float64 replay on
that side's own inputs.

Per side, against its reference ``truth`` (elements where either is NaN or infinite are left
out; *small* elements are those with ``|truth|`` at most the small-value cut-off):

* ``MaxRelErr`` / ``MeanRelErr`` — the largest / mean ``|x - truth| / (|truth| + eps)`` over
  the elements that are not small (``eps`` of the reference's format);
* ``RMSE`` — the root mean square of ``x - truth`` over those same elements;
* ``SmallValueErrRatio`` — the share of small elements whose ``|x - truth|`` exceeds the
  small-value tolerance.

Each metric becomes ``ratio = |fused| / max(|eager|, minimum_err)``; a ratio above the limit of
the op class fails, and the verdict fails when any ratio does (msprobe calls that ``error``).

The small-value cut-off and tolerance differ between msprobe's doc (cut-off float16 2⁻¹¹,
bfloat16 2⁻⁸, float32 2⁻¹⁴; tolerance 2⁻¹⁶, 2⁻¹⁶, 2⁻³⁰) and its code (``StandardConfig``:
cut-off 2⁻¹⁰, 2⁻¹⁰, 2⁻²⁰; benchmark tolerance 1e-16, 1e-16, 2⁻³⁰). These are the code's: it
is what produced the results users compare with.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..dumps.pair import json_number

#: The metrics of the standard, in msprobe's names and order of its report.
METRICS = ("MaxRelErr", "MeanRelErr", "RMSE", "SmallValueErrRatio")

#: Error limits of each ratio by op class (msprobe's L0 default, L1, L2).
LIMITS: dict[str, dict[str, float]] = {
    "L0": {"MaxRelErr": 10.0, "MeanRelErr": 2.0, "RMSE": 2.0, "SmallValueErrRatio": 2.0},
    "L1": {"MaxRelErr": 5.0, "MeanRelErr": 1.5, "RMSE": 1.5, "SmallValueErrRatio": 2.0},
    "L2": {"MaxRelErr": 2.0, "MeanRelErr": 1.2, "RMSE": 1.2, "SmallValueErrRatio": 2.0},
}


@dataclass(frozen=True)
class FormatRule:
    """Per compared format: the floor of a benchmark metric, the small-value cut-off and tolerance."""

    minimum_err: float
    small_value: float
    small_value_atol: float


#: The formats the standard covers.
RULES: dict[str, FormatRule] = {
    "float16": FormatRule(2.0**-11, 2.0**-10, 1e-16),
    "bfloat16": FormatRule(2.0**-8, 2.0**-10, 1e-16),
    "float32": FormatRule(2.0**-14, 2.0**-20, 2.0**-30),
}

#: GE op types of msprobe's L1 and L2 API lists, with the API each stands for; others are L0.
OP_CLASSES: dict[str, tuple[str, str]] = {
    **{t: ("L2", "matmul") for t in ("MatMul", "MatMulV2", "MatMulV3", "BatchMatMul", "BatchMatMulV2")},
    "GEMM": ("L2", "addmm"),
    **{t: ("L2", "layer_norm") for t in ("LayerNorm", "LayerNormV3", "LayerNormV4")},
    **{t: ("L2", "sum") for t in ("ReduceSum", "ReduceSumD")},
    **{t: ("L2", "GELU") for t in ("Gelu", "GeluV2")},
    "RmsNorm": ("L2", "npu_rms_norm"),
    **{t: ("L2", "one_hot") for t in ("OneHot", "OneHotD")},
    "Index": ("L2", "index"),
    "NonZero": ("L2", "nonzero"),
    **{t: ("L1", "npu_fusion_attention") for t in ("FlashAttentionScore", "FlashAttentionScoreGrad")},
    "ScatterElements": ("L1", "scatter_"),
}

#: Elements per block: the errors are taken block by block.
BLOCK = 1 << 18


def op_class(types: Iterable[str]) -> tuple[str, str | None]:
    """The class of a fused op from its original op types: the strictest of theirs (a region
    holding a matmul is held to the matmul's limits), with the type that decided it."""
    best: tuple[str, str | None] = ("L0", None)
    order = list(LIMITS)  # loosest first
    for t in types:
        level = OP_CLASSES.get(t, ("L0", None))[0]
        if order.index(level) > order.index(best[0]):
            best = (level, t)
    return best


@dataclass(frozen=True)
class Errors:
    """One side's metrics against its reference (see the module docstring)."""

    max_rel: float
    mean_rel: float
    rmse: float
    small_value_err_ratio: float

    def of(self, metric: str) -> float:
        return {
            "MaxRelErr": self.max_rel,
            "MeanRelErr": self.mean_rel,
            "RMSE": self.rmse,
            "SmallValueErrRatio": self.small_value_err_ratio,
        }[metric]


def benchmark_errors(x: np.ndarray, truth: np.ndarray, rule: FormatRule) -> Errors:
    """The four metrics of ``x`` against ``truth`` (same number of elements), in blocks.

    Differences are taken in the wider of the two formats (float32 for a half-precision
    output against its float32 reference), as msprobe's numpy does; sums in float64."""
    x, truth = x.reshape(-1), truth.reshape(-1)
    wide = np.promote_types(x.dtype, truth.dtype)
    eps = float(np.finfo(truth.dtype).eps)  # the reference's format, as msprobe's benchmark's
    max_rel = rel_sum = sq_sum = 0.0
    normal = small = small_err = 0
    for start in range(0, x.size, BLOCK):
        a = x[start : start + BLOCK].astype(wide)
        t = truth[start : start + BLOCK].astype(wide, copy=False)
        finite = np.isfinite(a) & np.isfinite(t)
        err, mag = np.abs(a - t)[finite], np.abs(t)[finite]
        is_small = mag <= rule.small_value
        small += int(is_small.sum())
        small_err += int((err[is_small] > rule.small_value_atol).sum())
        err, mag = err[~is_small], mag[~is_small]
        if err.size:
            rel = err / (mag + wide.type(eps))
            max_rel = max(max_rel, float(rel.max()))
            rel_sum += float(rel.sum(dtype=np.float64))
            sq_sum += float(np.square(err, dtype=np.float64).sum())
            normal += err.size
    return Errors(
        max_rel,
        rel_sum / normal if normal else 0.0,
        math.sqrt(sq_sum / normal) if normal else 0.0,
        small_err / small if small else 0.0,
    )


@dataclass(frozen=True)
class Standard:
    """msprobe's benchmark standard on one fused output (the ``replay.standard`` of the JSON).

    ``verdict`` is ``pass`` / ``fail``, or ``None`` with ``reason`` when the format is not one
    the standard covers."""

    level: str
    level_from: str | None  #: the original op type that set the class (None: L0, the default)
    dtype: str
    fused: Errors | None = None
    eager: Errors | None = None
    reason: str | None = None

    def ratio(self, metric: str) -> float | None:
        if self.fused is None or self.eager is None:
            return None
        floor = RULES[self.dtype].minimum_err
        return abs(self.fused.of(metric)) / max(abs(self.eager.of(metric)), floor)

    @property
    def failing(self) -> list[str]:
        """The metrics whose ratio is over the limit."""
        limits = LIMITS[self.level]
        return [m for m in METRICS if (r := self.ratio(m)) is not None and r > limits[m]]

    @property
    def verdict(self) -> str | None:
        if self.fused is None:
            return None
        return "fail" if self.failing else "pass"

    def to_json(self) -> dict:
        limits = LIMITS[self.level]
        return {
            "op_class": self.level,
            "op_class_from": self.level_from,
            "dtype": self.dtype,
            "metrics": {
                m: {
                    "fused": None if self.fused is None else json_number(self.fused.of(m)),
                    "eager": None if self.eager is None else json_number(self.eager.of(m)),
                    "ratio": json_number(self.ratio(m)),
                    "limit": limits[m],
                }
                for m in METRICS
            },
            "verdict": self.verdict,
            "reason": self.reason,
        }


def benchmark_standard(
    fused: np.ndarray,
    fused_truth: np.ndarray,
    eager: np.ndarray,
    eager_truth: np.ndarray,
    types: Iterable[str],
) -> Standard | None:
    """msprobe's standard on ``fused`` (against ``fused_truth``) over ``eager`` (against
    ``eager_truth``), for a fused op of original ``types``. ``None`` when a side and its
    reference hold different numbers of elements."""
    if fused.size != fused_truth.size or eager.size != eager_truth.size:
        return None
    level, level_from = op_class(types)
    dtype = np.dtype(fused.dtype).name
    rule = RULES.get(dtype)
    if rule is None:
        return Standard(
            level, level_from, dtype, reason=f"the standard covers {', '.join(RULES)}, not {dtype}"
        )
    return Standard(
        level,
        level_from,
        dtype,
        benchmark_errors(fused, fused_truth, rule),
        benchmark_errors(eager, eager_truth, rule),
    )
