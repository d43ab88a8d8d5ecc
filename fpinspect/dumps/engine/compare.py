"""Fusion-on vs fusion-off comparison (mode 1): the run's two sides, loaded and planned;
records computed on demand.

:class:`DumpComparison` loads both graphs and both datadump folders and plans every pair
(:mod:`.plan`, no tensor read). :meth:`~DumpComparison.compute` turns one plan into a
:class:`~.records.Record` (cached; safe to call from worker threads), loading its two sides
once (:mod:`.sides`); :meth:`~DumpComparison.sweep` computes many in demand order and
:meth:`~DumpComparison.compute_all` every one, on any executor (:mod:`.executing`);
:meth:`~DumpComparison.run` computes everything, localises (:mod:`.localise`) and returns the
:class:`~.report.Report` of docs/design.md.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cached_property
from queue import Queue

import msgspec

from ..formats.datadump import DumpIndex
from ..formats.fusion import FusedOp, compared_ops, fused_type_counts, is_fused
from ..formats.graph import GeModel, SplitGraph, load_graph
from .executing import Records, can_fork, in_forks, inline, on_dask, on_threads
from .localise import AMPLIFICATION, Evidence, Localisation, OpRecords, localise
from .pair import PairResult, compare_arrays
from .plan import PairPlan, PairPlans, plan_pairs
from .records import Record
from .report import Report
from .report_types import Sources
from .sides import SIDE_ERRORS, OpSides, Sides, load_op_sides, load_sides
from .verdict import ThresholdTable, judge

__all__ = ["DumpComparison", "PairPlan", "Record", "Report", "Sides"]


class DumpComparison:
    """Both sides of one run, loaded and planned. Raises :class:`~.errors.InputError` for bad inputs."""

    def __init__(
        self,
        open_graph: str | SplitGraph,
        close_graph: str | SplitGraph,
        open_data: str,
        close_data: str,
        *,
        iteration: str | None = None,
        close_iteration: str | None = None,
        thresholds: ThresholdTable | None = None,
        worst: int = 5,
        fused_types: Iterable[str] | None = None,
        compare_unfused: bool = False,
        amplification: float | None = None,
        kl: bool = True,
        on_item: Callable[[], object] | None = None,
    ):
        """The graphs are paths, or graphs :func:`~.graph.split_json` read already.
        ``fused_types`` narrows the fused ops compared to those op types; ``compare_unfused``
        also compares every op fusion left alone with its namesake (:func:`~.fusion.compared_ops`).
        ``kl=False`` leaves msaccucmp's KL divergence out of the records' metrics: it costs a
        second pass over each pair (a fifth of a small pair's time), and no table shows it.
        ``amplification`` (``None``: :data:`~.localise.AMPLIFICATION`) is the localisation's
        (:func:`~.localise.localise`) unless :meth:`localise` is given another. ``on_item()``, if given, is called before each op of
        the graphs is decoded (:func:`~.graph.load_graph`); what it raises ends the load."""
        self.kl = kl
        self.amplification = AMPLIFICATION if amplification is None else amplification
        self.fused_types = None if fused_types is None else frozenset(fused_types)
        self.compare_unfused = compare_unfused
        self._load(open_graph, close_graph, open_data, close_data, iteration, close_iteration, on_item)
        self.thresholds = thresholds or ThresholdTable()
        self.worst = worst
        self._cache: dict[tuple, Record] = {}
        #: what went wrong computing the records, for the report's warnings (a worker that died)
        self._run_warnings: list[str] = []
        #: Records sent to a cluster by :meth:`submit_to`, not collected yet.
        self._submitted: Records | None = None
        self._inflight: dict[tuple, threading.Lock] = {}
        self._lock = threading.Lock()

    def _load(
        self, open_graph, close_graph, open_data, close_data, iteration, close_iteration, on_item
    ) -> None:
        self.open_model: GeModel = load_graph(open_graph, on_item)
        self.close_model: GeModel = load_graph(close_graph, on_item)
        self.open_index = DumpIndex.scan(open_data, iteration)
        self.close_index = DumpIndex.scan(
            close_data, close_iteration if close_iteration is not None else iteration
        )
        #: the ops compared, in topological order: fused ones, then (interleaved) unfused namesakes
        self.fused: list[FusedOp] = compared_ops(
            self.open_model, self.close_model, types=self.fused_types, unfused=self.compare_unfused
        )
        self.pairs: PairPlans = plan_pairs(
            self.fused, self.open_index, self.close_model, self.close_index, open_model=self.open_model
        )
        self.outputs: dict[str, list[PairPlan]] = self.pairs.outputs
        self.inputs: dict[str, list[PairPlan]] = self.pairs.inputs
        self.plans: list[PairPlan] = self.pairs.all
        self._fused_by_name = {op.name: op for op in self.fused}

    def fused_op(self, name: str) -> FusedOp:
        """The compared op ``name`` (``KeyError`` if it is not one)."""
        return self._fused_by_name[name]

    @cached_property
    def close_positions(self) -> dict[str, int]:
        """Each fusion-off op's place in that graph's topological order (ordering a few ops
        by it costs nothing, where filtering the whole order once per fused op was quadratic)."""
        return {n: i for i, n in enumerate(self.close_model.topological_order())}

    # -- loading ---------------------------------------------------------------------------
    def sides(self, plan: PairPlan) -> Sides:
        """The two tensors of comparable ``plan`` as compared (:func:`~.sides.load_sides`;
        raises one of :data:`~.sides.SIDE_ERRORS`)."""
        return load_sides(plan)

    def op_sides(self, name: str) -> OpSides:
        """The loaded sides of every output and input pair of fused op ``name``."""
        return load_op_sides(self.pairs.of(name))

    # -- computing -------------------------------------------------------------------------
    def compute(self, plan: PairPlan) -> Record:
        """The record of ``plan``: computed once, then cached. Thread-safe: a caller asking
        for a pair another thread is computing waits for that result instead of redoing it."""
        key = plan.key
        hit = self._cache.get(key)  # a dict read is atomic; a miss takes the lock below
        if hit is not None:
            return hit
        if not plan.comparable:
            # nothing to compute: the record is the plan alone, made and kept without the lock
            # (a localisation of 100 000 ops makes most of them); the first one kept wins
            return self._cache.setdefault(key, Record(plan, None))
        return self._cached(plan, lambda: self._compute(plan))

    def record_and_sides(self, plan: PairPlan) -> tuple[Record, Sides | None]:
        """The record of ``plan`` and its loaded sides, for a second pass over the same tensors
        (the drill-down's): the sides are loaded once, and the record, if not cached yet, is
        computed from them. ``None`` sides when the plan has nothing to compare or its sides
        do not load (the record says why)."""
        if not plan.comparable:
            return self.compute(plan), None
        try:
            sides = load_sides(plan)
        except Exception:  # SIDE_ERRORS and anything unforeseen: the record says what went wrong
            return self.compute(plan), None
        return self._cached(plan, lambda: self._record(plan, sides)), sides

    def _cached(self, plan: PairPlan, make: Callable[[], Record]) -> Record:
        key = plan.key
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            running = self._inflight.get(key)
            if running is None:
                # held while the record is computed; a plain lock, not an Event (a Condition and
                # its lock, made for every pair), released by this thread when it is done
                self._inflight[key] = computing = threading.Lock()
                computing.acquire()
        if running is not None:
            with running:  # waits until the computing thread releases it
                pass
            return self._cached(plan, make)
        try:
            rec = contained(plan, make)
            with self._lock:
                self._cache[key] = rec
            return rec
        finally:
            with self._lock:
                self._inflight.pop(key).release()

    def record_of(self, plan: PairPlan) -> Record:
        """The record of ``plan`` computed now, neither looked up in the cache nor kept in it
        (a worker process's job: its caller keeps it); whatever goes wrong is the record's
        ``COMPUTE_ERROR``."""
        return contained(plan, lambda: self._compute(plan))

    def _compute(self, plan: PairPlan) -> Record:
        return _with_sides(plan, self._record)

    def _record(self, plan: PairPlan, sides: Sides) -> Record:
        return record_of_sides(plan, sides, self.thresholds, self.worst, self.kl)

    def sweep(
        self,
        plans: list[PairPlan] | None = None,
        *,
        demand: Queue | None = None,
        call: Callable | None = None,
        jobs: int = 1,
    ) -> Records:
        """The records of ``plans`` (default: every plan), each computed once by :meth:`compute`
        (:class:`~.executing.Records`: iterating yields ``(record, demanded)`` as they are done).
        Plans are taken in order, except that plans put on ``demand`` (a queue the caller keeps
        filling, e.g. with the pairs of the op a user looks at) go first, newest first when it
        is a ``LifoQueue``. ``call`` runs each computation of a comparable plan
        (``call(fn, plan)``). With ``jobs`` > 1, that many threads compute at once and records
        come in the order they finish; else each is computed in the caller's thread as the one
        before is taken, so whatever the caller does between two records runs between them."""
        plans = self.plans if plans is None else plans
        options = {"demand": demand} if call is None else {"demand": demand, "call": call}
        if jobs > 1:
            return on_threads(self, plans, jobs, **options)
        return inline(self, plans, **options)

    # -- localising and reporting ------------------------------------------------------------
    def op_records(self, on_item: Callable[[], object] | None = None) -> list[OpRecords]:
        """Every fused op with its records (computing those not cached yet); ``on_item()``, if
        given, is called before each op (what it raises ends the call)."""
        # the cache read inline: this runs over every plan (200 000 for 100 000 ops) holding the GIL
        cached, compute, outputs, inputs = self._cache.get, self.compute, self.outputs, self.inputs
        out = []
        for op in self.fused:
            if on_item is not None:
                on_item()
            out.append(
                OpRecords(
                    op,
                    [cached(p.key) or compute(p) for p in outputs[op.name]],
                    [cached(p.key) or compute(p) for p in inputs[op.name]],
                )
            )
        return out

    def localise(
        self,
        amplification: float | None = None,
        evidence: Mapping[str, Evidence] | None = None,
        on_item: Callable[[], object] | None = None,
    ) -> Localisation:
        """:func:`~.localise.localise` on :meth:`op_records` (``on_item`` called before each op)."""
        return localise(
            self.op_records(on_item),
            self.amplification if amplification is None else amplification,
            evidence,
            on_item,
            self.thresholds,
        )

    def _todo(self) -> tuple[list[PairPlan], list[int]]:
        """The comparable records not computed yet, bigger tensors first (so the workers do not
        end on one long pair), and their bytes."""
        todo = [p for p in self.plans if p.comparable and p.key not in self._cache]
        sized = sorted(((_file_size(p.fused_file.path), p) for p in todo), key=lambda sp: -sp[0])
        return [p for _, p in sized], [size for size, _ in sized]

    def submit_to(self, cluster) -> None:
        """Send every comparable record to ``cluster``'s workers (a Dask client) and return at
        once; :meth:`compute_all` with the same cluster collects them. :meth:`cancel_submitted`
        takes them back. One pair or none is left to :meth:`compute_all` to compute here."""
        if self._submitted is None:
            todo, sizes = self._todo()
            if len(todo) > 1:
                self._submitted = on_dask(cluster, self, todo, sizes)

    def cancel_submitted(self, cluster) -> None:
        """Cancel what :meth:`submit_to` sent and is not done."""
        if self._submitted is not None:
            self._submitted.close()
            self._submitted = None

    def compute_all(self, *, jobs: int = 1, progress=None, cluster=None) -> None:
        """Compute every comparable record (inputs too: localisation needs them; cached ones are
        not computed again); ``progress(done, total)`` after each record. ``jobs`` > 1 computes
        that many at once: on worker processes forked from this one where it can fork, else on
        threads. ``cluster``, a Dask client, computes them on its workers instead, collecting what
        :meth:`submit_to` sent (:mod:`.executing`)."""
        records = self.uncomputed(jobs=jobs, cluster=cluster)
        with records:  # interrupted here too (in ``progress``), no worker keeps computing
            for _ in self.kept(records):
                if progress is not None:
                    progress(records.done, records.total)

    def uncomputed(self, *, jobs: int = 1, cluster=None) -> Records:
        """The :class:`~.executing.Records` of every comparable plan not computed yet, on the
        executor ``jobs`` and ``cluster`` choose (:meth:`compute_all`'s), not started: iterate
        them through :meth:`kept`, inside ``with``, which stops every worker however it ends."""
        if cluster is not None:
            self.submit_to(cluster)
            records, self._submitted = self._submitted, None
            if records is not None:
                return records
        todo, sizes = self._todo()
        if jobs <= 1 or cluster is not None or len(todo) <= 1:
            return self.sweep(todo)
        if can_fork():
            return in_forks(self, todo, sizes, jobs)
        return self.sweep(todo, jobs=jobs)

    def kept(self, records: Records) -> Iterator[Record]:
        """Each record of ``records`` as it comes, kept in the cache; what went wrong computing
        them (a worker that died, a cluster worker that left) goes to the report's warnings."""
        keep = self._cache.setdefault
        for record, _ in records:
            keep(record.plan.key, record)
            yield record
        self._run_warnings += records.warnings

    def run(
        self,
        *,
        compare_input: bool = False,
        jobs: int = 1,
        amplification: float | None = None,
        progress=None,
        evidence: Mapping[str, Evidence] | None = None,
        cluster=None,
    ) -> Report:
        """Compute every record (:meth:`compute_all`, on ``cluster`` if given) and localise: the
        engine's report without replay evidence unless ``evidence`` is given. A command's
        comparison, replays included, is :class:`fpinspect.inspection.pipeline.Inspection`'s."""
        self.compute_all(jobs=jobs, progress=progress, cluster=cluster)
        return self.report(self.localise(amplification, evidence), compare_input=compare_input)

    def report(self, localisation: Localisation, *, compare_input: bool = False) -> Report:
        """The :class:`~.report.Report` of the records (computing those not cached yet) and
        ``localisation``: output records, and input records too with ``compare_input``."""
        shown = [self.compute(p) for p in self.plans if compare_input or p.kind == "output"]
        fused = sum(1 for op in self.fused if self.is_fused(op.name))
        sources = msgspec.convert({**self.sources(), **self.walked()}, Sources)
        return Report(shown, localisation, fused, self.thresholds, sources=sources)

    def is_fused(self, name: str) -> bool:
        """True if op ``name`` of the fusion-on graph is a fused op (not an unfused namesake)."""
        return is_fused(self.open_model.ops[name])

    def walked(self) -> dict:
        """Which ops were compared, for the report: ``fused_types`` (the fusion-on graph's fused
        op types and how many of each), ``compared_types`` (those compared, after
        ``--fused-types``) and ``unfused_ops`` (unfused namesakes compared)."""
        compared: dict[str, int] = {}
        for op in self.fused:
            if self.is_fused(op.name):
                compared[op.type] = compared.get(op.type, 0) + 1
        return {
            "fused_types": fused_type_counts(self.open_model),
            "compared_types": compared,
            "unfused_ops": sum(1 for op in self.fused if not self.is_fused(op.name)),
        }

    def sources(self) -> dict:
        """What was read, for the report: the iteration folder used on each side and every
        warning about the inputs (graph oddities tolerated, folders and rows ignored), then about
        the run (pairs a dead worker left to this process)."""
        return {
            "iteration": {"fusion_on": self.open_index.iteration, "fusion_off": self.close_index.iteration},
            "warnings": input_warnings(
                (self.open_model, self.close_model), (self.open_index, self.close_index)
            )
            + self._run_warnings,
        }


def compute_record(plan: PairPlan, thresholds: ThresholdTable, worst: int, kl: bool) -> Record:
    """The record of ``plan``: its two sides loaded and compared, the comparison judged. Needs
    nothing of the comparison but these settings, so a worker anywhere can compute it."""
    return _with_sides(plan, lambda p, sides: record_of_sides(p, sides, thresholds, worst, kl))


def _with_sides(plan: PairPlan, record: Callable[[PairPlan, Sides], Record]) -> Record:
    """``record(plan, sides)`` once the sides load; the plan alone, or the load's status, else."""
    if not plan.comparable:
        return Record(plan, None)
    try:
        sides = load_sides(plan)
    except SIDE_ERRORS as exc:
        return Record(plan, PairResult(status=[exc.code], message=str(exc)))
    return record(plan, sides)


def record_of_sides(plan: PairPlan, sides: Sides, thresholds: ThresholdTable, worst: int, kl: bool) -> Record:
    """The record of ``plan`` from its loaded ``sides``."""
    res = compare_arrays(sides.fused, sides.original, status=sides.status, worst=worst, kl=kl)
    j = judge(res, thresholds, plan.budget)
    return Record(plan, res, j.verdict, j.reasons, j.score, sides.conversion, j.budget)


def input_warnings(models: Iterable[GeModel | None], indexes: Iterable[DumpIndex | None]) -> list[str]:
    """Every warning about the inputs, each once: the graphs' oddities that were tolerated (each
    after its file's path), then what the dump folders ignored (folders, files, mapping rows).
    ``None`` stands for a side that was not given."""
    warnings = [f"{m.path}: {w}" for m in models if m is not None for w in m.warnings]
    warnings += [p for index in indexes if index is not None for p in index.problems]
    return list(dict.fromkeys(warnings))


def contained(plan: PairPlan, make: Callable[[], Record]) -> Record:
    """The one containment point of a pair: whatever goes wrong computing it becomes that
    pair's ``COMPUTE_ERROR``, with the reason, and every other pair goes on."""
    try:
        return make()
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return Record(plan, PairResult(status=["COMPUTE_ERROR"], message=f"the comparison failed ({reason})"))


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
