"""Normalisations (``ge_op_semantics.md`` §5): LayerNorm (V3, V4), RmsNorm, GroupNorm and
inference batch norm. Statistics are the biased ones; epsilon is a float32 attribute."""

from __future__ import annotations

import numpy as np

from .base import OpCall, Unsupported, semantics


def _norm_start(call: OpCall, params: int | None) -> int:
    """First normalised axis: ``begin_norm_axis`` if the graph has it, else where the
    ``mean`` output keeps size-1 dims, else where gamma (input ``params``) starts."""
    rank = len(call.in_shape(0))
    begin = call.int_attr("begin_norm_axis")
    if begin is not None:
        return begin % rank if rank else 0
    x_shape = call.in_shape(0)
    if len(call.output_shapes) > 1 and len(call.output_shapes[1]) == rank:
        ones = [a for a, (i, o) in enumerate(zip(x_shape, call.output_shapes[1])) if o == 1 and i != 1]
        if ones and ones == list(range(ones[0], rank)):
            return ones[0]
    if params is not None and params < len(call.input_shapes) and call.input_shapes[params] is not None:
        return rank - len(call.in_shape(params))
    raise Unsupported(f"{call.type} {call.name}: no begin_norm_axis and no gamma to infer it from")


def _affine(call: OpCall, y: np.ndarray, gamma: int, beta: int | None) -> np.ndarray:
    if call.has(gamma):
        y = y * call.inputs[gamma]
    if beta is not None and call.has(beta):
        y = y + call.inputs[beta]
    return y


def _layer_norm(call: OpCall, eps_default: float, gamma: int, beta: int, rstd_out: bool) -> list[np.ndarray]:
    x = call.x(0)
    axes = tuple(range(_norm_start(call, gamma), x.ndim))
    eps = call.float_attr("epsilon", eps_default)
    mean = np.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = np.mean(d * d, axis=axes, keepdims=True)
    rstd = call.const(1.0) / np.sqrt(var + eps)
    y = _affine(call, d * rstd, gamma, beta)
    return [y, mean, rstd if rstd_out else var]


def _layer_norm_keeps_rows(gamma: int):
    return lambda call: _norm_start(call, gamma) >= 1


@semantics("LayerNorm", rows_independent=_layer_norm_keeps_rows(1))
def layer_norm(call: OpCall) -> list[np.ndarray]:
    """``y = gamma (x - mu) / sqrt(v + eps) + beta`` over axes ``[begin_norm_axis, rank)``;
    outputs ``(y, mean, variance)``; GE's default epsilon is 1e-7."""
    return _layer_norm(call, 1e-7, 1, 2, rstd_out=False)


@semantics("LayerNormV3", rows_independent=_layer_norm_keeps_rows(1))
def layer_norm_v3(call: OpCall) -> list[np.ndarray]:
    """As LayerNorm with outputs ``(y, mean, rstd)``, epsilon 1e-5 by default."""
    return _layer_norm(call, 1e-5, 1, 2, rstd_out=True)


@semantics("LayerNormV4")
def layer_norm_v4(call: OpCall) -> list[np.ndarray]:
    """Inputs ``(x, normalized_shape, gamma, beta)``: the last ``len(normalized_shape)``
    dims (from gamma's rank when the shape has no value); outputs ``(y, mean, rstd)``."""
    shape = call.ints("normalized_shape", 1)
    if shape is not None:
        call.attrs = {**call.attrs, "begin_norm_axis": len(call.in_shape(0)) - len(shape)}
    return _layer_norm(call, 1e-5, 2, 3, rstd_out=True)


@semantics("RmsNorm", rows_independent=lambda call: len(call.in_shape(1)) < len(call.in_shape(0)))
def rms_norm(call: OpCall) -> list[np.ndarray]:
    """``rstd = 1 / sqrt(mean(x^2) + eps)`` over gamma's last dims, ``y = (x rstd) gamma``;
    outputs ``(y, rstd)``, epsilon 1e-6 by default."""
    x = call.x(0)
    k = len(call.in_shape(1))
    axes = tuple(range(x.ndim - k, x.ndim))
    eps = call.float_attr("epsilon", 1e-6)
    rstd = call.const(1.0) / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    return [(x * rstd) * call.x(1), rstd]


