"""The fusion mapping: each fused op of the fusion-on graph with the original ops it replaced,
its outputs mapped to the original outputs they stand for, and its inputs traced to theirs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .ge_decode import InputRef, OpInfo, TensorDesc
from .ge_types import FUSED_TYPES, is_data_source
from .graph import GeModel

if TYPE_CHECKING:
    import networkx as nx

#: The op attribute listing the original (pre-fusion) ops merged into an op.
ORIGINAL_OP_NAMES = "_datadump_original_op_names"


@dataclass(frozen=True, slots=True)
class OutputMap:
    """Output ``index`` of a fused op and the original output it replaces.

    ``origin_op`` / ``origin_index`` come from the output desc attributes
    ``_datadump_origin_name`` / ``_datadump_origin_output_index``; ``None`` when absent (the
    caller reports ``NO_MAPPING``). ``desc`` is the fused op's output description.
    """

    index: int
    origin_op: str | None
    origin_index: int | None
    desc: TensorDesc


@dataclass(frozen=True, slots=True)
class FusedInput:
    """Data input ``index`` of a fused op, traced to the original output it corresponds to.

    ``src_op`` / ``src_index`` / ``src_type`` name the producer in the fusion-on graph
    (``src_type`` is ``None`` when the producer is not in the file). ``origin_op`` /
    ``origin_index`` name the output to compare with in the fusion-off graph: the producer
    itself for a plain op, the mapped origin for a fused producer (followed through chains
    of fused producers), ``None`` when a fused producer's output has no mapping. ``desc`` is
    the fused op's input description, ``None`` when the op has none for this input.
    """

    index: int
    src_op: str
    src_index: int
    src_type: str | None
    origin_op: str | None
    origin_index: int | None
    desc: TensorDesc | None


@dataclass(frozen=True, slots=True)
class FusedOp:
    """A fused op (:func:`is_fused`) with its mapping to the original ops.

    ``original_op_names`` / ``original_op_types`` are the op attributes
    ``_datadump_original_op_names`` / ``_datadump_original_op_types`` (empty names dropped).
    ``inputs`` lists connected data inputs only; an unconnected optional input has no data.
    ``same_name`` marks an op fusion left alone, viewed as standing for its namesake in the
    other run (:func:`fused_op`).
    """

    name: str
    type: str
    graph: str
    outputs: list[OutputMap]
    original_op_names: list[str]
    original_op_types: list[str]
    inputs: list[FusedInput]
    same_name: bool = False


def output_origin(desc: TensorDesc) -> tuple[str | None, int | None]:
    """``(_datadump_origin_name, _datadump_origin_output_index)`` of an output desc.

    Each is ``None`` when its attribute is absent or invalid (an empty name, an index that is not
    a non-negative integer); :func:`origin_problem` says which.
    """
    name = desc.attrs.get("_datadump_origin_name")
    index = desc.attrs.get("_datadump_origin_output_index")
    return (
        name if isinstance(name, str) and name else None,
        index if isinstance(index, int) and not isinstance(index, bool) and index >= 0 else None,
    )


def origin_problem(desc: TensorDesc | None) -> str:
    """What is wrong with the origin mapping of an output desc that :func:`output_origin` could
    not read: which attribute is absent, or the value that is not an origin."""
    attrs = desc.attrs if desc is not None else {}
    problems = []
    for key, valid in (
        ("_datadump_origin_name", "an op name"),
        ("_datadump_origin_output_index", "an output number (0, 1, ...)"),
    ):
        value = attrs.get(key)
        if value is None:
            problems.append(f"no {key}")
        elif output_origin(desc)[key.endswith("index")] is None:
            problems.append(f"{key} {value!r}, which is not {valid}")
    return "carries " + " and ".join(problems)


def original_op_names(op: OpInfo) -> list[str]:
    """The op's ``_datadump_original_op_names`` (empty names dropped; ``[]`` when absent)."""
    return _names(op.attrs.get(ORIGINAL_OP_NAMES))


def is_fused(op: OpInfo) -> bool:
    """True for a fused op: an autofuse op (:data:`FUSED_TYPES`), or any op whose
    ``_datadump_original_op_names`` names an op other than itself — FE and UB fusion results
    too, such as a ``Conv2D`` that absorbed its ``bn_*`` and ``scale_*`` ops."""
    return op.type in FUSED_TYPES or any(name != op.name for name in original_op_names(op))


