"""What each ATen operator is to a fusing compiler: its GE type name and its fusion kind.

The kind decides partitioning (:mod:`.partition`):

* ``pointwise`` — elementwise maths (``Add``, ``Gelu``, inference ``BatchNorm``); fusable;
* ``reduction`` — reduces along an axis (``ReduceSum``, ``SoftmaxV2``, ``LayerNorm``); fusable,
  and it ends the pointwise part of a region (GE fuses reductions at a chain's tail);
* ``movement`` — shape and copy ops (``Reshape``, ``TransposeD``, ``ConcatD``); they join a
  region between fused ops but never make one on their own;
* ``opaque`` — cube and window ops (``MatMulV2``, ``Conv2D``, ``MaxPool``) that keep their own
  kernel, as GE's autofuse leaves them; ``cube`` marks the ones writing FRACTAL_NZ on Ascend.

The type here is the usual one; :mod:`.geops` refines it from the call's arguments
(``mul`` by a number is ``Muls``) and adds the attributes.
Operators not listed are classified by their ``torch.Tag`` (``pointwise``, ``reduction``)
and otherwise kept opaque, with a GE-style type made from their name; :mod:`.trace` keeps
every listed operator whole when it decomposes the exported graph, so the fusion-off run
calls one eager kernel per node.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .errors import CaptureError

POINTWISE, REDUCTION, MOVEMENT, OPAQUE = "pointwise", "reduction", "movement", "opaque"
#: Kinds a fusion region may contain.
FUSABLE = frozenset({POINTWISE, REDUCTION, MOVEMENT})


@dataclass(frozen=True)
class OpSpec:
    type: str  #: GE operator type, e.g. ``"SoftmaxV2"``
    kind: str  #: one of POINTWISE, REDUCTION, MOVEMENT, OPAQUE
    cube: bool = False  #: computed on the cube unit (matmul): FRACTAL_NZ output on Ascend


def _table(kind: str, names: str, cube: bool = False) -> dict[str, OpSpec]:
    """``"add:Add mul:Mul"`` -> ``{"add": OpSpec("Add", kind), ...}``."""
    pairs = (item.split(":") for item in names.split())
    return {aten: OpSpec(ge, kind, cube) for aten, ge in pairs}


#: ATen overload-packet name -> spec. GE names follow the operators torchair converts to.
OPS: dict[str, OpSpec] = {
    **_table(
        POINTWISE,
        """
        add:Add sub:Sub rsub:Sub mul:Mul div:RealDiv neg:Neg abs:Abs exp:Exp log:Log
        sqrt:Sqrt rsqrt:Rsqrt reciprocal:Reciprocal pow:Pow square:Square erf:Erf
        tanh:Tanh sigmoid:Sigmoid relu:Relu gelu:GeluV2 silu:Swish hardswish:HardSwish
        leaky_relu:LeakyRelu elu:Elu mish:Mish hardtanh:ClipByValue clamp:ClipByValue
        clamp_min:Maximum clamp_max:Minimum maximum:Maximum minimum:Minimum where:SelectV2
        sin:Sin cos:Cos _to_copy:Cast to:Cast _native_batch_norm_legit_no_training:BatchNorm
        batch_norm:BatchNorm
    """,
    ),
    **_table(
        REDUCTION,
        """
        sum:ReduceSumD mean:ReduceMeanD amax:ReduceMaxD amin:ReduceMinD prod:ReduceProdD
        var:ReduceVar var_mean:ReduceVarMean softmax:SoftmaxV2 _softmax:SoftmaxV2
        log_softmax:LogSoftmaxV2 _log_softmax:LogSoftmaxV2 layer_norm:LayerNorm
        native_layer_norm:LayerNorm group_norm:GroupNorm native_group_norm:GroupNorm
        rms_norm:RmsNorm
    """,
    ),
    **_table(
        MOVEMENT,
        """
        view:Reshape reshape:Reshape _unsafe_view:Reshape flatten:Reshape unflatten:Reshape
        permute:TransposeD transpose:TransposeD t:TransposeD unsqueeze:Unsqueeze squeeze:Squeeze
        expand:BroadcastToD clone:Identity alias:Identity contiguous:Identity
        slice:StridedSliceD select:StridedSliceD cat:ConcatD stack:Pack split:SplitVD
        split_with_sizes:SplitVD chunk:SplitVD unbind:Unpack
    """,
    ),
    **_table(
        OPAQUE,
        """
        linear:MatMulV2 mm:MatMulV2 addmm:MatMulV2 matmul:BatchMatMulV2 bmm:BatchMatMulV2
        baddbmm:BatchMatMulV2
    """,
        cube=True,
    ),
    **_table(
        OPAQUE,
        """
        conv1d:Conv1D conv2d:Conv2D conv3d:Conv3D convolution:Conv2D
        max_pool2d:MaxPool avg_pool2d:AvgPool adaptive_avg_pool2d:AdaptiveAvgPool2d
        adaptive_max_pool2d:AdaptiveMaxPool2d embedding:GatherV2D
        scaled_dot_product_attention:FlashAttentionScore
    """,
    ),
}

#: Dropout in inference mode is the identity; in training mode it draws random numbers.
_DROPOUTS = frozenset({"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"})


def packet_name(target) -> str:
    """``torch.ops.aten.softmax.int`` -> ``"softmax"``."""
    return target.overloadpacket.__name__


def is_random(target, args: tuple, kwargs: dict | None = None) -> bool:
    """True if calling ``target`` draws random numbers (two runs could not be compared).

    Operators tagged ``nondeterministic_seeded`` that only draw for dropout
    (``scaled_dot_product_attention`` and its kernels) are random only when their
    ``dropout_p`` is not 0, as it is in eval mode.
    """
    if packet_name(target) in _DROPOUTS:
        return len(args) > 2 and bool(args[2])  # (input, p, train)
    if torch.Tag.nondeterministic_seeded not in target.tags:
        return False
    names = [a.name for a in target._schema.arguments]
    if "dropout_p" not in names:
        return True
    k = names.index("dropout_p")
    default = target._schema.arguments[k].default_value
    p = args[k] if k < len(args) else (kwargs or {}).get("dropout_p", default)
    return not isinstance(p, (int, float)) or p != 0


def spec_for(target) -> OpSpec:
    """The :class:`OpSpec` of an ATen ``OpOverload``."""
    name = packet_name(target)
    if name in OPS:
        return OPS[name]
    if name in _DROPOUTS:
        return OpSpec("Dropout", POINTWISE)
    ge_type = "".join(part.capitalize() for part in name.strip("_").split("_"))
    if torch.Tag.pointwise in target.tags:
        return OpSpec(ge_type, POINTWISE)
    if torch.Tag.reduction in target.tags:
        return OpSpec(ge_type, REDUCTION)
    return OpSpec(ge_type, OPAQUE)


def check_supported(target, args: tuple, kwargs: dict | None = None) -> None:
    """Raise :class:`CaptureError` for an operator whose two runs could not be compared."""
    if not isinstance(target, torch._ops.OpOverload):
        raise CaptureError(f"the traced graph calls {target!r}, which is not an ATen operator")
    if is_random(target, args, kwargs):
        raise CaptureError(
            f"operator {target} draws random numbers, so the fusion-on and fusion-off runs "
            "would differ by chance; capture the model in eval mode without random ops"
        )
