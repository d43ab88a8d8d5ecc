"""The fusion-off subgraph of one fused op: the original ops it replaced, with their edges.

The fused op records its originals in ``_datadump_original_op_names``; the fusion-off
graph holds those ops and how they connect. Edges between two originals are internal;
every other data input of an original is a *boundary* input of the subgraph: in the
fusion-on graph it is one of the fused op's inputs (matched through the origin of that
input), in the fusion-off graph the output of the original producer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..dumps.formats.fusion import FusedOp
from ..dumps.formats.ge_decode import OpInfo, TensorDesc
from ..dumps.formats.graph import GeModel

Key = tuple[str, int]  #: (op name, output index)


def logical_shape(desc: TensorDesc) -> tuple[int, ...]:
    """The shape users reason in: the origin shape when recorded, else the storage shape."""
    return tuple(desc.origin_shape) if desc.origin_shape is not None else tuple(desc.shape)


@dataclass(frozen=True)
class BoundaryInput:
    """A value the subgraph reads from outside: output ``index`` of ``producer`` (a
    fusion-off op), consumed as input ``consumer_index`` of original ``consumer`` (the
    first such use, whose input dump holds the value on the fusion-off side)."""

    producer: str
    index: int
    consumer: str
    consumer_index: int
    desc: TensorDesc | None

    @property
    def key(self) -> Key:
        return (self.producer, self.index)


@dataclass
class Subgraph:
    """Originals of one fused op in fusion-off topological order.

    ``missing`` are original names the fusion-off graph does not define; ``uses`` counts,
    per value, the internal inputs that read it.
    """

    fused: FusedOp
    ops: list[OpInfo]
    boundary: list[BoundaryInput]
    missing: list[str] = field(default_factory=list)
    uses: Counter = field(default_factory=Counter)

    def op(self, name: str) -> OpInfo:
        return self._by_name[name]

    def __post_init__(self) -> None:
        self._by_name = {op.name: op for op in self.ops}

    @property
    def types(self) -> list[str]:
        return list(dict.fromkeys(op.type for op in self.ops))


def extract(off_model: GeModel, fused: FusedOp, positions: Mapping[str, int] | None = None) -> Subgraph:
    """The subgraph of ``fused``'s originals in ``off_model`` (see the module docstring).
    ``positions``: each op's place in ``off_model``'s topological order, when the caller keeps
    them (extracting many subgraphs); else they are computed."""
    names = list(dict.fromkeys(fused.original_op_names))
    defined = off_model.ops  # has_op(n) is n in defined: looked up directly, per original
    present = {n for n in names if n in defined}
    if len(present) > 1:
        if positions is None:
            positions = {n: i for i, n in enumerate(off_model.topological_order())}
        order = sorted(present, key=positions.__getitem__)
    else:  # one original (most fused ops of a model): nothing to order
        order = list(present)
    ops = [defined[n] for n in order]
    boundary: dict[Key, BoundaryInput] = {}
    uses: Counter = Counter()
    for op in ops:
        for k, ref in enumerate(op.inputs):
            if ref is None:
                continue
            key = (ref.op, ref.index)
            if ref.op in present:
                uses[key] += 1
            elif key not in boundary:
                desc = op.input_desc[k] if k < len(op.input_desc) else None
                boundary[key] = BoundaryInput(ref.op, ref.index, op.name, k, desc)
    return Subgraph(fused, ops, list(boundary.values()), [n for n in names if n not in present], uses)