def fused_type_counts(model: GeModel) -> dict[str, int]:
    """How many fused ops (:func:`is_fused`) of each type ``model`` has, most common first."""
    counts: dict[str, int] = {}
    for op in model.ops.values():
        if is_fused(op):
            counts[op.type] = counts.get(op.type, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _trace_origin(model: GeModel, ref: InputRef) -> tuple[str | None, int | None]:
    """The original output that output ``ref`` of the fusion-on graph stands for.

    A plain (or undefined) producer stands for itself. A fused producer stands for the
    origin of that output, followed again while the origin is itself a fused op of
    ``model``. ``(None, None)`` when a mapping along the way is missing or loops.
    """
    seen: set[str] = set()
    name: str | None = ref.op
    index: int | None = ref.index
    while name in model.ops and is_fused(model.ops[name]):
        descs = model.ops[name].output_desc
        if name in seen or index is None or not 0 <= index < len(descs):
            return None, None
        seen.add(name)
        name, index = output_origin(descs[index])
        if name is None or index is None:
            return None, None
    return name, index


def _names(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def fused_op(model: GeModel, name: str, *, same_name: bool = False) -> FusedOp:
    """The :class:`FusedOp` view of op ``name`` (a fused op of ``model``, :func:`is_fused`).

    ``same_name`` views an op fusion did not touch the same way: output ``i`` stands for
    output ``i`` of the op of the same name in the other run, and it lists itself as its
    original op.
    """
    op = model.ops[name]
    if same_name:
        outputs = [OutputMap(i, op.name, i, desc) for i, desc in enumerate(op.output_desc)]
    else:
        outputs = [OutputMap(i, *output_origin(desc), desc) for i, desc in enumerate(op.output_desc)]
    inputs = []
    for k, ref in enumerate(op.inputs):
        if ref is None:
            continue
        producer = model.ops.get(ref.op)
        origin_op, origin_index = _trace_origin(model, ref)
        inputs.append(
            FusedInput(
                index=k,
                src_op=ref.op,
                src_index=ref.index,
                src_type=producer.type if producer else None,
                origin_op=origin_op,
                origin_index=origin_index,
                desc=op.input_desc[k] if k < len(op.input_desc) else None,
            )
        )
    return FusedOp(
        name=op.name,
        type=op.type,
        graph=op.graph,
        outputs=outputs,
        original_op_names=[op.name] if same_name else original_op_names(op),
        original_op_types=[op.type] if same_name else _names(op.attrs.get("_datadump_original_op_types")),
        inputs=inputs,
        same_name=same_name,
    )


def fused_ops(model: GeModel, types: Iterable[str] | None = None) -> list[FusedOp]:
    """Every fused op of ``model`` (all graphs, :func:`is_fused`) in
    :meth:`GeModel.topological_order`; with ``types``, only fused ops of those op types."""
    return compared_ops(model, types=types)


#: Op types that compute nothing to compare: they collect graph outputs or pass control.
_NOTHING_TO_COMPARE = frozenset({"NetOutput", "End", "StreamActive", "Send", "Recv", "NoOp"})


def compared_ops(
    model: GeModel, other: GeModel | None = None, *, types: Iterable[str] | None = None, unfused: bool = False
) -> list[FusedOp]:
    """The ops of ``model`` a comparison walks, in :meth:`GeModel.topological_order`.

    Always its fused ops (:func:`fused_ops`, narrowed to ``types`` if given). With ``unfused``,
    also every op fusion left alone: not fused, defined under the same name in ``other`` (the
    fusion-off graph), and computing something (not a data source nor ``NetOutput`` and the
    like) — each viewed with ``same_name`` (see :func:`fused_op`), so that a divergence is seen
    travelling through the ops between fused ones.
    """
    wanted = None if types is None else frozenset(types)
    out = []
    for name in model.topological_order():
        op = model.ops[name]
        if is_fused(op):
            if wanted is None or op.type in wanted:
                out.append(fused_op(model, name))
        elif (
            unfused
            and other is not None
            and other.has_op(name)
            and op.output_desc
            and not is_data_source(op.type)
            and op.type not in _NOTHING_TO_COMPARE
        ):
            out.append(fused_op(model, name, same_name=True))
    return out


def original_subgraph(off_model: GeModel, names: Iterable[str]) -> nx.DiGraph:
    """The subgraph of the fusion-off graph induced by ``names`` (those it defines).

    Nodes keep ``type`` and ``graph``. Parallel edges are merged: an edge has ``kind="data"``
    if any data edge joins the pair (else ``"control"``) and ``ports``, the sorted list of
    ``(src_index, dst_index)`` of its data edges. Names the fusion-off graph does not define
    are left out; check them with :meth:`GeModel.has_op`.
    """
    import networkx  # here: only the inspector's subgraph view needs it (~0.1 s to import)

    present = [n for n in dict.fromkeys(names) if off_model.has_op(n)]
    inside = set(present)
    sub = networkx.DiGraph()
    for n in present:
        sub.add_node(n, type=off_model.ops[n].type, graph=off_model.ops[n].graph)
    for v in present:
        op = off_model.ops[v]
        for u in op.control_inputs:
            if u in inside and not sub.has_edge(u, v):
                sub.add_edge(u, v, kind="control", ports=[])
        for k, ref in enumerate(op.inputs):
            if ref is not None and ref.op in inside:
                if not sub.has_edge(ref.op, v):
                    sub.add_edge(ref.op, v, kind="control", ports=[])
                edge = sub.edges[ref.op, v]
                edge["kind"] = "data"
                edge["ports"] = sorted([*edge["ports"], (ref.index, k)])
    return sub
