"""The precision toolkit (task S): formats, bit equality, ULP distances, error statistics,
the familiar comparison metrics, and float64 references.

This package never imports torch or textual at import time.
"""

from .chunks import NpyFile, iter_chunks
from .dtypes import FORMATS, FloatFormat, common_format, dtype_of, float_format, is_supported
from .metrics import metrics_from_stats, pair_metrics
from .reference import fp64_reference
from .results import ErrorBlock, ErrorStats, RelError, UlpShare, UlpStats
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
    "NAN_MISMATCH",
    "STATUS_NAMES",
    "ErrorBlock",
    "ErrorStats",
    "FloatFormat",
    "NpyFile",
    "PairStats",
    "RelError",
    "UlpShare",
    "UlpStats",
    "accumulate",
    "bit_equal",
    "bit_mismatch",
    "common_format",
    "dtype_of",
    "error_stats",
    "float_format",
    "fp64_reference",
    "is_supported",
    "iter_chunks",
    "metrics_from_stats",
    "pair_metrics",
    "ulp_diff",
    "ulp_error",
    "ulp_nan",
    "ulp_of",
    "ulp_status",
]
