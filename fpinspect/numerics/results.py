"""The typed result of :func:`~fpinspect.numerics.error_stats`: frozen msgspec Structs that pickle
(they cross process pools) and serialise in one place (:meth:`ErrorStats.to_json`), to the JSON
shape the reports have always had (``metrics.abs``, ``metrics.ulp.share[">=2"]``, ...)."""

from __future__ import annotations

import msgspec
import numpy as np

Index = list[int]


class ErrorBlock(msgspec.Struct, frozen=True, kw_only=True):
    """One error measure over the elements finite on both sides (``None`` where there are none).
    Percentiles use the ``inverted_cdf`` definition (an observed value)."""

    max: float | None
    argmax: Index | None  #: where the largest error is (an index into the array)
    mean: float | None
    p50: float | None
    p99: float | None
    exact: bool  #: the percentiles are exact (else from a sketch accurate to 0.4%)


class RelError(ErrorBlock, frozen=True, kw_only=True):
    """``|a - ref| / |ref|`` where ``|ref|`` is at least the smallest normal number of the
    measured format."""

    count: int  #: elements that enter the relative error
    excluded: int  #: finite elements left out for a tiny ``|ref|``


class UlpShare(msgspec.Struct, frozen=True, kw_only=True):
    """Fractions of the finite elements at 0, 1 and >= 2 ULP (for ``kind="error"``: 0, within
    (0, 1], above 1 — each cut with a tolerance for the reference's own float64 rounding)."""

    zero: float = msgspec.field(name="0")
    one: float = msgspec.field(name="1")
    two_or_more: float = msgspec.field(name=">=2")


class UlpStats(msgspec.Struct, frozen=True, kw_only=True):
    """ULP distances in the measured format (the less precise of the two dtypes)."""

    kind: str  #: ``"diff"``: integer :func:`ulp_diff` (equal dtypes); ``"error"``: real :func:`ulp_error`
    dtype: str  #: the measured format
    max: float | None
    argmax: Index | None
    mean: float | None
    p50: float | None
    p99: float | None
    exact: bool
    share: UlpShare


class ErrorStats(msgspec.Struct, frozen=True, kw_only=True):
    """Error statistics of an array against a reference (:func:`~fpinspect.numerics.error_stats`)."""

    count: int  #: elements
    dtype: str
    ref_dtype: str
    finite: int  #: elements finite on both sides: the only ones that enter the statistics
    bit_equal: int | None  #: bit-identical elements (same dtype only)
    abs: ErrorBlock  #: ``|a - ref|``
    rel: RelError
    ulp: UlpStats
    nan_mismatch: int  #: NaN on exactly one side
    inf_mismatch: int  #: an infinity against a number, or opposite infinities
    both_nan: int
    both_inf: int
    signed_zero: int  #: +0 against -0 (same dtype only)
    normwise: float | None  #: ``max |a - ref| / max |ref|``

    def to_json(self) -> dict:
        """Plain dicts, lists and numbers, keyed as in the JSON reports (NaN stays NaN: the
        report writer decides how to spell it)."""
        return to_builtins(self)


def to_builtins(value) -> dict:
    """A result Struct as plain Python values (numpy scalars as Python numbers)."""
    return msgspec.to_builtins(value, enc_hook=_plain)


def _plain(v):
    # msgspec's enc_hook protocol: NotImplementedError says "not a type this hook encodes"
    if isinstance(v, np.generic):
        return v.item()
    raise NotImplementedError(f"{type(v).__name__} is not a result value")
