"""Elementwise GE ops: arithmetic, transcendental, rounding, cast and select
(``ge_op_semantics.md`` §2.1, §2.2, §2.4). Binary ops broadcast as numpy does."""

from __future__ import annotations

import numpy as np

from .base import OpCall, Unsupported, semantics
from .special import erf


def _binary(fn):
    def semantic(call: OpCall) -> list[np.ndarray]:
        return [fn(call.x(0), call.x(1))]

    return semantic


def _unary(fn):
    def semantic(call: OpCall) -> list[np.ndarray]:
        return [fn(call.x(0))]

    return semantic


semantics("Add", "AddV2", elementwise=True)(_binary(np.add))
semantics("Sub", elementwise=True)(_binary(np.subtract))
semantics("Mul", elementwise=True)(_binary(np.multiply))
semantics("RealDiv", elementwise=True)(_binary(np.true_divide))
semantics("Maximum", elementwise=True)(_binary(np.maximum))
semantics("Minimum", elementwise=True)(_binary(np.minimum))
semantics("Neg", elementwise=True)(_unary(np.negative))
semantics("Abs", elementwise=True)(_unary(np.abs))
semantics("Square", elementwise=True)(_unary(lambda x: x * x))
semantics("Sqrt", elementwise=True)(_unary(np.sqrt))
semantics("Sin", elementwise=True)(_unary(np.sin))
semantics("Cos", elementwise=True)(_unary(np.cos))
semantics("Floor", elementwise=True)(_unary(np.floor))
semantics("Ceil", elementwise=True)(_unary(np.ceil))
semantics("Identity", "Dropout", "StopGradient", elementwise=True)(_unary(lambda x: x))


@semantics("Div", elementwise=True)
def div(call: OpCall) -> list[np.ndarray]:
    """``x1 / x2``; integer operands are divided in float and floored (the TBE kernel)."""
    a, b = call.x(0), call.x(1)
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        return [np.floor(a.astype(np.float64) / b)]
    return [a / b]


@semantics("Rsqrt", elementwise=True)
def rsqrt(call: OpCall) -> list[np.ndarray]:
    """``1 / sqrt(x)`` as a division (as the TBE kernel computes it)."""
    x = call.x(0)
    return [call.const(1.0) / np.sqrt(x)]


@semantics("Reciprocal", elementwise=True)
def reciprocal(call: OpCall) -> list[np.ndarray]:
    return [call.const(1.0) / call.x(0)]


@semantics("Adds", elementwise=True)
def adds(call: OpCall) -> list[np.ndarray]:
    """``x + value``; ``value`` is a required float32 attribute."""
    return [call.x(0) + call.float_attr("value")]


@semantics("Muls", elementwise=True)
def muls(call: OpCall) -> list[np.ndarray]:
    """``x * value``; ``value`` is a required float32 attribute."""
    return [call.x(0) * call.float_attr("value")]


def _scaled(call: OpCall) -> np.ndarray:
    scale, shift = call.float_attr("scale", 1.0), call.float_attr("shift", 0.0)
    x = call.x(0)
    return x if scale == 1 and shift == 0 else scale * x + shift


@semantics("Exp", elementwise=True)
def exp(call: OpCall) -> list[np.ndarray]:
    """``base ** (scale * x + shift)``; ``base = -1`` (the default) means e."""
    base = call.float_attr("base", -1.0)
    z = _scaled(call)
    return [np.exp(z) if base == -1 else np.exp(np.log(base) * z)]


@semantics("Log", elementwise=True)
def log(call: OpCall) -> list[np.ndarray]:
    """``ln(shift + scale * x) / ln(base)``; ``base = -1`` (the default) means natural log."""
    base = call.float_attr("base", -1.0)
    y = np.log(_scaled(call))
    return [y if base == -1 else y / np.log(base)]


@semantics("Pow", elementwise=True)
def power(call: OpCall) -> list[np.ndarray]:
    """``x1 ** x2``. A structure-only graph has no value for a constant exponent ``x2``;
    it is then read from the attribute ``exponent`` (written by ``fpinspect capture``)."""
    x = call.x(0)
    if call.has(1):
        e = call.inputs[1]
    elif "exponent" in call.attrs:
        e = call.const(float(call.attrs["exponent"]))
    else:
        raise Unsupported(f"Pow {call.name}: the exponent (input 1) has no value and no 'exponent' attribute")
    e = np.asarray(e)
    if e.dtype.kind == "f":
        e = e.astype(call.compute)
    return [np.power(x, e)]


@semantics("Erf", elementwise=True)
def erf_op(call: OpCall) -> list[np.ndarray]:
    x = call.x(0)
    return [erf(x).astype(x.dtype)]


@semantics("Round", elementwise=True)
def round_op(call: OpCall) -> list[np.ndarray]:
    """Round half to even; ``decimals`` other than 0 is not documented, so unsupported."""
    if call.int_attr("decimals", 0) != 0:
        raise Unsupported(f"Round {call.name}: decimals={call.attrs['decimals']} has no documented formula")
    return [np.rint(call.x(0))]


@semantics("ClipByValue", "ClipByValueV2", elementwise=True)
def clip(call: OpCall) -> list[np.ndarray]:
    """``max(min(x, clip_value_max), clip_value_min)``: if min > max the result is min
    (``np.clip`` would give max). Bounds missing as inputs come from the attributes
    ``clip_value_min`` / ``clip_value_max``."""
    x = call.x(0)
    bounds = []
    for k, name in ((1, "clip_value_min"), (2, "clip_value_max")):
        if call.has(k):
            bounds.append(call.inputs[k])
        elif name in call.attrs:
            bounds.append(call.const(float(call.attrs[name])))
        else:
            raise Unsupported(f"{call.type} {call.name}: {name} (input {k}) has no value")
    lo, hi = bounds
    return [np.maximum(np.minimum(x, hi), lo)]


@semantics("Cast", elementwise=True)
def cast(call: OpCall) -> list[np.ndarray]:
    """The value itself: the evaluator rounds every output to its declared dtype (and the
    fp64 replay keeps float-to-float casts exact, as autofuse deletes them in fused code).
    Float to integer truncates toward zero, NaN becoming 0 (the K-35 kernel)."""
    return [call.x(0)]


@semantics("Select", "SelectV2", elementwise=True)
def select(call: OpCall) -> list[np.ndarray]:
    """``condition ? x1 : x2`` (SelectV2 broadcasts all three, as numpy does)."""
    cond = call.x(0)
    return [np.where(cond.astype(bool), call.x(1), call.x(2))]


@semantics("FloorDiv", elementwise=True)
def floor_div(call: OpCall) -> list[np.ndarray]:
    """``floor(x1 / x2)``."""
    return [np.floor(call.x(0) / call.x(1))]


@semantics("TruncateDiv", elementwise=True)
def truncate_div(call: OpCall) -> list[np.ndarray]:
    """``trunc(x1 / x2)``: rounded toward zero."""
    return [np.trunc(call.x(0) / call.x(1))]


@semantics("Axpy", elementwise=True)
def axpy(call: OpCall) -> list[np.ndarray]:
    """``x1 + alpha * x2`` with the float32 attribute ``alpha`` (default 1)."""
    return [call.x(0) + call.float_attr("alpha", 1.0) * call.x(1)]


@semantics("AxpyV2", elementwise=True)
def axpy_v2(call: OpCall) -> list[np.ndarray]:
    """``x1 + alpha * x2`` with ``alpha`` a tensor input (2)."""
    return [call.x(0) + call.x(2) * call.x(1)]
