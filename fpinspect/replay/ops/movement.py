"""Data movement (``ge_op_semantics.md`` §7): values are moved, never computed.

Shape parameters come from the op's const inputs when their values are known, else from
the attributes of the same name (the ``D`` variants; ``fpinspect capture``), else from the
output shape where that determines them (a reshape, a broadcast, a transpose whose dims all
differ in size); otherwise the op is unsupported with the reason.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from .base import OpCall, Unsupported, norm_axes, semantics


def _to_output_shape(call: OpCall) -> list[np.ndarray]:
    x = call.x(0)
    out = call.out_shape(0)
    if int(np.prod(out)) != x.size:
        raise Unsupported(f"{call.type} {call.name}: cannot reshape {x.shape} to {out}")
    return [x.reshape(out)]


semantics(
    "Reshape",
    "Flatten",
    "FlattenV2",
    "Squeeze",
    "SqueezeV2",
    "SqueezeV3",
    "Unsqueeze",
    "UnsqueezeV2",
    "UnsqueezeV3",
    "ExpandDims",
)(_to_output_shape)


@semantics("Transpose", "TransposeD")
def transpose(call: OpCall) -> list[np.ndarray]:
    """``np.transpose(x, perm)``; without perm, the only permutation that maps the input
    shape onto the output shape (ambiguous when dims of equal size move)."""
    x = call.x(0)
    perm = call.ints("perm", 1)
    if perm is None:
        out = call.out_shape(0)
        found = [p for p in permutations(range(x.ndim)) if tuple(x.shape[a] for a in p) == tuple(out)]
        if len(found) != 1:
            raise Unsupported(
                f"Transpose {call.name}: no perm in the graph and {x.shape} -> {out} "
                f"{'is not a transpose' if not found else f'allows {len(found)} perms'}"
            )
        perm = list(found[0])
    return [np.transpose(x, perm)]


@semantics("BroadcastTo", "BroadcastToD", "Expand")
def broadcast_to(call: OpCall) -> list[np.ndarray]:
    return [np.broadcast_to(call.x(0), call.out_shape(0))]


def _concat_axis(call: OpCall, parts: list[np.ndarray], attr_index: int | None) -> int:
    rank = parts[0].ndim
    given = call.ints("concat_dim", attr_index)
    if given is not None:
        return norm_axes(given, rank, f"{call.type} {call.name}")[0]
    out = call.out_shape(0)
    found = [
        a
        for a in range(rank)
        if sum(p.shape[a] for p in parts) == out[a]
        and all(p.shape[:a] + p.shape[a + 1 :] == tuple(out[:a]) + tuple(out[a + 1 :]) for p in parts)
    ]
    if len(found) != 1:
        raise Unsupported(
            f"{call.type} {call.name}: no concat_dim in the graph and the shapes "
            f"{'do not fit' if not found else 'fit several axes'}"
        )
    return found[0]


@semantics("ConcatD", "ConcatV2D")
def concat_d(call: OpCall) -> list[np.ndarray]:
    parts = [call.x(k) for k in range(len(call.inputs))]
    return [np.concatenate(parts, axis=_concat_axis(call, parts, None))]


@semantics("ConcatV2")
def concat_v2(call: OpCall) -> list[np.ndarray]:
    """Inputs ``(x_0 ... x_{N-1}, concat_dim)``."""
    n = call.int_attr("N", len(call.inputs) - 1)
    parts = [call.x(k) for k in range(n)]
    return [np.concatenate(parts, axis=_concat_axis(call, parts, n))]


@semantics("Concat")
def concat(call: OpCall) -> list[np.ndarray]:
    """Inputs ``(concat_dim, x_0 ... x_{N-1})``."""
    parts = [call.x(k) for k in range(1, len(call.inputs))]
    return [np.concatenate(parts, axis=_concat_axis(call, parts, 0))]


@semantics("Pack")
def pack(call: OpCall) -> list[np.ndarray]:
    """``np.stack(x, axis)``; ``axis`` 0 by default."""
    parts = [call.x(k) for k in range(len(call.inputs))]
    axis = call.int_attr("axis", 0)
    return [np.stack(parts, axis=axis)]


@semantics("Unpack")
def unpack(call: OpCall) -> list[np.ndarray]:
    x = call.x(0)
    axis = call.int_attr("axis", 0) % x.ndim
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


def _split_axis(call: OpCall, given: list[int] | None) -> int:
    x_shape = call.in_shape(len(call.inputs) - 1 if call.type == "Split" else 0)
    if given is not None:
        return norm_axes(given, len(x_shape), f"{call.type} {call.name}")[0]
    outs = call.output_shapes
    found = [
        a
        for a in range(len(x_shape))
        if sum(o[a] for o in outs) == x_shape[a]
        and all(tuple(o[:a]) + tuple(o[a + 1 :]) == x_shape[:a] + x_shape[a + 1 :] for o in outs)
    ]
    if len(found) != 1:
        raise Unsupported(
            f"{call.type} {call.name}: no split_dim in the graph and the output shapes "
            f"{'do not fit' if not found else 'fit several axes'}"
        )
    return found[0]


def _split_by_outputs(x: np.ndarray, axis: int, call: OpCall) -> list[np.ndarray]:
    """Cut ``x`` along ``axis`` into the sizes of the output shapes, in output order."""
    edges = np.cumsum([o[axis] for o in call.output_shapes])[:-1]
    return np.split(x, edges, axis=axis)


@semantics("Split")
def split(call: OpCall) -> list[np.ndarray]:
    """Inputs ``(split_dim, x)``: ``num_split`` equal parts."""
    x = call.x(1)
    return _split_by_outputs(x, _split_axis(call, call.ints("split_dim", 0)), call)


@semantics("SplitD", "SplitV", "SplitVD")
def split_v(call: OpCall) -> list[np.ndarray]:
    """``SplitV`` inputs ``(x, size_splits, split_dim)``; ``D`` variants as attributes. The
    sizes are those of the output shapes (which the graph always has)."""
    x = call.x(0)
    given = call.ints("split_dim", 2 if call.type == "SplitV" else None)
    return _split_by_outputs(x, _split_axis(call, given), call)


def _slice_spec(call: OpCall, x: np.ndarray, begin, end, strides) -> tuple:
    """TF strided-slice: ``begin`` / ``end`` / ``strides`` with the five bit masks."""
    begin_mask, end_mask = call.int_attr("begin_mask", 0), call.int_attr("end_mask", 0)
    ellipsis_mask, new_axis_mask = call.int_attr("ellipsis_mask", 0), call.int_attr("new_axis_mask", 0)
    shrink_mask = call.int_attr("shrink_axis_mask", 0)
    spec: list = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            spec.append(Ellipsis)
        elif new_axis_mask & bit:
            spec.append(None)
        elif shrink_mask & bit:
            spec.append(int(b))
        else:
            spec.append(
                slice(None if begin_mask & bit else int(b), None if end_mask & bit else int(e), int(s))
            )
    return tuple(spec)


def _whole_or_unsupported(call: OpCall, what: str) -> list[np.ndarray]:
    x = call.x(0)
    if tuple(x.shape) == tuple(call.out_shape(0)):
        return [x]
    raise Unsupported(
        f"{call.type} {call.name}: {what} not in the graph, and where {x.shape} -> "
        f"{call.out_shape(0)} starts cannot be told from shapes"
    )


@semantics("StridedSlice", "StridedSliceD")
def strided_slice(call: OpCall) -> list[np.ndarray]:
    """``x[begin:end:strides]`` per dim, TF masks; parameters as inputs 1-3 or attributes."""
    x = call.x(0)
    begin, end = call.ints("begin", 1), call.ints("end", 2)
    strides = call.ints("strides", 3)
    if begin is None or end is None:
        return _whole_or_unsupported(call, "begin / end are")
    strides = strides or [1] * len(begin)
    return [np.asarray(x[_slice_spec(call, x, begin, end, strides)]).reshape(call.out_shape(0))]


@semantics("StridedSliceV2", "StridedSliceV3")
def strided_slice_v2(call: OpCall) -> list[np.ndarray]:
    """ONNX-style: inputs ``(x, begin, end, axes, strides)``, scattered onto ``axes``."""
    x = call.x(0)
    begin, end = call.ints("begin", 1), call.ints("end", 2)
    if begin is None or end is None:
        return _whole_or_unsupported(call, "begin / end are")
    axes = call.ints("axes", 3) or list(range(len(begin)))
    strides = call.ints("strides", 4) or [1] * len(begin)
    spec = [slice(None)] * x.ndim
    for a, b, e, s in zip(axes, begin, end, strides):
        spec[a % x.ndim] = slice(b, e, s)
    return [np.asarray(x[tuple(spec)]).reshape(call.out_shape(0))]


@semantics("Slice", "SliceD")
def slice_op(call: OpCall) -> list[np.ndarray]:
    """``x[offsets : offsets + size]`` per dim; size -1 means to the end."""
    x = call.x(0)
    offsets, size = call.ints("offsets", 1), call.ints("size", 2)
    if offsets is None:
        return _whole_or_unsupported(call, "offsets are")
    size = size or list(call.out_shape(0))
    spec = tuple(slice(o, None if s == -1 else o + s) for o, s in zip(offsets, size))
    return [np.asarray(x[spec])]


def _gather_axis(call: OpCall, x_shape, idx_shape, k: int | None) -> int:
    given = call.ints("axis", k)
    if given is not None:
        return norm_axes(given, len(x_shape), f"{call.type} {call.name}")[0]
    out = tuple(call.out_shape(0))
    found = [
        a
        for a in range(len(x_shape))
        if tuple(x_shape[:a]) + tuple(idx_shape) + tuple(x_shape[a + 1 :]) == out
    ]
    if len(found) != 1:
        raise Unsupported(
            f"{call.type} {call.name}: no axis in the graph and the shapes "
            f"{'do not fit' if not found else 'fit several axes'}"
        )
    return found[0]


@semantics("GatherV2", "GatherV2D", "Gather")
def gather_v2(call: OpCall) -> list[np.ndarray]:
    """``np.take(x, indices, axis)`` (``batch_dims`` 0). The indices are a dumped tensor
    (or the attribute ``indices`` for a constant index); negative indices count from the end
    only with ``negative_index_support``."""
    x = call.x(0)
    if call.has(1):
        idx = np.asarray(call.inputs[1])
    elif "indices" in call.attrs:
        idx = np.asarray(call.attrs["indices"], dtype=np.int64)
    else:
        raise Unsupported(f"{call.type} {call.name}: the indices (input 1) have no value")
    if call.int_attr("batch_dims", 0):
        raise Unsupported(f"{call.type} {call.name}: batch_dims != 0 is not replayed")
    axis = (
        0
        if call.type == "Gather"
        else _gather_axis(call, x.shape, idx.shape, 2 if call.type == "GatherV2" else None)
    )
    if (idx < 0).any() and not call.attrs.get("negative_index_support", False):
        raise Unsupported(f"{call.type} {call.name}: negative indices without negative_index_support")
    return [np.take(x, idx.astype(np.int64), axis=axis)]
