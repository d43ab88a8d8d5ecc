"""The precision toolkit (task S): formats, bit equality, ULP distances, error statistics,
the familiar comparison metrics, and float64 references.

This package never imports torch or textual at import time.
"""

from .chunks import NpyFile, iter_chunks
from .dtypes import FORMATS, FloatFormat, common_format, float_format, is_supported
from .metrics import (
    KL_DEFINITION,
    METRICS,
    accumulated_rel_error,
    cosine_similarity,
    kl_divergence,
    max_abs_error,
    max_rel_error,
    mean_abs_error,
    mean_rel_error,
    metrics_from_stats,
    pair_metrics,
    relative_euclidean_distance,
    rmse,
    standard_deviations,
    thousandth_ratio,
)
from .reference import fp64_reference
from .stats import PairStats, accumulate, error_stats
from .ulp import (
    BOTH_NAN,
    FINITE,
    INF_MATCH,
    INF_MISMATCH,
    NAN_MISMATCH,
    STATUS_NAMES,
    bit_equal,
    bit_mismatch,
    ulp_diff,
    ulp_error,
    ulp_nan,
    ulp_of,
    ulp_status,
)

__all__ = [
    "BOTH_NAN",
    "FINITE",
    "FORMATS",
    "INF_MATCH",
    "INF_MISMATCH",
    "KL_DEFINITION",
    "METRICS",
    "NAN_MISMATCH",
    "STATUS_NAMES",
    "FloatFormat",
    "NpyFile",
    "PairStats",
    "accumulate",
    "accumulated_rel_error",
    "bit_equal",
    "bit_mismatch",
    "common_format",
    "cosine_similarity",
    "error_stats",
    "float_format",
    "fp64_reference",
    "is_supported",
    "iter_chunks",
    "kl_divergence",
    "max_abs_error",
    "max_rel_error",
    "mean_abs_error",
    "mean_rel_error",
    "metrics_from_stats",
    "pair_metrics",
    "relative_euclidean_distance",
    "rmse",
    "standard_deviations",
    "thousandth_ratio",
    "ulp_diff",
    "ulp_error",
    "ulp_nan",
    "ulp_of",
    "ulp_status",
]
