"""Split a traced graph into fusion regions the way a fusing compiler does.

Rules (those of GE's autofuse with reduce fusion on, and of Inductor's scheduler in spirit):

* a region grows along producer -> consumer edges, in execution order;
* pointwise and movement ops join a producer's region while it holds no reduction yet;
  reductions join any producer's region, so a region is a pointwise chain with trailing
  reductions (``Add`` + ``LayerNorm``, ``Mul`` + ``SoftmaxV2``);
* opaque ops (matmul, conv, pooling) and data / const ops never join: they stay plain ops;
* joining must not create a cycle: no other input of the op may depend on the region;
* a region without a pointwise or reduction op (only reshapes) is dissolved into plain ops.

A region's inputs are the tensors its members read from outside; its outputs are the
member tensors read outside it or returned by the model, each standing for the original
op that produced it (``_datadump_origin_name``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from .optable import FUSABLE, MOVEMENT, REDUCTION
from .trace import Op, TracedGraph, ValueRef


@dataclass(eq=False)
class Region:
    """One fusion region: ``members`` in execution order. Compares and hashes by identity."""

    index: int
    members: list[Op] = field(default_factory=list)
    inputs: list[ValueRef] = field(default_factory=list)
    outputs: list[ValueRef] = field(default_factory=list)

    @property
    def has_reduction(self) -> bool:
        return any(op.kind == REDUCTION for op in self.members)

    @property
    def member_types(self) -> list[str]:
        """Member types in order, each once (``["Mul", "SoftmaxV2"]``)."""
        return list(dict.fromkeys(op.type for op in self.members))


#: A unit of execution: a plain op, or a region run as one compiled kernel (or a few).
Unit = Op | Region


def _ancestors(graph: TracedGraph) -> tuple[dict[str, int], dict[str, int]]:
    """``(bit, ancestors)``: each op's bit, and the bits of all ops it transitively reads from.

    Bit sets as Python ints keep this linear in memory per op even for large graphs.
    """
    bit = {op.name: 1 << i for i, op in enumerate(graph.ops)}
    anc: dict[str, int] = {}
    for op in graph.ops:
        mine = 0
        for ref in op.inputs:
            mine |= bit[ref.op] | anc[ref.op]
        anc[op.name] = mine
    return bit, anc


def _can_join(region: Region, mask: int, op: Op, bit: dict[str, int], anc: dict[str, int]) -> bool:
    """Whether ``op`` may join ``region`` (whose members' bits are ``mask``)."""
    if region.has_reduction and op.kind != REDUCTION:
        return False
    # no input from outside may itself depend on the region, or the fused op would be in a cycle
    return all(bit[ref.op] & mask or not anc[ref.op] & mask for ref in op.inputs)


def partition(graph: TracedGraph) -> list[Unit]:
    """The graph as units in a valid execution order: plain ops and :class:`Region` s.

    Regions are numbered in execution order from 0 (the counter of their GE names).
    """
    bit, anc = _ancestors(graph)
    region_of: dict[str, Region] = {}
    masks: dict[Region, int] = {}
    for op in graph.ops:
        if op.kind not in FUSABLE:
            continue
        producers = dict.fromkeys(region_of[ref.op] for ref in op.inputs if ref.op in region_of)
        target = next((r for r in producers if _can_join(r, masks[r], op, bit, anc)), None)
        if target is None:
            target = Region(index=-1)
            masks[target] = 0
        target.members.append(op)
        masks[target] |= bit[op.name]
        region_of[op.name] = target
    for r in masks:
        if all(op.kind == MOVEMENT for op in r.members):
            for op in r.members:
                del region_of[op.name]
    regions = list(dict.fromkeys(region_of.values()))
    _connect(graph, regions)
    return _order(graph, region_of)


def _connect(graph: TracedGraph, regions: list[Region]) -> None:
    """Fill each region's inputs (first-read order) and outputs (production order)."""
    readers = graph.consumers()
    returned = set(graph.outputs)
    for r in regions:
        inside = {op.name for op in r.members}
        r.inputs = list(dict.fromkeys(ref for op in r.members for ref in op.inputs if ref.op not in inside))
        r.outputs = [
            ref
            for op in r.members
            for ref in op.refs()
            if ref in returned or any(user.name not in inside for user in readers.get(ref, []))
        ]


def _order(graph: TracedGraph, region_of: dict[str, Region]) -> list[Unit]:
    """Plain kernels and regions topologically sorted, ties broken by graph position;
    regions are numbered in that order."""
    position = {op.name: i for i, op in enumerate(graph.ops)}
    unit_of: dict[str, Unit] = {op.name: region_of.get(op.name, op) for op in graph.ops if not op.is_source}
    dag = nx.DiGraph()
    dag.add_nodes_from(dict.fromkeys(unit_of.values()))
    for op in graph.ops:
        for ref in op.inputs:
            src, dst = unit_of.get(ref.op), unit_of[op.name]
            if src is not None and src is not dst:
                dag.add_edge(src, dst)

    def first(unit: Unit) -> int:
        return position[unit.members[0].name if isinstance(unit, Region) else unit.name]

    ordered = list(nx.lexicographical_topological_sort(dag, key=first))
    for i, r in enumerate(u for u in ordered if isinstance(u, Region)):
        r.index = i
    return ordered
