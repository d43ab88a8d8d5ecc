"""The boundary inputs of a subgraph as arrays, on each side of the comparison.

Fusion on: a boundary value is one of the fused op's inputs, found through the origin of
that input (the comparison's input plan), loaded as the comparison loads it (restored to the
fusion-off layout): the fused op's input dump, else its producer's output dump.
Fusion off: the original consumer's own input dump, else its producer's output dump.
A graph input (``Data``, ``RefData``, ``Const``, ``Variable`` ...) is the same tensor in both
runs, so one run's dump of it serves both (GE dumps outputs only by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dumps.engine.plan import PairPlan
from ..dumps.engine.sides import SIDE_ERRORS, load_sides
from ..dumps.formats.datadump import DumpFile
from ..dumps.formats.ge_decode import TensorDesc
from ..dumps.formats.ge_types import is_data_source
from ..dumps.formats.npyio import as_array
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
    fusion-off run's. ``missing_on`` / ``missing_off`` say which values a side lacks and
    where they were looked for; ``shared`` names the graph inputs one run's dump gave to both."""

    on: dict[Key, np.ndarray] = field(default_factory=dict)
    off: dict[Key, np.ndarray] = field(default_factory=dict)
    missing_on: list[str] = field(default_factory=list)
    missing_off: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)

    @property
    def missing(self) -> list[str]:
        """What either side lacks."""
        return self.missing_on + self.missing_off


Looked = list[tuple[str, str, int]]  #: dumps looked for, in order: (op, "input"/"output", number)


def _first(index, looked: Looked) -> DumpFile | None:
    return next((f for f in (index.lookup(*k) for k in looked) if f is not None), None)


def _where(index, looked: Looked) -> str:
    """E.g. ``"Muls_1 input 0, x output 0 in FOLDER"``."""
    return f"{', '.join(f'{op} {io} {i}' for op, io, i in looked)} in {index.folder}"


def bind(comparison, sub: Subgraph) -> Bindings:
    """The boundary values of ``sub`` (whose fused op is in ``comparison``, a
    :class:`~fpinspect.dumps.engine.compare.DumpComparison`)."""
    out = Bindings()
    open_index, close_index = comparison.open_index, comparison.close_index
    plans = {(p.origin_op, p.origin_index): p for p in comparison.inputs.get(sub.fused.name, [])}
    fed = {(i.origin_op, i.origin_index): i for i in sub.fused.inputs}
    for b in sub.boundary:
        plan, inp = plans.get(b.key), fed.get(b.key)
        producer = comparison.close_model.ops.get(b.producer)
        source = producer.type if producer is not None else inp.src_type if inp is not None else None
        what = f"{b.producer}:{b.index} (input {b.consumer_index} of {b.consumer})"
        on_looked: Looked = (
            []
            if inp is None
            else [(sub.fused.name, "input", inp.index), (inp.src_op, "output", inp.src_index)]
        )
        off_looked: Looked = [(b.consumer, "input", b.consumer_index), (b.producer, "output", b.index)]
        on = off = None
        try:
            if plan is not None and plan.comparable:
                sides = load_sides(plan)
                on, off = array_of(sides.fused), array_of(sides.original)
            else:
                off_file = _first(close_index, off_looked)
                on_file = plan.fused_file if plan is not None else None
                on_file = on_file or _first(open_index, on_looked)
                if off_file is not None:
                    off = load_one(off_file, b.desc)
                if on_file is not None:
                    on = load_one(on_file, inp.desc if inp is not None else b.desc)
        except SIDE_ERRORS as exc:
            out.missing_on.append(f"{b.producer}:{b.index} cannot be loaded ({exc})")
            continue
        if is_data_source(source) and (on is None) != (off is None):
            # a graph input is the same tensor in both runs: whichever run dumped it serves both
            out.shared.append(
                f"{source} {b.producer}:{b.index} is the same tensor in both runs: the "
                f"{'fusion-off' if on is None else 'fusion-on'} dump serves both"
            )
            on = off = off if on is None else on
        if on is None and off is None and is_data_source(source):
            looked = _where(open_index, on_looked) + "; " if on_looked else ""
            out.missing_on.append(
                f"no dump of {source} {what} in either run: looked for {looked}{_where(close_index, off_looked)}"
            )
            continue
        if on is None:
            out.missing_on.append(
                f"no fusion-on dump of {what}: looked for {_where(open_index, on_looked)}"
                if on_looked
                else f"no input of {sub.fused.name} traces to {what} in the fusion-on graph"
            )
        else:
            out.on[b.key] = _shaped(on, b.desc)
        if off is None:
            out.missing_off.append(
                f"no fusion-off dump of {what}: looked for {_where(close_index, off_looked)}"
            )
        else:
            out.off[b.key] = _shaped(off, b.desc)
    return out
