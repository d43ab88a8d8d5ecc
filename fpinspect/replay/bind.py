"""The boundary inputs of a subgraph as arrays, on each side of the comparison.

Fusion on: a boundary value is one of the fused op's inputs, found through the origin of
that input (the comparison's input plan), loaded as the comparison loads it (restored to the
fusion-off layout). A value fed by data or a constant (``Data``, ``Const``) is the same on
both sides, so the fusion-off dump serves when the fused op has no dump of it.
Fusion off: the original consumer's own input dump, else its producer's output dump.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dumps.datadump import DumpFile
from ..dumps.ge_decode import TensorDesc
from ..dumps.ge_types import is_data_source
from ..dumps.npyio import as_array
from ..dumps.plan import PairPlan
from ..dumps.sides import SIDE_ERRORS, load_sides
from ..numerics.chunks import CastView
from .subgraph import Key, Subgraph, logical_shape


def array_of(side) -> np.ndarray:
    """A loaded side (array, memory map or chunked reader) as an array."""
    if isinstance(side, np.ndarray):
        return side
    if isinstance(side, CastView):  # a widened dump cast back to its declared format
        return array_of(side.src).astype(side.dtype)
    return as_array(side)


def load_one(file: DumpFile, desc: TensorDesc | None) -> np.ndarray:
    """One dumped tensor restored to its logical layout and declared format, exactly as a
    comparison loads a side (the same file on both sides of a pair)."""
    plan = PairPlan(
        "input", "", "", 0, None, None, fused_file=file, origin_file=file, fused_desc=desc, origin_desc=desc
    )
    return array_of(load_sides(plan).original)


def _shaped(value: np.ndarray, desc: TensorDesc | None) -> np.ndarray:
    if desc is None:
        return value
    shape = logical_shape(desc)
    if tuple(value.shape) != shape and value.size == int(np.prod(shape)):
        return value.reshape(shape)
    return value


@dataclass
class Bindings:
    """Boundary values by ``(producer, output index)``: ``on`` the fused op's, ``off`` the
    fusion-off run's; ``missing`` says, per side, which values could not be found and why."""

    on: dict[Key, np.ndarray] = field(default_factory=dict)
    off: dict[Key, np.ndarray] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def bind(comparison, sub: Subgraph) -> Bindings:
    """The boundary values of ``sub`` (whose fused op is in ``comparison``, a
    :class:`~fpinspect.dumps.compare.DumpComparison`)."""
    out = Bindings()
    plans = {(p.origin_op, p.origin_index): p for p in comparison.inputs.get(sub.fused.name, [])}
    for b in sub.boundary:
        plan = plans.get(b.key)
        on = off = None
        try:
            if plan is not None and plan.comparable:
                sides = load_sides(plan)
                on, off = array_of(sides.fused), array_of(sides.original)
            else:
                off_file = comparison.close_index.lookup(b.consumer, "input", b.consumer_index)
                producer = comparison.close_model.ops.get(b.producer)
                if off_file is None:
                    off_file = comparison.close_index.lookup(b.producer, "output", b.index)
                if off_file is not None:
                    off = load_one(off_file, b.desc)
                if plan is not None and plan.fused_file is not None:
                    on = load_one(plan.fused_file, plan.fused_desc)
                elif producer is not None and is_data_source(producer.type):
                    on = off
        except SIDE_ERRORS as exc:
            out.missing.append(f"{b.producer}:{b.index} cannot be loaded ({exc})")
            continue
        for side, value, where in ((out.on, on, "fusion-on"), (out.off, off, "fusion-off")):
            if value is None:
                out.missing.append(
                    f"no {where} dump of {b.producer}:{b.index} (input {b.consumer_index} of {b.consumer})"
                )
            else:
                side[b.key] = _shaped(value, b.desc)
    return out
