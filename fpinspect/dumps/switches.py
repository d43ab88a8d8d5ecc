"""What turns a fusion off: for each fused op that introduced an error, the compiler switches that
would remove it, what else each switch touches, and where no switch can.

AutoFuse (``AUTOFUSE_FLAGS``, semicolon-separated ``--key=value``; CANN's AutoFuse options and
``pre_process_config.h`` of graph-autofusion) switches fusion per *kind* or per *op type*, never
per op:

* ``--autofuse_disable_pass=reduce,concat,slice,gather,transpose`` keeps ops of those extended
  kinds out of fused kernels (they are off by default; a fused op holding one means the run turned
  that kind on). The op's elementwise part may still fuse.
* ``--autofuse_enhance_precision_blacklist=TYPE,…|all`` stops the fp32 "precision enhancement"
  inside fused kernels for those (AscIR) op types, so they round as eager does. Sum, Mean and Prod
  cannot be listed: they are always computed in fp32.
* Pure elementwise fusion cannot be switched off (AutoFuse's precision document): only
  ``--enable_autofuse=false`` removes it, with every other fusion. Replay is then the evidence.

GE's graph and UB fusion passes (``--fusion_switch_file``) are named by pass; a dump graph does
not record which pass made an op, but atc's ``fusion_result.json`` lists the passes that took
effect, which are then the candidates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .errors import InputError
from .formats.fusion import FusedOp
from .formats.ge_types import FUSED_TYPES

#: The extended fusion kinds of ``--autofuse_disable_pass`` and the GE op types that make a fused
#: op of that kind (reductions also inside normalisations and softmax).
KINDS: dict[str, frozenset[str]] = {
    "reduce": frozenset(
        {
            "ReduceSum",
            "ReduceSumD",
            "ReduceMean",
            "ReduceMeanD",
            "ReduceMax",
            "ReduceMaxD",
            "ReduceMin",
            "ReduceMinD",
            "ReduceProd",
            "ReduceProdD",
            "ReduceAll",
            "ReduceAny",
            "LayerNorm",
            "LayerNormV3",
            "LayerNormV4",
            "RmsNorm",
            "SoftmaxV2",
            "LogSoftmaxV2",
            "Softmax",
            "LogSoftmax",
            "BNTrainingReduce",
        }
    ),  # fmt: skip
    "concat": frozenset({"Concat", "ConcatD", "ConcatV2", "ConcatV2D", "Pack"}),
    "slice": frozenset(
        {"Slice", "SliceD", "StridedSlice", "StridedSliceD", "Split", "SplitD", "SplitV", "SplitVD"}
    ),
    "gather": frozenset({"Gather", "GatherV2", "GatherV2D", "GatherNd", "GatherElements"}),
    "transpose": frozenset({"Transpose", "TransposeD"}),
}

#: GE op types computed by one AscIR op of the name the blacklist takes (``Muls`` is a Mul by a scalar).
ASCIR_TYPE: dict[str, str] = {
    **{t: t for t in ("Add", "Sub", "Mul", "Div", "Exp", "Log", "Sqrt", "Rsqrt", "Abs", "Neg", "Relu")},
    **{t: t for t in ("Tanh", "Sigmoid", "Cast", "Maximum", "Minimum", "Pow", "Erf", "Sign", "Reciprocal")},
    "Muls": "Mul",
    "Adds": "Add",
    "RealDiv": "Div",
    **{f"Reduce{t}{d}": t for t in ("Sum", "Mean", "Prod", "Max", "Min") for d in ("", "D")},
}
#: AscIR types the blacklist refuses: always computed in fp32.
ALWAYS_FP32 = frozenset({"Sum", "Mean", "Prod"})


@dataclass
class Switch:
    """One switch and what it does: ``setting`` is the text to use (a flag, a config line),
    ``removes`` what it does to the op, ``also`` the other fused ops of the graph it touches."""

    kind: str  #: "autofuse_disable_pass" | "autofuse_enhance_precision_blacklist" | "enable_autofuse" | "ge_fusion_switch"
    setting: str
    removes: str
    also: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"kind": self.kind, "setting": self.setting, "removes": self.removes, "also": list(self.also)}


@dataclass
class OpSwitches:
    """The switches of one fused op, and ``notes``: what no switch can do, and why."""

    op: str
    type: str
    original_types: list[str]
    switches: list[Switch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "op": self.op,
            "type": self.type,
            "original_types": list(self.original_types),
            "switches": [s.to_json() for s in self.switches],
            "notes": list(self.notes),
        }


def kinds_of(types) -> list[str]:
    """The extended fusion kinds among op ``types``, in :data:`KINDS` order."""
    present = set(types)
    return [kind for kind, members in KINDS.items() if present & members]


def autofuse_switches(op: FusedOp, fused: list[FusedOp]) -> OpSwitches:
    """The AutoFuse switches that remove fused op ``op`` or its fp32 enhancement; ``fused`` are
    every fused op of its graph (what else a switch touches)."""
    out = OpSwitches(op.name, op.type, list(op.original_op_types))
    others = [o for o in fused if o.name != op.name and o.type in FUSED_TYPES]
    types = list(dict.fromkeys(op.original_op_types))
    kinds = kinds_of(types)
    if kinds:
        out.switches.append(
            Switch(
                "autofuse_disable_pass",
                f"--autofuse_disable_pass={','.join(kinds)}",
                f"keeps its {'/'.join(kinds)} ops ({', '.join(t for t in types if any(t in KINDS[k] for k in kinds))}) "
                "out of fused kernels; its elementwise part may still fuse",
                [o.name for o in others if set(kinds_of(o.original_op_types)) & set(kinds)],
            )
        )
    direct = [ASCIR_TYPE[t] for t in types if t in ASCIR_TYPE]
    composite = [t for t in types if t not in ASCIR_TYPE]
    listed = [t for t in dict.fromkeys(direct) if t not in ALWAYS_FP32]
    if composite:
        # a normalisation or activation is lowered into several AscIR ops, which the graph does not name
        setting = "--autofuse_enhance_precision_blacklist=all"
        removes = (
            f"computes it without the fp32 enhancement, rounding as eager does; {', '.join(composite)} "
            f"{'is' if len(composite) == 1 else 'are'} lowered into several AscIR ops the graph does not "
            "name, so only 'all' is sure to reach them"
        )
        also = [o.name for o in others]
    else:
        setting = f"--autofuse_enhance_precision_blacklist={','.join(listed)}" if listed else ""
        removes = "computes these op types without the fp32 enhancement, rounding as eager does"
        also = [o.name for o in others if {ASCIR_TYPE.get(t) for t in o.original_op_types} & set(listed)]
    if setting:
        out.switches.append(Switch("autofuse_enhance_precision_blacklist", setting, removes, also))
    if not kinds:
        out.notes.append(
            "pure elementwise fusion cannot be switched off: only --enable_autofuse=false removes it, "
            "with every other fusion; the replay is the evidence"
        )
        out.switches.append(
            Switch(
                "enable_autofuse",
                "--enable_autofuse=false",
                "turns AutoFuse off for the whole graph (the fusion-off run's setting)",
                [o.name for o in others],
            )
        )
    return out


def ge_switches(op: FusedOp, passes: list[str] | None) -> OpSwitches:
    """GE's graph/UB fusion switches for a fused op that is not AutoFuse's: the passes that took
    effect in the build (``passes``, from ``fusion_result.json``) are the candidates."""
    out = OpSwitches(op.name, op.type, list(op.original_op_types))
    if op.type in FUSED_TYPES:
        out.notes.append(
            "an AutoFuse kernel, not a GE fusion pass's: its switches are AutoFuse's (--for autofuse)"
        )
        return out
    if not passes:
        out.notes.append(
            "the dump graph does not record which fusion pass made this op; give atc's "
            "fusion_result.json (--fusion-result) to list the passes that took effect"
        )
        return out
    out.notes.append(
        "the dump graph does not say which of these passes made this op: switch them off one at a time"
    )
    for name in passes:
        out.switches.append(Switch("ge_fusion_switch", f"{name}:off", f"switches off GE fusion pass {name}"))
    return out


def effective_passes(path: str) -> list[str]:
    """The fusion passes atc's ``fusion_result.json`` at ``path`` says took effect
    (``effect_times`` above 0), in file order. Raises :class:`InputError` for an unreadable or
    malformed file."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise InputError(path, "file does not exist", "FUSION_RESULT_ERROR") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError(
            path, f"is not a readable fusion_result.json ({exc})", "FUSION_RESULT_ERROR"
        ) from None
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, dict) and "effect_times" in value:
                    try:
                        if int(value["effect_times"]) > 0:
                            found.append(str(key))
                    except (TypeError, ValueError):
                        pass
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(doc)
    return list(dict.fromkeys(found))


