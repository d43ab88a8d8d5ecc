"""What the inspector shows, kept apart from the widgets: one row per fused op, the records
computed so far, filtering and ordering, and moves along the fusion-on graph.

No Textual here. The screen owns one :class:`Inspection`; workers compute records and the
screen's handlers feed them in with :meth:`Inspection.add`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..dumps import DumpComparison, DumpIndex, FusedOp, GeModel, PairPlan, Record, fused_ops, load_graph
from ..dumps.fusion import original_subgraph
from ..dumps.graph import collector_paused
from ..dumps.localise import Localisation, OpFinding
from ..dumps.plan import PairPlans, plan_pairs
from ..dumps.verdict import worst_verdict
from .sources import Sources

#: Worst elements kept per pair: as many as ``fpinspect diff`` lists by default.
WORST = 10


@dataclass
class OpRow:
    """One fused op as the list shows it. ``verdict`` and ``score`` are the worst over the
    op's computed outputs (:func:`~fpinspect.dumps.verdict.worst_verdict`, as the localisation);
    ``role`` comes from the localisation once every pair is computed."""

    position: int
    op: FusedOp
    verdict: str | None = None
    score: float | None = None
    role: str | None = None
    haystack: str = ""

    @property
    def name(self) -> str:
        return self.op.name


@dataclass(frozen=True)
class OriginalOp:
    """An original op of a fused op, and its data neighbours in the fusion-off graph
    (``(name, inside)``: whether the neighbour belongs to the same fused op). ``present`` is
    whether that graph defines the op (None without a fusion-off graph)."""

    name: str
    type: str
    present: bool | None
    inputs: list[tuple[str, bool]] = field(default_factory=list)
    outputs: list[tuple[str, bool]] = field(default_factory=list)


def _data_neighbours(model: GeModel, name: str, upstream: bool) -> list[str]:
    edges = model.nx.in_edges(name, data="kind") if upstream else model.nx.out_edges(name, data="kind")
    return list(dict.fromkeys(u if upstream else v for u, v, kind in edges if kind == "data"))


class Inspection:
    """A loaded run: the fusion-on graph's fused ops and their planned pairs, and the comparison
    when both sides exist."""

    def __init__(self, sources: Sources, open_model: GeModel, pairs: PairPlans, *,
                 comparison: DumpComparison | None = None, close_model: GeModel | None = None):  # fmt: skip
        self.sources = sources
        self.open_model = open_model
        self.close_model = close_model
        self.comparison = comparison
        self.pairs = pairs
        self.rows = [OpRow(i, op) for i, op in enumerate(pairs.fused)]
        for row in self.rows:
            row.haystack = " ".join([row.name, row.op.type, *row.op.original_op_names]).lower()
        self.by_name = {row.name: row for row in self.rows}
        self.records: dict[tuple, Record] = {}
        self.localisation: Localisation | None = None
        self.findings: dict[str, OpFinding] = {}

    @classmethod
    def load(cls, sources: Sources) -> Inspection:
        """Read the graphs and index the dump folders (slow: run it in a worker). Raises
        :class:`~fpinspect.dumps.InputError` for unreadable input."""
        with collector_paused():
            return cls._read(sources)

    @classmethod
    def _read(cls, sources: Sources) -> Inspection:
        if sources.complete:
            cmp = DumpComparison(sources.open_graph, sources.close_graph, sources.open_data, sources.close_data,
                                 worst=WORST)  # fmt: skip
            return cls(sources, cmp.open_model, cmp.pairs, comparison=cmp, close_model=cmp.close_model)
        model = load_graph(sources.open_graph)
        close = load_graph(sources.close_graph) if sources.close_graph else None
        index = DumpIndex.scan(sources.open_data) if sources.open_data else None
        return cls(sources, model, plan_pairs(fused_ops(model), index), close_model=close)

    # -- pairs and records ---------------------------------------------------------------
    @property
    def comparing(self) -> bool:
        return self.comparison is not None

    def plans(self, name: str) -> list[PairPlan]:
        """The output pairs, then the input pairs of fused op ``name``. Browsing one graph,
        the plans name the fusion-on side only."""
        return self.pairs.of(name)

    def sweep_order(self) -> list[PairPlan]:
        """Every plan, outputs of all ops first (they decide the list's verdicts), in list order."""
        if self.comparison is None:
            return []
        pairs = self.pairs
        return [p for op in pairs.fused for p in pairs.outputs[op.name]] + [p for op in pairs.fused
                                                                             for p in pairs.inputs[op.name]]  # fmt: skip

    def pending(self, name: str) -> list[PairPlan]:
        """The pairs of ``name`` that can be compared and have no record yet."""
        if not self.comparing:
            return []
        return [p for p in self.plans(name) if p.comparable and p.key not in self.records]

    def record(self, plan: PairPlan) -> Record | None:
        return self.records.get(plan.key)

    def add(self, records: list[Record]) -> set[int]:
        """Take in computed records; returns the positions of the rows that changed."""
        changed = set()
        for rec in records:
            self.records[rec.plan.key] = rec
            if rec.plan.kind == "output":
                row = self.by_name[rec.plan.fused_op]
                row.verdict = worst_verdict([row.verdict, rec.verdict])
                if rec.score is not None and (row.score is None or rec.score > row.score):
                    row.score = rec.score
                changed.add(row.position)
        return changed

    def localise(self, localisation: Localisation) -> None:
        self.localisation = localisation
        self.findings = localisation.by_name
        for finding in localisation.ops:
            row = self.by_name[finding.name]
            row.verdict, row.score, row.role = finding.verdict, finding.score, finding.role

    @property
    def first_introduced(self) -> OpFinding | None:
        intro = self.localisation.introduced if self.localisation else []
        return intro[0] if intro else None

    def focus_plan(self, name: str) -> PairPlan | None:
        """The pair ``enter`` opens: the worst-scored output, else the first output, else the first input."""
        plans = self.plans(name)
        scored = [(rec.score, p) for p in plans if p.kind == "output"
                  for rec in [self.record(p)] if rec is not None and rec.score is not None]  # fmt: skip
        if scored:
            return max(scored, key=lambda pair: pair[0])[1]
        return plans[0] if plans else None

    # -- the list ------------------------------------------------------------------------
    def view(self, text: str = "", by_worst: bool = False) -> list[int]:
        """Row positions to list: those matching ``text`` (in name, type, original op names,
        verdict or role; case-insensitive), in graph order or worst score first."""
        needle = text.strip().lower()
        rows = [r for r in self.rows if not needle or needle in r.haystack or needle == r.verdict
                or needle == r.role]  # fmt: skip
        if by_worst:
            rows.sort(key=lambda r: (r.score is None, -(r.score or 0.0), r.position))
        return [r.position for r in rows]

    # -- the graphs ------------------------------------------------------------------------
    def _nearest_fused(self, name: str, upstream: bool) -> list[str]:
        """The closest fused ops feeding (or fed by) ``name``, looking through plain ops."""
        seen, found, frontier = {name}, [], [name]
        while frontier:
            nxt = []
            for node in frontier:
                for other in _data_neighbours(self.open_model, node, upstream):
                    if other in seen:
                        continue
                    seen.add(other)
                    (found if other in self.by_name else nxt).append(other)
            frontier = nxt
        return sorted(found, key=lambda n: self.by_name[n].position)

    def producers(self, name: str) -> list[str]:
        return self._nearest_fused(name, upstream=True)

    def consumers(self, name: str) -> list[str]:
        return self._nearest_fused(name, upstream=False)

    def originals(self, name: str) -> list[OriginalOp]:
        """The original ops of fused op ``name`` and their data neighbours in the fusion-off
        graph, in that graph's order (without it: as the fused op lists them)."""
        op = self.by_name[name].op
        types = dict(zip(op.original_op_names, op.original_op_types))
        off = self.close_model
        if off is None:
            return [OriginalOp(n, types.get(n, "?"), None) for n in op.original_op_names]
        sub = original_subgraph(off, op.original_op_names)
        order = self._close_order
        names = sorted(op.original_op_names, key=lambda n: order.get(n, len(order)))
        out = []
        for n in names:
            if not sub.has_node(n):
                out.append(OriginalOp(n, types.get(n, "?"), False))
                continue
            out.append(OriginalOp(
                n, sub.nodes[n]["type"], True,
                [(m, sub.has_node(m)) for m in _data_neighbours(off, n, upstream=True)],
                [(m, sub.has_node(m)) for m in _data_neighbours(off, n, upstream=False)],
            ))  # fmt: skip
        return out

    @cached_property
    def _close_order(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.close_model.topological_order())}
