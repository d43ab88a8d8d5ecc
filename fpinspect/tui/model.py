"""What the inspector shows, kept apart from the widgets: one row per fused op (or, on demand,
per op of the graph), the records computed so far, filtering and ordering, and moves along the
fusion-on graph.

No Textual here. The screen owns one :class:`RunView`; workers compute records and the
screen's handlers feed them in with :meth:`RunView.add`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from ..dumps import DumpComparison, DumpIndex, FusedOp, GeModel, PairPlan, Record, input_warnings, load_graph
from ..dumps.engine.localise import Localisation, OpFinding
from ..dumps.engine.plan import PairPlans, plan_pairs
from ..dumps.engine.verdict import VERDICTS, worst_verdict
from ..dumps.formats.fusion import compared_ops, fused_op, is_fused, original_subgraph
from ..dumps.formats.graph import SplitGraph
from ..dumps.runs.runfolder import confirmations
from ..dumps.runs.sources import Sources
from ..inspection.pipeline import Inspection
from ..inspection.settings import CompareSettings
from ..replay.evidence import OpReplay, ReplayEvidence

#: Worst elements kept per pair: as many as ``fpinspect diff`` lists by default.
WORST = 10


#: The findings of rows listed before any localisation (never written to).
_NO_FINDINGS: Mapping[str, OpFinding] = MappingProxyType({})


@dataclass(slots=True)
class OpRow:
    """One fused op as the list shows it. ``computed_verdict`` and ``computed_score`` are the
    worst over the op's computed outputs (:func:`~fpinspect.dumps.engine.verdict.worst_verdict`, as the
    localisation). ``findings`` is the localisation's findings by op name, one mapping shared by
    every row of an :class:`RunView` and updated in place, so that a localisation of 100 000
    ops reaches the list without touching each row; an op's finding, once there, gives its
    ``verdict``, ``score`` and ``role``."""

    position: int
    op: FusedOp
    findings: Mapping[str, OpFinding]
    computed_verdict: str | None = None
    computed_score: float | None = None
    haystack: str = ""

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def verdict(self) -> str | None:
        finding = self.findings.get(self.op.name)
        return finding.verdict if finding is not None else self.computed_verdict

    @property
    def score(self) -> float | None:
        finding = self.findings.get(self.op.name)
        return finding.score if finding is not None else self.computed_score

    @property
    def role(self) -> str | None:
        finding = self.findings.get(self.op.name)
        return finding.role if finding is not None else None


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
    return model.data_producers(name) if upstream else model.data_consumers(name)


def outline_rows(ops: list[FusedOp]) -> list[OpRow]:
    """Rows of the fused ops of an outline (:func:`~fpinspect.dumps.formats.outline.outline_fused_ops`),
    listed while the run loads."""
    return _rows(ops)


def _rows(ops: list[FusedOp], findings: Mapping[str, OpFinding] = _NO_FINDINGS) -> list[OpRow]:
    return [
        OpRow(i, op, findings, haystack=" ".join([op.name, op.type, *op.original_op_names]).lower())
        for i, op in enumerate(ops)
    ]


def _shown_role(role: str | None) -> str:
    """A cause as the list writes it ("more accurate")."""
    return (role or "").replace("_", " ")


def view_of(rows: list[OpRow], text: str = "", by_worst: bool = False) -> list[int]:
    """Positions of the ``rows`` to list: those where ``text`` is part of the name, type, an
    original op's name, the verdict or the cause as the list shows it (case-insensitive), in
    graph order or worst score first."""
    needle = text.strip().lower()
    if not needle and not by_worst:
        return list(range(len(rows)))
    words = {*VERDICTS, *(_shown_role(f.role) for f in rows[0].findings.values())} if rows else set()
    if not needle:
        shown = list(rows)
    elif not any(needle in word for word in words):
        # no row's verdict or cause can hold the needle: the names alone decide (100 000 rows: a
        # fifth of the time, where each row's verdict and role are looked up in the findings)
        shown = [r for r in rows if needle in r.haystack]
    else:
        shown = [
            r
            for r in rows
            if needle in r.haystack or needle in (r.verdict or "") or needle in _shown_role(r.role)
        ]
    if by_worst:
        shown.sort(key=lambda r: (r.score is None, -(r.score or 0.0), r.position))
    return [r.position for r in shown]


class RunView:
    """A loaded run as the inspector shows it: the fusion-on graph's fused ops and their planned
    pairs, and the run's :class:`~fpinspect.inspection.pipeline.Inspection` when both sides exist
    (the screen's workers drive its steps and feed what they give in here).

    :attr:`rows` are the fused ops; after :meth:`show_all_ops` every op of the graph, in
    topological order. There an op fusion left alone that the fusion-off graph defines under
    the same name is planned against its namesake (compared when asked for: :meth:`pending`);
    the other ops (data, constants, ``NetOutput``) have no pairs.
    """

    def __init__(
        self,
        sources: Sources,
        open_model: GeModel,
        pairs: PairPlans,
        *,
        inspection: Inspection | None = None,
        close_model: GeModel | None = None,
        open_index: DumpIndex | None = None,
    ):
        self.sources = sources
        self.open_model = open_model
        self.close_model = close_model
        #: the run's inspection (``None`` browsing one graph): the comparison and its steps
        self.inspection = inspection
        comparison: DumpComparison | None = inspection.comparison if inspection is not None else None
        self.comparison = comparison
        self.open_index = comparison.open_index if comparison is not None else open_index
        self.pairs = pairs
        #: the localisation's findings by op name (empty until it comes), shared by every row
        self.findings: dict[str, OpFinding] = {}
        #: ``fpinspect confirm``'s last verdicts on this run's regions, by fused op name
        self.confirmed: dict[str, dict] = confirmations(sources.run_dir) if sources.run_dir else {}
        self.fused_rows = _rows(pairs.fused, self.findings)
        self._all_rows: list[OpRow] | None = None
        self._more_pairs: PairPlans | None = None  # the plans of the ops only the full list shows
        self._sweep_order: list[PairPlan] | None = None
        self.showing_all = False
        self._index: dict[str, list[OpRow]] | None = None
        self._index_of: list[list[OpRow]] = []
        self.rows = self.fused_rows
        self.by_name = {row.name: row for row in self.rows}
        self.records: dict[tuple, Record] = {}
        self.localisation: Localisation | None = None
        #: names of the ops whose computed verdict is "fail"
        self.failing: set[str] = set()
        #: replays of fused ops (by name), and the ops being replayed now
        self.replays: dict[str, OpReplay] = {}
        self.replaying: set[str] = set()

    # -- fused ops or every op -------------------------------------------------------------
    def show_all_ops(self, show: bool) -> None:
        """List every op of the graph (``True``) or the fused ops only."""
        self.showing_all = show
        self.rows = self._every_row() if show else self.fused_rows
        self.by_name = {row.name: row for row in self.rows}

    def _every_row(self) -> list[OpRow]:
        if self._all_rows is None:
            planned = {op.name: op for op in self.pairs.fused}
            cmp = self.comparison
            more = [
                op
                for op in compared_ops(self.open_model, self.close_model, unfused=True)
                if op.name not in planned
            ]
            self._more_pairs = plan_pairs(
                more,
                self.open_index,
                self.close_model,
                cmp.close_index if cmp is not None else None,
                open_model=self.open_model,
            )
            views = {**planned, **{op.name: op for op in more}}
            ops = [
                views.get(n) or fused_op(self.open_model, n, same_name=not is_fused(self.open_model.ops[n]))
                for n in self.open_model.topological_order()
            ]
            self._all_rows = _rows(ops, self.findings)
            known = {r.name: r for r in self.fused_rows}
            for row in self._all_rows:  # what was computed while the fused ops were listed
                if row.name in known:
                    old = known[row.name]
                    row.computed_verdict, row.computed_score = old.computed_verdict, old.computed_score
        return self._all_rows

    def _row_index(self) -> dict[str, list[OpRow]]:
        """Op name -> its rows in both lists (the fused-op list and, once built, the full one)."""
        if self._index is None or len(self._index_of) != (1 if self._all_rows is None else 2):
            self._index_of = [self.fused_rows] + ([self._all_rows] if self._all_rows is not None else [])
            self._index = {}
            for rows in self._index_of:
                for row in rows:
                    self._index.setdefault(row.name, []).append(row)
        return self._index

    def type_counts(self) -> list[tuple[str, int, int]]:
        """``(op type, ops listed, of which fused)`` over :attr:`rows`, most common first."""
        counts: dict[str, list[int]] = {}
        for row in self.rows:
            c = counts.setdefault(row.op.type, [0, 0])
            c[0] += 1
            c[1] += is_fused(self.open_model.ops[row.name])
        return sorted(((t, n, f) for t, (n, f) in counts.items()), key=lambda x: (-x[1], x[0]))

    def op_info(self, name: str):
        """The graph's own record of op ``name`` (attributes, tensor descriptions, inputs)."""
        return self.open_model.ops[name]

    def dump_of(self, name: str, io: str, index: int):
        """The fusion-on dump file of one tensor of op ``name`` (``None``: no data folder or no dump)."""
        return self.open_index.lookup(name, io, index) if self.open_index is not None else None

    @classmethod
    def load(
        cls,
        sources: Sources,
        settings: CompareSettings | None = None,
        *,
        split: Mapping[str, SplitGraph | None] | None = None,
        on_item: Callable[[], object] | None = None,
    ) -> RunView:
        """Read the graphs and index the dump folders (slow: run it in a worker). Raises
        :class:`~fpinspect.dumps.InputError` for unreadable input. ``settings`` choose the ops
        listed and compared and judge them, as for ``fpinspect compare``; ``split`` holds graphs
        :func:`~fpinspect.dumps.formats.graph.split_json` read already, by path; ``on_item()`` is called
        before each op of the graphs is decoded (what it raises ends the load)."""
        graphs = {path: s for path, s in (split or {}).items() if s is not None}
        insp = cls._read(sources, settings or CompareSettings(), graphs, on_item)
        # made here, in the worker, what the screen's thread would otherwise make on its first
        # record or highlight, pausing for 50-250 ms at 100 000 ops: the order of the sweep (a
        # scan of every plan), the rows by name (the first records), the fusion-off order and
        # networkx's lazily imported parts (the first op's detail)
        insp.sweep_order()
        insp._row_index()
        if insp.close_model is not None and insp.rows:
            insp.originals(insp.rows[0].name)
        return insp

    @classmethod
    def _read(
        cls,
        sources: Sources,
        settings: CompareSettings,
        split: dict,
        on_item: Callable[[], object] | None,
    ) -> RunView:
        open_graph = split.get(sources.open_graph, sources.open_graph)
        close_graph = split.get(sources.close_graph, sources.close_graph)
        if sources.complete:
            inspection = Inspection.load(
                (open_graph, close_graph),
                {"open_data": sources.open_data, "close_data": sources.close_data},
                settings,
                worst=WORST,
                on_item=on_item,
            )
            cmp = inspection.comparison
            return cls(sources, cmp.open_model, cmp.pairs, inspection=inspection, close_model=cmp.close_model)
        model = load_graph(open_graph, on_item)
        close = load_graph(close_graph, on_item) if close_graph else None
        index = DumpIndex.scan(sources.open_data) if sources.open_data else None
        ops = compared_ops(model, close, types=settings.fused_types, unfused=settings.compare_unfused)
        return cls(sources, model, plan_pairs(ops, index), close_model=close, open_index=index)

    @property
    def warnings(self) -> list[str]:
        """What ``fpinspect compare`` reports under ``sources.warnings``: the graphs' oddities
        that were tolerated and what the dump folders ignored (of the sides given)."""
        close_index = self.comparison.close_index if self.comparison is not None else None
        return input_warnings((self.open_model, self.close_model), (self.open_index, close_index))

    # -- pairs and records ---------------------------------------------------------------
    @property
    def comparing(self) -> bool:
        return self.comparison is not None

    def plans(self, name: str) -> list[PairPlan]:
        """The output pairs, then the input pairs of op ``name`` (none for an op with nothing to
        compare). Browsing one graph, the plans name the fusion-on side only."""
        for pairs in (self.pairs, self._more_pairs):
            if pairs is not None and name in pairs.outputs:
                return pairs.of(name)
        return []

    def sweep_order(self) -> list[PairPlan]:
        """Every plan that can be compared (:attr:`~fpinspect.dumps.PairPlan.comparable`),
        outputs of all ops first (they decide the list's verdicts), in list order. The others
        have nothing to compute: :meth:`record` gives theirs when asked."""
        if self.comparison is None:
            return []
        if self._sweep_order is None:  # the plans never change: made once (by :meth:`load`)
            pairs = self.pairs
            self._sweep_order = [p for op in pairs.fused for p in pairs.outputs[op.name] if p.comparable] + [
                p for op in pairs.fused for p in pairs.inputs[op.name] if p.comparable
            ]
        return list(self._sweep_order)

    def pending(self, name: str) -> list[PairPlan]:
        """The pairs of ``name`` that can be compared and have no record yet."""
        if not self.comparing:
            return []
        return [p for p in self.plans(name) if p.comparable and p.key not in self.records]

    def replay(self, plan: PairPlan) -> ReplayEvidence | None:
        """The replay evidence of an output pair, once its op is replayed."""
        op = self.replays.get(plan.fused_op)
        return op.outputs.get(plan.fused_index) if op is not None and plan.kind == "output" else None

    def record(self, plan: PairPlan) -> Record | None:
        """The record of ``plan``: once computed, or at once for a plan with nothing to compare
        (its planning status, from the comparison's cache)."""
        rec = self.records.get(plan.key)
        if rec is None and self.comparison is not None and not plan.comparable:
            rec = self.comparison.compute(plan)
        return rec

    def add(self, records: list[Record]) -> set[int]:
        """Take in computed records; returns the positions of the rows that changed."""
        changed = set()
        index = self._row_index()
        for rec in records:
            self.records[rec.plan.key] = rec
            if rec.plan.kind == "output":
                for row in index.get(rec.plan.fused_op, []):
                    row.computed_verdict = worst_verdict([row.computed_verdict, rec.verdict])
                    if row.computed_verdict == "fail":
                        self.failing.add(row.name)
                    if rec.score is not None and (
                        row.computed_score is None or rec.score > row.computed_score
                    ):
                        row.computed_score = rec.score
                    if self.by_name.get(row.name) is row:
                        changed.add(row.position)
        return changed

    def localise(self, localisation: Localisation, findings: Mapping[str, OpFinding] | None = None) -> None:
        """Take in ``localisation``; ``findings`` is its :attr:`~.Localisation.by_name` when the
        caller has it already (a worker builds it: 100 000 findings are a pause to build)."""
        self.localisation = localisation
        self.findings.clear()
        self.findings.update(localisation.by_name if findings is None else findings)

    @property
    def first_introduced(self) -> OpFinding | None:
        intro = self.localisation.introduced if self.localisation else []
        return intro[0] if intro else None

    def focus_plan(self, name: str) -> PairPlan | None:
        """The pair ``enter`` opens: the worst-scored output, else the first output, else the first input."""
        plans = self.plans(name)
        scored = [
            (rec.score, p)
            for p in plans
            if p.kind == "output"
            for rec in [self.record(p)]
            if rec is not None and rec.score is not None
        ]
        if scored:
            return max(scored, key=lambda pair: pair[0])[1]
        return plans[0] if plans else None

    # -- the list ------------------------------------------------------------------------
    def view(self, text: str = "", by_worst: bool = False) -> list[int]:
        """:func:`view_of` :attr:`rows`."""
        return view_of(self.rows, text, by_worst)

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
            out.append(
                OriginalOp(
                    n,
                    sub.nodes[n]["type"],
                    True,
                    [(m, sub.has_node(m)) for m in _data_neighbours(off, n, upstream=True)],
                    [(m, sub.has_node(m)) for m in _data_neighbours(off, n, upstream=False)],
                )
            )
        return out

    @cached_property
    def _close_order(self) -> dict[str, int]:
        """Each fusion-off op's place in that graph's topological order (the comparison's, when
        there is one: the replays read it too)."""
        if self.comparison is not None:
            return self.comparison.close_positions
        return {n: i for i, n in enumerate(self.close_model.topological_order())}
