"""How one exported ATen call becomes a GE op: its type, its operands in GE's order, and the
attributes GE gives it (``shared/reference/ge_op_semantics.md``).

A dump graph holds no constant values, so what the op semantics need must be written as
attributes. The conventions, each the form GE itself has after constant folding or the
form the replay reads:

* shape parameters the ATen call holds as Python values become the attributes of GE's
  ``D`` variants: ``StridedSliceD`` ``begin``/``end``/``strides`` (and the five masks),
  ``TransposeD`` ``perm``, ``ReduceSumD``/``ReduceMeanD``/``ReduceMaxD``/``ReduceMinD``
  ``axes`` + ``keep_dims``, ``ConcatD`` ``concat_dim`` + ``N``, ``SplitVD``
  ``size_splits``/``split_dim``/``num_split``, ``BroadcastToD`` ``shape``; axes are written
  non-negative;
* a Python scalar operand of ``mul`` / ``add`` / ``sub`` is ``Muls`` / ``Adds`` ``value``
  (float32, as GE stores it, and as ATen's opmath keeps the scalar: not rounded to fp16);
  ``pow``'s scalar exponent is the attribute ``exponent`` and a clamp's bounds are
  ``clip_value_min`` / ``clip_value_max``; any other scalar operand (``x / 3.0``, ``1 - x``)
  becomes a float32 ``Const`` input, whose value reaches the dumps as the consumer's input;
* ``x[i]`` (``select``) is ``StridedSliceD`` with ``shrink_axis_mask``;
* an optional weight left out (``LayerNorm(elementwise_affine=False)``) becomes a ``Const``
  of ones (scale) or zeros (offset), which computes what the ATen call computed;
* attribute defaults that differ from torch's are always written (``LeakyRelu``
  ``negative_slope``, every ``epsilon``).

Adding an operator is adding one entry to :data:`CONVERTERS`; operators without an entry
keep :mod:`.optable`'s type, read their tensor arguments in order, and have no attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import fx
from torch.fx.operator_schemas import normalize_function

from .optable import packet_name, spec_for

if TYPE_CHECKING:
    from .trace import TensorMeta

#: ``ge::DataType`` numbers (``types.h``; the sheet's §4) of the dtypes a Cast can target.
GE_DATATYPE = {
    torch.float32: 0,
    torch.float16: 1,
    torch.int8: 2,
    torch.int32: 3,
    torch.uint8: 4,
    torch.int16: 6,
    torch.uint16: 7,
    torch.uint32: 8,
    torch.int64: 9,
    torch.uint64: 10,
    torch.float64: 11,
    torch.bool: 12,
    torch.bfloat16: 27,
}

#: The five bit masks of ``StridedSlice`` / ``StridedSliceD``, written even when 0, as GE does.
_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@dataclass(frozen=True)
class Scalar:
    """A constant operand that is not a tensor of the graph: it becomes a ``Const`` op
    called ``{op}/{role}`` holding ``value`` as a 0-d (or shaped) tensor."""

    role: str
    value: torch.Tensor


Operand = fx.Node | Scalar


@dataclass
class GeForm:
    type: str  #: GE op type
    operands: list[Operand]  #: GE's input order
    attrs: dict[str, Any] = field(default_factory=dict)


class Call:
    """One ATen call: its arguments by schema name (defaults filled in) and tensor metas."""

    def __init__(self, node: fx.Node, outputs: list[TensorMeta]):
        self.node = node
        self.outputs = outputs
        bound = normalize_function(node.target, node.args, node.kwargs, normalize_to_only_use_kwargs=True)
        self.args: dict[str, Any] = dict(bound.kwargs) if bound is not None else {}
        self.type = spec_for(node.target).type

    def __getitem__(self, name: str) -> Any:
        return self.args[name]

    def get(self, name: str, default: Any = None) -> Any:
        value = self.args.get(name, default)
        return default if value is None else value

    @property
    def x(self) -> fx.Node:
        """The first argument (``input`` / ``self`` in the schema)."""
        return next(iter(self.args.values()))

    @staticmethod
    def shape(node: fx.Node) -> tuple[int, ...]:
        return tuple(int(d) for d in node.meta["val"].shape)

    @property
    def rank(self) -> int:
        return len(self.shape(self.x))

    @property
    def device(self) -> torch.device:
        """Where the call runs: a ``Const`` made for it lives there too (a region compiled
        for CUDA is fed on CUDA)."""
        val = self.node.meta["val"]
        return (val[0] if isinstance(val, (tuple, list)) else val).device

    @property
    def out(self) -> TensorMeta:
        return self.outputs[0]

    def axis(self, dim: int, rank: int | None = None) -> int:
        """``dim`` in ``[0, rank)`` (the input's rank unless given)."""
        rank = self.rank if rank is None else rank
        return dim % rank if rank else 0

    def scalar(self, role: str, value: Any) -> Operand:
        """``value`` as an operand: a graph tensor stays one, a Python number becomes a
        float32 ``Const`` (the output's dtype for integer results)."""
        if isinstance(value, fx.Node):
            return value
        floating = self.out.dtype.is_floating_point or isinstance(value, float)
        dtype = torch.float32 if floating else self.out.dtype
        return Scalar(role, torch.tensor(value, dtype=dtype, device=self.device))

    def filled(self, role: str, node: fx.Node | None, shape: tuple[int, ...], fill: float) -> Operand:
        """An optional weight: the tensor when given, else a ``Const`` of ``fill``."""
        if node is not None:
            return node
        return Scalar(role, torch.full(shape, fill, dtype=self.x.meta["val"].dtype, device=self.device))


def default_form(call: Call) -> GeForm:
    """The table's type; every tensor argument an operand, in argument order."""
    readers: list[fx.Node] = []
    fx.node.map_arg((call.node.args, call.node.kwargs), readers.append)
    return GeForm(call.type, readers)


def _float(value: Any) -> float:
    return float(value)


# --------------------------------------------------------------------------- arithmetic


def _add(call: Call, sign: int = 1) -> GeForm:
    other, alpha = call["other"], call.get("alpha", 1)
    if not isinstance(other, fx.Node):
        return GeForm("Adds", [call.x], {"value": _float(sign * alpha * other)})
    if alpha == 1:
        return GeForm("Add" if sign == 1 else "Sub", [call.x, other])
    return GeForm("AxpyV2", [call.x, other, call.scalar("alpha", sign * alpha)])


def _rsub(call: Call) -> GeForm:
    """``other - alpha * input``."""
    other, alpha = call.scalar("other", call["other"]), call.get("alpha", 1)
    if alpha == 1:
        return GeForm("Sub", [other, call.x])
    return GeForm("AxpyV2", [other, call.x, call.scalar("alpha", -alpha)])


def _mul(call: Call) -> GeForm:
    other = call["other"]
    if not isinstance(other, fx.Node):
        return GeForm("Muls", [call.x], {"value": _float(other)})
    return GeForm("Mul", [call.x, other])


def _div(call: Call) -> GeForm:
    mode = call.get("rounding_mode")
    kind = {None: "RealDiv", "floor": "FloorDiv", "trunc": "TruncateDiv"}[mode]
    return GeForm(kind, [call.x, call.scalar("other", call["other"])])


def _pow(call: Call) -> GeForm:
    base, exponent = call.x, call["exponent"]
    if not isinstance(base, fx.Node):  # pow.Scalar: a number to a tensor power
        return GeForm("Pow", [call.scalar("x1", base), exponent])
    if isinstance(exponent, fx.Node):
        return GeForm("Pow", [base, exponent])
    return GeForm("Pow", [base], {"exponent": _float(exponent)})


def _clip(call: Call, low: Any, high: Any) -> GeForm:
    """``clamp``: both bounds as ClipByValue, one bound as Maximum / Minimum."""
    if low is not None and high is not None:
        if isinstance(low, fx.Node) or isinstance(high, fx.Node):
            return GeForm(
                "ClipByValue",
                [call.x, call.scalar("clip_value_min", low), call.scalar("clip_value_max", high)],
            )
        bounds = {"clip_value_min": _float(low), "clip_value_max": _float(high)}
        return GeForm("ClipByValue", [call.x], bounds)
    if low is not None:
        return GeForm("Maximum", [call.x, call.scalar("x2", low)])
    return GeForm("Minimum", [call.x, call.scalar("x2", high)])


def _where(call: Call) -> GeForm:
    operands = [call["condition"], call.scalar("then", call["input"]), call.scalar("else", call["other"])]
    return GeForm("SelectV2", operands)


def _cast(call: Call) -> GeForm:
    src, dst = call.x.meta["val"].dtype, call.out.dtype
    if src == dst:
        return GeForm("Identity", [call.x])
    return GeForm("Cast", [call.x], {"dst_type": GE_DATATYPE[dst]})


# --------------------------------------------------------------------------- activations


def _gelu(call: Call) -> GeForm:
    # GE's Gelu is the tanh form (its kernels); torch's exact gelu is GeluV2(approximate="none")
    if call.get("approximate", "none") == "tanh":
        return GeForm("Gelu", [call.x])
    return GeForm("GeluV2", [call.x], {"approximate": "none"})


def _attrs_only(**names: str) -> Callable[[Call], GeForm]:
    """A one-input op whose GE attributes are ATen arguments: ``ge_name="aten_name"``."""

    def convert(call: Call) -> GeForm:
        return GeForm(call.type, [call.x], {ge: _float(call[aten]) for ge, aten in names.items()})

    return convert


# --------------------------------------------------------------------------- normalisation


def _batch_norm(call: Call) -> GeForm:
    channels = (call.shape(call.x)[1],)
    operands = [
        call.x,
        call.filled("scale", call.get("weight"), channels, 1.0),
        call.filled("offset", call.get("bias"), channels, 0.0),
        call["running_mean"],
        call["running_var"],
    ]
    training = bool(call.get("training", False))
    return GeForm(
        "BatchNorm",
        operands,
        {"epsilon": _float(call["eps"]), "data_format": "NCHW", "is_training": training},
    )


def _layer_norm(call: Call) -> GeForm:
    params = tuple(call["normalized_shape"])
    begin = call.rank - len(params)
    operands = [
        call.x,
        call.filled("gamma", call.get("weight"), params, 1.0),
        call.filled("beta", call.get("bias"), params, 0.0),
    ]
    attrs = {"begin_norm_axis": begin, "begin_params_axis": begin, "epsilon": _float(call["eps"])}
    return GeForm("LayerNorm", operands, attrs)


def _rms_norm(call: Call) -> GeForm:
    params = tuple(call["normalized_shape"])
    eps = call.get("eps")
    if eps is None:  # ATen's default: the machine epsilon of the type it computes in
        dtype = call.x.meta["val"].dtype
        eps = torch.finfo(torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype).eps
    return GeForm(
        "RmsNorm", [call.x, call.filled("gamma", call.get("weight"), params, 1.0)], {"epsilon": _float(eps)}
    )


def _group_norm(call: Call) -> GeForm:
    channels = (call.shape(call.x)[1],)
    operands = [
        call.x,
        call.filled("gamma", call.get("weight"), channels, 1.0),
        call.filled("beta", call.get("bias"), channels, 0.0),
    ]
    groups = call["num_groups"] if "num_groups" in call.args else call["group"]
    return GeForm(
        "GroupNorm",
        operands,
        {
            "num_groups": int(groups),
            "epsilon": _float(call["eps"]),
            "data_format": "NCHW",
            "is_training": False,
        },
    )


# --------------------------------------------------------------------------- reductions


def _reduce(ge_type: str) -> Callable[[Call], GeForm]:
    """``ReduceXxxD(axes, keep_dims)``; no dims (or an empty list) reduces them all."""

    def convert(call: Call) -> GeForm:
        dims = call.get("dim")
        dims = [dims] if isinstance(dims, int) else list(dims or [])
        axes = sorted({call.axis(d) for d in dims}) if dims else list(range(call.rank))
        return GeForm(ge_type, [call.x], {"axes": axes, "keep_dims": bool(call.get("keepdim", False))})

    return convert


def _softmax(ge_type: str) -> Callable[[Call], GeForm]:
    def convert(call: Call) -> GeForm:
        attrs: dict[str, Any] = {"axes": [call.axis(call["dim"])]}
        if ge_type == "SoftmaxV2":
            half = call.x.meta["val"].dtype in (torch.float16, torch.bfloat16)
            attrs["half_to_float"] = half and call.out.dtype == torch.float32
        return GeForm(ge_type, [call.x], attrs)

    return convert


# --------------------------------------------------------------------------- data movement


def _transpose(call: Call) -> GeForm:
    perm = list(range(call.rank))
    if "dims" in call.args:  # permute
        perm = [call.axis(d) for d in call["dims"]]
    elif "dim0" in call.args:  # transpose.int
        a, b = call.axis(call["dim0"]), call.axis(call["dim1"])
        perm[a], perm[b] = perm[b], perm[a]
    else:  # t
        perm.reverse()
    return GeForm("TransposeD", [call.x], {"perm": perm})


def _unsqueeze(call: Call) -> GeForm:
    return GeForm("Unsqueeze", [call.x], {"axes": [call.axis(call["dim"], call.rank + 1)]})


def _squeeze(call: Call) -> GeForm:
    shape = call.shape(call.x)
    dims = call.get("dim", list(range(len(shape))))
    dims = [dims] if isinstance(dims, int) else list(dims)
    # torch leaves a listed dim that is not 1 alone; GE's Squeeze would reject it
    ones = sorted({call.axis(d) for d in dims if shape[call.axis(d)] == 1})
    return GeForm("Squeeze", [call.x], {"axis": ones})


def _broadcast(call: Call) -> GeForm:
    return GeForm("BroadcastToD", [call.x], {"shape": list(call.out.shape)})


def _strided_slice(call: Call, begin: list[int], end: list[int], shrink: int = 0) -> GeForm:
    attrs: dict[str, Any] = {"begin": begin, "end": end, "strides": [1] * len(begin)}
    attrs.update(dict.fromkeys(_MASKS, 0))
    attrs["shrink_axis_mask"] = shrink
    return GeForm("StridedSliceD", [call.x], attrs)


def _slice(call: Call) -> GeForm:
    """``x[..., start:end:step, ...]`` on one dim; the others taken whole."""
    shape = call.shape(call.x)
    dim = call.axis(call["dim"])
    start, stop, step = slice(call.get("start"), call.get("end"), call.get("step", 1)).indices(shape[dim])
    form = _strided_slice(call, [0] * len(shape), list(shape))
    form.attrs["begin"][dim], form.attrs["end"][dim], form.attrs["strides"][dim] = start, stop, step
    return form


def _select(call: Call) -> GeForm:
    """``x[..., i, ...]``: a one-element slice whose dim is shrunk away."""
    shape = call.shape(call.x)
    dim = call.axis(call["dim"])
    index = call["index"] % shape[dim]
    begin, end = [0] * len(shape), list(shape)
    begin[dim], end[dim] = index, index + 1
    return _strided_slice(call, begin, end, shrink=1 << dim)


def _concat(call: Call) -> GeForm:
    parts = list(call["tensors"])
    rank = len(call.shape(parts[0]))
    return GeForm("ConcatD", parts, {"concat_dim": call.axis(call.get("dim", 0), rank), "N": len(parts)})


def _stack(call: Call) -> GeForm:
    parts = list(call["tensors"])
    rank = len(call.shape(parts[0])) + 1
    return GeForm("Pack", parts, {"axis": call.axis(call.get("dim", 0), rank), "N": len(parts)})


def _split(call: Call) -> GeForm:
    dim = call.axis(call.get("dim", 0))
    sizes = [meta.shape[dim] for meta in call.outputs]
    return GeForm("SplitVD", [call.x], {"size_splits": sizes, "split_dim": dim, "num_split": len(sizes)})


def _unbind(call: Call) -> GeForm:
    return GeForm("Unpack", [call.x], {"num": len(call.outputs), "axis": call.axis(call.get("dim", 0))})


def _embedding(call: Call) -> GeForm:
    return GeForm("GatherV2D", [call["weight"], call["indices"]], {"axis": 0})


#: ATen overload-packet name -> its converter.
CONVERTERS: dict[str, Callable[[Call], GeForm]] = {
    "add": _add,
    "sub": lambda call: _add(call, -1),
    "rsub": _rsub,
    "mul": _mul,
    "div": _div,
    "pow": _pow,
    "clamp": lambda call: _clip(call, call.get("min"), call.get("max")),
    "hardtanh": lambda call: _clip(call, call.get("min_val", -1.0), call.get("max_val", 1.0)),
    "clamp_min": lambda call: _clip(call, call["min"], None),
    "clamp_max": lambda call: _clip(call, None, call["max"]),
    "where": _where,
    "_to_copy": _cast,
    "to": _cast,
    "gelu": _gelu,
    "silu": lambda call: GeForm("Swish", [call.x], {"scale": 1.0}),
    "leaky_relu": _attrs_only(negative_slope="negative_slope"),
    "elu": _attrs_only(alpha="alpha", scale="scale", input_scale="input_scale"),
    "_native_batch_norm_legit_no_training": _batch_norm,
    "batch_norm": _batch_norm,
    "layer_norm": _layer_norm,
    "native_layer_norm": _layer_norm,
    "rms_norm": _rms_norm,
    "group_norm": _group_norm,
    "native_group_norm": _group_norm,
    "sum": _reduce("ReduceSumD"),
    "mean": _reduce("ReduceMeanD"),
    "amax": _reduce("ReduceMaxD"),
    "amin": _reduce("ReduceMinD"),
    "prod": _reduce("ReduceProdD"),
    "softmax": _softmax("SoftmaxV2"),
    "_softmax": _softmax("SoftmaxV2"),
    "log_softmax": _softmax("LogSoftmaxV2"),
    "_log_softmax": _softmax("LogSoftmaxV2"),
    "permute": _transpose,
    "transpose": _transpose,
    "t": _transpose,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "expand": _broadcast,
    "slice": _slice,
    "select": _select,
    "cat": _concat,
    "stack": _stack,
    "split": _split,
    "split_with_sizes": _split,
    "chunk": _split,
    "unbind": _unbind,
    "embedding": _embedding,
}


def ge_form(node: fx.Node, outputs: list[TensorMeta]) -> GeForm:
    """The GE op ``node`` becomes (see the module docstring for the conventions)."""
    call = Call(node, outputs)
    convert = CONVERTERS.get(packet_name(node.target))
    return convert(call) if convert is not None and call.args else default_form(call)
