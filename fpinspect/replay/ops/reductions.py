"""Reductions and softmax (``ge_op_semantics.md`` §3, §5).

Axes come from the ``axes`` input (ReduceSum ...) or attribute (the ``D`` variants, and
what ``fpinspect capture`` writes); without either they are inferred from the shapes
(``[M, N] -> [M, 1]`` reduces axis 1), or the op is unsupported when the shapes allow
several answers. ``keep_dims`` is then read from the shapes too.
"""

from __future__ import annotations

import numpy as np

from .base import OpCall, norm_axes, reduced_axes, semantics


def _axes(call: OpCall) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(axes, output shape)`` of a reduction of input 0."""
    shape = call.in_shape(0)
    what = f"{call.type} {call.name}"
    axes = call.ints("axes", 1)
    if axes is None:
        axes, _ = reduced_axes(shape, call.out_shape(0), what)
    elif not axes:
        # empty axes: ReduceMean / ReduceSum (noop_with_empty_axes=true) do nothing,
        # the D variants (and noop=false) reduce everything
        noop = bool(call.attrs.get("noop_with_empty_axes", not call.type.endswith("D")))
        axes = () if noop else tuple(range(len(shape)))
    else:
        axes = norm_axes(axes, len(shape), what)
    return tuple(axes), call.out_shape(0) if call.output_shapes else shape


def _reduction(fn):
    def semantic(call: OpCall) -> list[np.ndarray]:
        axes, out = _axes(call)
        x = call.x(0)
        y = fn(x, axis=axes, keepdims=True) if axes else x
        return [np.asarray(y, dtype=x.dtype if x.dtype.kind == "f" else None).reshape(out)]

    return semantic


def _keeps_rows(call: OpCall) -> bool:
    return 0 not in _axes(call)[0]


semantics("ReduceSum", "ReduceSumD", rows_independent=_keeps_rows)(_reduction(np.sum))
semantics("ReduceMean", "ReduceMeanD", rows_independent=_keeps_rows)(_reduction(np.mean))
semantics("ReduceMax", "ReduceMaxD", rows_independent=_keeps_rows)(_reduction(np.max))
semantics("ReduceMin", "ReduceMinD", rows_independent=_keeps_rows)(_reduction(np.min))
semantics("ReduceProd", "ReduceProdD", rows_independent=_keeps_rows)(_reduction(np.prod))


def _variance(call: OpCall) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    axes, out = _axes(call)
    x = call.x(0)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    correction = call.int_attr("correction", 1)
    mean = np.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = np.sum(d * d, axis=axes, keepdims=True) / x.dtype.type(max(n - correction, 0))
    return var, mean, out


@semantics("ReduceVar")
def reduce_var(call: OpCall) -> list[np.ndarray]:
    """``sum((x - mean)^2) / (N - correction)`` over the axes; ``correction`` 1 by default."""
    var, _, out = _variance(call)
    return [var.reshape(out)]


@semantics("ReduceVarMean")
def reduce_var_mean(call: OpCall) -> list[np.ndarray]:
    """Outputs ``(variance, mean)`` as ReduceVar computes them."""
    var, mean, out = _variance(call)
    return [var.reshape(out), mean.reshape(call.out_shape(1) if len(call.output_shapes) > 1 else out)]


def _softmax_axes(call: OpCall) -> tuple[int, ...]:
    axes = call.ints("axes")
    return norm_axes([-1] if axes is None else axes, len(call.in_shape(0)), f"{call.type} {call.name}")


def _softmax_keeps_rows(call: OpCall) -> bool:
    return 0 not in _softmax_axes(call)


@semantics("SoftmaxV2", rows_independent=_softmax_keeps_rows)
def softmax(call: OpCall) -> list[np.ndarray]:
    """``exp(x - max) / sum(exp(x - max))`` over ``axes`` (default the last)."""
    x = call.x(0)
    axes = _softmax_axes(call)
    e = np.exp(x - np.max(x, axis=axes, keepdims=True))
    return [e / np.sum(e, axis=axes, keepdims=True)]


@semantics("LogSoftmaxV2", rows_independent=_softmax_keeps_rows)
def log_softmax(call: OpCall) -> list[np.ndarray]:
    """``(x - max) - ln(sum(exp(x - max)))`` over ``axes`` (default the last)."""
    x = call.x(0)
    axes = _softmax_axes(call)
    z = x - np.max(x, axis=axes, keepdims=True)
    return [z - np.log(np.sum(np.exp(z), axis=axes, keepdims=True))]