@semantics("GroupNorm")
def group_norm(call: OpCall) -> list[np.ndarray]:
    """``x`` (N, C, ...) normalised per (sample, group of ``C / num_groups`` channels), then
    ``gamma`` / ``beta`` per channel; outputs ``(y, mean, rstd)``, epsilon 1e-5 by default."""
    x = call.x(0)
    groups = call.int_attr("num_groups")
    if groups is None:
        raise Unsupported(f"GroupNorm {call.name}: attribute 'num_groups' is not in the graph")
    n, c = x.shape[0], x.shape[1]
    g = x.reshape(n, groups, -1)
    mean = np.mean(g, axis=2, keepdims=True)
    d = g - mean
    rstd = call.const(1.0) / np.sqrt(np.mean(d * d, axis=2, keepdims=True) + call.float_attr("epsilon", 1e-5))
    y = (d * rstd).reshape(x.shape)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    if call.has(1):
        y = y * call.inputs[1].reshape(per_channel)
    if call.has(2):
        y = y + call.inputs[2].reshape(per_channel)
    return [y, mean.reshape(n, groups), rstd.reshape(n, groups)]


def _channel_axis(call: OpCall, channels: int) -> int:
    """The channel axis of a batch norm input: ``data_format`` if set, else the input's
    layout, else axis 1 when its size matches the per-channel parameters (torch's layout)."""
    x_shape = call.in_shape(0)
    fmt = call.attrs.get("data_format") or (call.input_layouts[0] if call.input_layouts else None)
    if fmt in ("NHWC", "NDHWC"):
        return len(x_shape) - 1
    if fmt in ("NCHW", "NCDHW") or (len(x_shape) >= 2 and x_shape[1] == channels):
        return 1
    raise Unsupported(f"{call.type} {call.name}: cannot tell the channel axis of {x_shape}")


def _batch_norm(call: OpCall, eps_default: float, affine_form: bool) -> list[np.ndarray]:
    x, scale, offset, mean, var = (call.x(k) for k in range(5))
    axis = _channel_axis(call, scale.size)
    shape = [1] * x.ndim
    shape[axis] = -1
    scale, offset, mean, var = (v.reshape(shape) for v in (scale, offset, mean, var))
    eps = call.float_attr("epsilon", eps_default)
    if affine_form:
        s = scale / np.sqrt(var + eps)
        y = x * s + (offset - s * mean)
    else:
        y = scale * (x - mean) / np.sqrt(var + eps) + offset
    outs = [y]
    for i in range(1, len(call.output_shapes)):  # batch_mean / batch_variance / reserve spaces
        stat = (mean, var)[(i - 1) % 2].reshape(-1)
        want = call.output_shapes[i]
        outs.append(stat.reshape(want) if stat.size == int(np.prod(want)) else np.zeros(want, x.dtype))
    return outs


@semantics("BatchNorm")
def batch_norm(call: OpCall) -> list[np.ndarray]:
    """Inference (``is_training`` false): ``y = scale (x - mean) / sqrt(variance + eps) + offset``
    per channel; epsilon 1e-4 by default. GE's default is_training is true, but a graph of
    an inference model sets it false and capture writes it; only an explicit true (batch
    statistics) is unsupported."""
    if call.attrs.get("is_training") is True:
        raise Unsupported(f"BatchNorm {call.name}: is_training=true (batch statistics) is not replayed")
    return _batch_norm(call, 1e-4, affine_form=False)


@semantics("BNInfer")
def bn_infer(call: OpCall) -> list[np.ndarray]:
    """The affine form ``s = scale / sqrt(var + eps); y = x s + (offset - s mean)``."""
    return _batch_norm(call, 1e-4, affine_form=True)


@semantics("BatchNormV3")
def batch_norm_v3(call: OpCall) -> list[np.ndarray]:
    """Inference (``is_training`` false), epsilon 1e-5 by default."""
    if call.attrs.get("is_training") is True:
        raise Unsupported(f"BatchNormV3 {call.name}: is_training=true (batch statistics) is not replayed")
    return _batch_norm(call, 1e-5, affine_form=False)
