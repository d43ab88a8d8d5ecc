"""Every graph fpinspect reads, as Model Explorer's graphs (its ``graph_builder`` classes).

A GE graph file (atc's JSON, ``ge_proto_*.txt``, ``capture``'s ``Build.json``), read by
:func:`~fpinspect.dumps.formats.graph.load_graph`, is one :class:`GraphCollection`, one Model Explorer
graph per GE graph (the root and each subgraph). A node is an op: its id the op's name (the key
of the comparison's node data), its label the op type (so Model Explorer's default of hiding
``Const`` nodes applies), its namespace the op's scope. Its attributes, each output's and input's
shape, dtype and storage format, and the data and control edges GE records come along. A fused op
lists the original ops it replaced; where the fusion-off graph is converted with its fusion-on
twin, each original op names the fused op that replaced it.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from model_explorer.graph_builder import (
    Graph,
    GraphCollection,
    GraphNode,
    IncomingEdge,
    KeyValue,
    MetadataItem,
)

from ..dumps.formats.fusion import ORIGINAL_OP_NAMES, is_fused, original_op_names, output_origin
from ..dumps.formats.ge_decode import OpInfo, TensorDesc
from ..dumps.formats.ge_types import numpy_dtype_name
from ..dumps.formats.graph import GeModel, load_graph
from ..dumps.runs.runtree import graph_files
from ..dumps.runs.sources import swap_side

#: The longest attribute value shown whole; a longer one (a Const's weights) is cut there.
LONGEST_VALUE = 200
#: The attributes shown as the fusion mapping instead of as they are.
_MAPPING_ATTRS = frozenset({ORIGINAL_OP_NAMES, "_datadump_original_op_types"})
#: The input id of control edges: after every data input (Model Explorer has no edge kinds).
CONTROL_TAG = "control"
_SCOPE_SEPARATORS = re.compile(r"[/.]")


def scope(name: str) -> str:
    """The namespace of op ``name``: its scope, the part before the last ``/`` (GE's scoped
    names, ``bert/encoder/layer_0/MatMul``; ``capture`` writes the module path there,
    ``mlp.fc1/linear``), each ``/`` or ``.`` a level (``mlp/fc1``); ``""`` when it has none."""
    head, sep, _ = name.rpartition("/")
    return "/".join(p for p in _SCOPE_SEPARATORS.split(head) if p) if sep else ""


def fused_into(model: GeModel) -> dict[str, str]:
    """Each original op named by a fused op of the fusion-on graph ``model`` -> that fused op."""
    return {
        original: op.name
        for op in model.ops.values()
        if is_fused(op)
        for original in original_op_names(op)
        if original != op.name
    }


def graphs_of(model: GeModel, replaced_by: Mapping[str, str] | None = None) -> list[Graph]:
    """Model Explorer's graphs of ``model``, one per GE graph in file order (root first).
    ``replaced_by`` (:func:`fused_into` of the fusion-on twin) adds to each original op the fused
    op that replaced it."""
    replaced_by = replaced_by or {}
    nodes: dict[str, list[GraphNode]] = {g: [] for g in model.graphs}
    for op in model.ops.values():
        nodes[op.graph].append(_node(op, replaced_by.get(op.name)))
    graphs = []
    for name, members in nodes.items():
        if not members:
            continue
        defined = {n.id for n in members}
        # a name referenced but not defined in this graph still gets a node: no edge is dropped
        for src in dict.fromkeys(e.sourceNodeId for n in members for e in n.incomingEdges):
            if src not in defined:
                members.append(_elsewhere(src, model))
        graphs.append(
            Graph(
                id=name,
                nodes=members,
                groupNodeAttributes={"": {"file": model.path, "graph": name, "ops": str(len(defined))}},
            )
        )
    return graphs


def _node(op: OpInfo, replaced_by: str | None) -> GraphNode:
    attrs = []
    if is_fused(op):
        attrs.append(KeyValue("original ops", ", ".join(original_op_names(op))))
        types = op.attrs.get("_datadump_original_op_types")
        if isinstance(types, list):
            attrs.append(KeyValue("original types", ", ".join(map(str, types))))
    if replaced_by is not None:
        attrs.append(KeyValue("fused into", replaced_by))
    attrs.extend(KeyValue(k, _shown(v)) for k, v in op.attrs.items() if k not in _MAPPING_ATTRS)
    edges = [
        IncomingEdge(ref.op, str(ref.index), str(k)) for k, ref in enumerate(op.inputs) if ref is not None
    ]
    inputs = [
        MetadataItem(str(k), _desc_attrs(desc)) for k, desc in enumerate(op.input_desc[: len(op.inputs)])
    ]
    for j, src in enumerate(op.control_inputs, start=len(op.inputs)):
        edges.append(IncomingEdge(src, "-1", str(j)))
        inputs.append(MetadataItem(str(j), [KeyValue("__tensor_tag", CONTROL_TAG)]))
    outputs = []
    for i, desc in enumerate(op.output_desc):
        items = [KeyValue("tensor_name", f"{op.name}:{i}"), *_desc_attrs(desc)]
        origin, index = output_origin(desc)
        if origin is not None and origin != op.name:
            items.append(KeyValue("stands for", f"{origin}:{index if index is not None else '?'}"))
        outputs.append(MetadataItem(str(i), items))
    return GraphNode(
        id=op.name,
        label=op.type or "?",
        namespace=scope(op.name),
        attrs=attrs,
        incomingEdges=edges,
        outputsMetadata=outputs,
        inputsMetadata=inputs,
    )


def _elsewhere(name: str, model: GeModel) -> GraphNode:
    """The node of a name an edge comes from that this graph does not define."""
    where = model.ops[name].graph if name in model.ops else None
    note = f"defined in graph {where}" if where else "referenced, but not defined in the file"
    return GraphNode(id=name, label="(elsewhere)" if where else "(undefined)", attrs=[KeyValue("note", note)])


def _desc_attrs(desc: TensorDesc) -> list[KeyValue]:
    """A tensor's shape (``float16[2,64]``, the key Model Explorer labels edges with), GE dtype,
    storage format and, where GE records them, its original shape and format."""
    dims = ",".join(map(str, desc.shape))
    items = [KeyValue("shape", f"{numpy_dtype_name(desc.dtype) or desc.dtype or '?'}[{dims}]")]
    if desc.dtype is not None:
        items.append(KeyValue("dtype", desc.dtype))
    if desc.layout is not None:
        items.append(KeyValue("format", desc.full_layout))
    if desc.origin_shape is not None and desc.origin_shape != desc.shape:
        items.append(KeyValue("origin_shape", f"[{','.join(map(str, desc.origin_shape))}]"))
    if desc.origin_format is not None and desc.origin_format != desc.layout:
        items.append(KeyValue("origin_format", desc.origin_format))
    return items


def _shown(value: Any) -> str:
    """An attribute value as text, cut at :data:`LONGEST_VALUE` characters."""
    if isinstance(value, TensorDesc):
        text = _desc_attrs(value)[0].value
    elif isinstance(value, str):
        text = value
    else:
        text = str(value)
    if len(text) > LONGEST_VALUE:
        return f"{text[:LONGEST_VALUE]}… ({len(text)} characters)"
    return text


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a graph is converted: its hundreds of thousands of
    small objects, all alive until the end, would each be rescanned by every full collection
    (benchmarks/README.md measures both)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def collection(model: GeModel, label: str, replaced_by: Mapping[str, str] | None = None) -> GraphCollection:
    """``model`` as one collection named ``label``."""
    return GraphCollection(label=label, graphs=graphs_of(model, replaced_by))


def collections_of(path: str | os.PathLike) -> list[GraphCollection]:
    """The graphs at ``path``: a graph file (one collection, labelled ``""``: Model Explorer
    names it after the file), or a folder: each graph file under it
    (:func:`~fpinspect.dumps.runs.runtree.graph_files`; in a run folder, under its ``dumpgraph_*``
    folders only, beside which ``capture`` writes other JSON), labelled by its path in the folder. A
    fusion-off graph whose fusion-on twin is there too (``…af_open…`` -> ``…af_close…``, as in a
    run folder) names the fused op that replaced each original op. Raises
    :class:`~fpinspect.dumps.errors.InputError` for a file that is not a graph."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return [collection(load_graph(path), "")]
    folders = sorted(
        os.path.join(path, d)
        for d in os.listdir(path)
        if d.startswith("dumpgraph") and os.path.isdir(os.path.join(path, d))
    )
    files = [f for d in folders for f in graph_files(d)] if folders else graph_files(path)
    twins = {str(swap_side(f)): f for f in files if swap_side(f) is not None}
    models = {f: load_graph(f) for f in files}
    return [
        collection(
            model,
            os.path.relpath(f, path),
            fused_into(models[twins[f]]) if f in twins and twins[f] in models else None,
        )
        for f, model in models.items()
    ]
