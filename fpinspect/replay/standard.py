"""msprobe's benchmark standard, applied to a replayed fused output: a second, familiar opinion.

msprobe's API accuracy checker (``Ascend/msprobe``, ``docs/en/accuracy_checker/``) judges a
device result by its errors against a higher-precision benchmark, each divided by the error of
a second result against its benchmark. Here the device result is the fused output, the second
result the eager (fusion-off) output, and each side's benchmark the float64 replay on that
side's own inputs, rounded to the format msprobe's benchmark runs in (float32 for float16 and
bfloat16, float64 for float32).

The metrics are msprobe 26.2.0's (``pytorch/api_accuracy_checker/compare/algorithm.py``,
``precision_standard/benchmark_compare.py``, ``standard_config.py``), computed the same way on
the same arrays, so they agree with its functions to the last bit:

* a bfloat16 output is compared in float32, its benchmark too;
* an element counts when the output and the benchmark *cast to the output's format* are both
  finite (a float16 benchmark beyond 65504 is left out);
* *small* elements are counted ones with ``|bench|`` at most the small-value cut-off;
* ``MaxRelErr`` / ``MeanRelErr`` — the largest / mean ``|x - bench| / (|bench| + eps)`` over the
  counted elements that are not small, ``eps`` being 2⁻⁸ for bfloat16 and the epsilon of the
  benchmark's format otherwise (0 when there is none);
* ``RMSE`` — ``sqrt(mean(e²) · (N / (N − m + 10⁻⁴) + 10⁻⁴))`` where ``e`` is ``|x - bench|`` with
  the ``m`` small or uncounted elements set to 0, over all ``N`` elements;
* ``SmallValueErrRatio`` — the share of small elements whose ``|x - bench|`` exceeds the
  small-value tolerance.

Each metric becomes ``ratio = |fused| / max(|eager|, minimum_err)``; a ratio above the limit of
the op class fails, and the verdict fails when any ratio does (msprobe calls that ``error``).
Where either side's metric is infinite or NaN there is no ratio: msprobe's rule passes it when
both are the same infinity or both NaN, and fails it otherwise.

The small-value cut-off and tolerance differ between msprobe's doc (cut-off float16 2⁻¹¹,
bfloat16 2⁻⁸, float32 2⁻¹⁴; tolerance 2⁻¹⁶, 2⁻¹⁶, 2⁻³⁰) and its code (``StandardConfig``:
cut-off 2⁻¹⁰, 2⁻¹⁰, 2⁻²⁰; benchmark tolerance 1e-16, 1e-16, 2⁻³⁰). These are the code's: it
is what produced the results users compare with.

Where this differs from a run of msprobe: its benchmark is the op run again on the CPU in the
raised format; ours is the float64 replay rounded to that format (at least as close to the
truth). msprobe chooses another standard (absolute threshold, ULP, binary) for some APIs; this
is its benchmark standard on every fused op, as the op class allows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..dumps.engine.pair import json_number

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
    "ScatterAddWithAxis": ("L1", "scatter_add_"),
    # GE writes embedding as GatherV2(weight, indices, axis 0), as it writes index_select and
    # select: every GatherV2 is held to embedding's limits (the types cannot tell them apart).
    **{t: ("L1", "embedding") for t in ("GatherV2", "GatherV2D")},
    "CrossEntropyLoss": ("L2", "npu_cross_entropy_loss"),
    "CrossEntropyLossGrad": ("L2", "npu_cross_entropy_loss_backward"),
    "RmsNormGrad": ("L2", "npu_rms_norm_backward"),
}

#: The format msprobe's benchmark runs in, by the output's format.
BENCH_FORMAT: dict[str, np.dtype] = {
    "float16": np.dtype(np.float32),
    "bfloat16": np.dtype(np.float32),
    "float32": np.dtype(np.float64),
}

#: msprobe's ``BFLOAT16_EPS``: the eps of a bfloat16 output's relative errors.
BFLOAT16_EPS = 2.0**-8


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
    """The four metrics of the output ``x`` against ``truth`` (same number of elements), as the
    module docstring defines them: ``truth`` is first rounded to msprobe's benchmark format."""
    dtype = np.dtype(x.dtype).name
    bench = truth.reshape(-1).astype(BENCH_FORMAT[dtype])
    x = x.reshape(-1)
    if dtype == "bfloat16":
        x = x.astype(np.float32)
    eps = BFLOAT16_EPS if dtype == "bfloat16" else np.finfo(bench.dtype).eps
    with np.errstate(all="ignore"):
        abs_err = np.abs(x - bench)
        counted = np.isfinite(x) & np.isfinite(bench.astype(x.dtype))
        abs_bench = np.abs(bench)
        small = (abs_bench <= rule.small_value) & counted
        left_out = small | ~counted
        rel = np.where(left_out, -1, abs_err / (abs_bench + eps))
        kept = rel[rel >= 0]
        sq_mean = np.mean(np.square(np.where(left_out, 0, abs_err))) if x.size else 0.0
        sq_mean = sq_mean * (x.size / (x.size - np.sum(left_out) + 0.0001) + 0.0001)
        small_count = int(np.sum(small))
        return Errors(
            float(kept.max()) if kept.size else 0.0,
            float(np.mean(kept)) if kept.size else 0.0,
            float(np.sqrt(sq_mean)),
            int(np.sum(small & (abs_err > rule.small_value_atol))) / small_count if small_count else 0.0,
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
        """``|fused| / max(|eager|, minimum_err)``; NaN when either is infinite or NaN."""
        if self.fused is None or self.eager is None:
            return None
        fused, eager = self.fused.of(metric), self.eager.of(metric)
        if not (math.isfinite(fused) and math.isfinite(eager)):
            return math.nan
        return abs(fused) / max(abs(eager), RULES[self.dtype].minimum_err)

    def _fails(self, metric: str) -> bool:
        ratio = self.ratio(metric)
        if ratio is None:
            return False
        if math.isnan(ratio):  # msprobe: the same infinity, or NaN, on both sides passes
            fused, eager = self.fused.of(metric), self.eager.of(metric)
            return not (fused == eager or (math.isnan(fused) and math.isnan(eager)))
        return ratio > LIMITS[self.level][metric]

    @property
    def failing(self) -> list[str]:
        """The metrics whose ratio is over the limit (or whose infinities or NaNs disagree)."""
        return [m for m in METRICS if self._fails(m)]

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