def fusion_switch_file(ops: list[OpSwitches]) -> str:
    """The ``--fusion_switch_file`` text (one ``PassName:off`` a line) of every GE switch in ``ops``."""
    lines = [s.setting for o in ops for s in o.switches if s.kind == "ge_fusion_switch"]
    return "".join(f"{line}\n" for line in dict.fromkeys(lines))


def autofuse_flags(ops: list[OpSwitches]) -> str:
    """One ``AUTOFUSE_FLAGS`` value applying each op's first switch (the narrowest: its extended
    kinds, else its op types' enhancement, else AutoFuse off), the kinds and types merged."""
    kinds: list[str] = []
    types: list[str] = []
    off = False
    for o in ops:
        if not o.switches:
            continue
        first = o.switches[0]
        value = first.setting.partition("=")[2]
        if first.kind == "autofuse_disable_pass":
            kinds += value.split(",")
        elif first.kind == "autofuse_enhance_precision_blacklist":
            types += value.split(",")
        else:
            off = True
    if off:
        return "--enable_autofuse=false"
    flags = ["--enable_autofuse=true"]
    if kinds:
        flags.append(f"--autofuse_disable_pass={','.join(dict.fromkeys(kinds))}")
    if types:
        listed = "all" if "all" in types else ",".join(dict.fromkeys(types))
        flags.append(f"--autofuse_enhance_precision_blacklist={listed}")
    return ";".join(flags)
