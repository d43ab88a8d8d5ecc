"""The one place a comparison is assembled: :class:`Inspection`.

An inspection is one leaf pair of a run (its two graphs and two dump folders, loaded and planned
by :class:`~fpinspect.dumps.engine.compare.DumpComparison`) judged with one :class:`~.settings.CompareSettings`.
It goes through the same steps wherever it is made — ``fpinspect compare``, ``report``,
``switches``, ``confirm``, ``repro``, ``explore``, the HTML page and the inspector:

1. compute every pair's record, in the caller's thread, on threads, forked worker processes or
   a Dask cluster (``jobs``, ``cluster``): the records of many plans over any
   :class:`concurrent.futures.Executor`, :mod:`fpinspect.dumps.engine.executing`;
2. replay the fused ops the settings select (:meth:`Inspection.replays`, :mod:`fpinspect.replay`);
3. localise the op that introduced an error, with that evidence (:meth:`Inspection.localise`);
4. report (:class:`~fpinspect.dumps.engine.report.Report`, the ``--format json`` contract).

:meth:`Inspection.events` yields a typed event as each step moves on (:class:`RecordsComputed`,
:class:`Replayed`, :class:`Localised`, :class:`Reported`). A command consumes them to the end
(:meth:`Inspection.report`); the inspector schedules the steps itself — records demand first,
replays of the op a user looks at, pacing between items — through the same methods.

A whole run (rank/graph/step trees) is one inspection per leaf pair, made one after the other
(:mod:`.leaves`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .settings import REPLAY_CHOICES, CompareSettings

if TYPE_CHECKING:
    from queue import Queue

    from ..dumps.engine.compare import DumpComparison
    from ..dumps.engine.localise import Localisation
    from ..dumps.engine.plan import PairPlan
    from ..dumps.engine.records import Record
    from ..dumps.engine.report import Report
    from ..replay.evidence import OpReplay


# -- events -------------------------------------------------------------------------------------
#: At most this many records in one :class:`RecordsComputed` event of :meth:`Inspection.events`.
BATCH_RECORDS = 1024


@dataclass(frozen=True, slots=True)
class RecordsComputed:
    """Records computed since the last event: ``done`` of the ``total`` pairs to compute are."""

    records: tuple[Record, ...]
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class Replayed:
    """Fused op ``name`` replayed (``done`` of the ``total`` selected)."""

    name: str
    replay: OpReplay
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class Localised:
    """The localisation every record and replay gives."""

    localisation: Localisation


@dataclass(frozen=True, slots=True)
class Reported:
    """The inspection's report: the last event."""

    report: Report


Event = RecordsComputed | Replayed | Localised | Reported


class Inspection:
    """One leaf pair's comparison, judged with ``settings``, computed on ``jobs`` workers (or
    ``cluster``, a Dask client's workers)."""

    def __init__(
        self,
        comparison: DumpComparison,
        settings: CompareSettings | None = None,
        *,
        jobs: int = 1,
        cluster=None,
    ):
        self.comparison = comparison
        self.settings = settings or CompareSettings()
        self.jobs = max(1, jobs)
        self.cluster = cluster

    @classmethod
    def load(
        cls,
        graphs: tuple,
        data: Mapping[str, object],
        settings: CompareSettings | None = None,
        *,
        kl: bool = True,
        worst: int | None = None,
        jobs: int = 1,
        cluster=None,
        on_item: Callable[[], object] | None = None,
    ) -> Inspection:
        """Load and plan one leaf pair: ``graphs`` the fusion-on and fusion-off graphs (paths or
        loaded graphs), ``data`` the data folder and iteration arguments
        (:attr:`~.runs.Inputs.data`). ``kl``: whether the records carry msaccucmp's KL divergence
        (a second pass over each pair; only the JSON shows it); ``worst``: how many of the worst
        elements each record lists (``None``: the settings'). Raises
        :class:`~fpinspect.dumps.errors.InputError` for inputs that cannot be read."""
        from ..dumps.engine.compare import DumpComparison

        settings = settings or CompareSettings()
        options = settings.comparison_options(kl=kl)
        if worst is not None:
            options["worst"] = worst
        comparison = DumpComparison(*graphs, **data, **options, on_item=on_item)
        return cls(comparison, settings, jobs=jobs, cluster=cluster)

    # -- 1. records ----------------------------------------------------------------------------
    def records(
        self,
        plans: list[PairPlan] | None = None,
        *,
        demand: Queue | None = None,
        call: Callable | None = None,
    ) -> Iterator[tuple[Record, bool]]:
        """The records of ``plans`` (default: every plan) one at a time in the caller's thread,
        each with whether it was demanded: plans put on ``demand`` (a queue the caller keeps
        filling, the inspector's highlighted op) go first, newest first for a ``LifoQueue``.
        ``call(fn, plan)`` runs each computation (the inspector's gives up when its worker is
        cancelled). Computed records are kept: every later step reads them."""
        options = {} if call is None else {"call": call}
        return iter(self.comparison.sweep(plans, demand=demand, **options))

    def submit(self) -> None:
        """Send the records to the cluster's workers now and return (a whole run sends the next
        leaf's while this one's come back); nothing without a cluster."""
        if self.cluster is not None:
            self.comparison.submit_to(self.cluster)

    def withdraw(self) -> None:
        """Take back what :meth:`submit` sent and is not done."""
        if self.cluster is not None:
            self.comparison.cancel_submitted(self.cluster)

    # -- 2. replays ----------------------------------------------------------------------------
    def to_replay(self, which: str | None = None) -> list[str]:
        """The fused ops ``which`` (default: the settings' ``replay``) selects, in topological
        order: ``failing`` (worst output verdict fail or warn), ``all`` or ``none``. Their
        records are computed if they are not yet."""
        which = self.settings.replay if which is None else which
        if which not in REPLAY_CHOICES:
            raise ValueError(f"replay must be one of {', '.join(REPLAY_CHOICES)}, not {which!r}")
        if which == "none":
            return []
        from ..dumps.engine.outcomes import worst_verdict

        cmp = self.comparison
        names = []
        for op in cmp.fused:
            verdict = worst_verdict(cmp.compute(p).verdict for p in cmp.outputs[op.name])
            if which == "all" or verdict in ("fail", "warn"):
                names.append(op.name)
        return names

    def replays(
        self, names: Iterable[str], *, cancelled: Callable[[], bool] | None = None
    ) -> Iterator[Replayed]:
        """Replay each of ``names`` (:func:`~fpinspect.replay.evidence.replay_op`) on this
        inspection's ``jobs`` threads, yielding each as it is done (in the order of ``names`` on
        one thread). ``cancelled()`` says when to stop an op's replay midway."""
        from ..replay.evidence import replay_op

        names = list(names)
        total = len(names)
        if self.jobs <= 1 or total <= 1:
            for done, name in enumerate(names, 1):
                yield Replayed(name, replay_op(self.comparison, name, None, cancelled), done, total)
            return
        # each thread takes the next op until none is left: a future per op cost more than
        # replaying an op that stops early (no inputs dumped), ~75 us against ~20
        order = iter(names)  # next() of a list iterator is atomic

        def work() -> list[OpReplay]:
            return [replay_op(self.comparison, name, None, cancelled) for name in order]

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            parts = [pool.submit(work) for _ in range(min(self.jobs, total))]
            by_name = {r.name: r for part in parts for r in part.result()}
        for done, name in enumerate(names, 1):
            yield Replayed(name, by_name[name], done, total)

    # -- 3. localisation -----------------------------------------------------------------------
    def evidence(self, replays: Mapping[str, OpReplay] | None = None) -> dict[str, OpReplay]:
        """The localisation's evidence: ``replays`` by op name, and an empty replay for every
        other compared op (its finding then says the threshold rule decided)."""
        from ..replay.evidence import OpReplay

        evidence = {op.name: OpReplay(op.name, {}) for op in self.comparison.fused}
        evidence.update(replays or {})
        return evidence

    def localise(
        self, replays: Mapping[str, OpReplay] | None = None, on_item: Callable[[], object] | None = None
    ) -> Localisation:
        """The localisation of every record with the evidence of ``replays`` (``on_item()``
        before each op: what it raises ends it)."""
        return self.comparison.localise(None, self.evidence(replays), on_item)

    # -- 4. the report -------------------------------------------------------------------------
    def events(
        self,
        *,
        compare_input: bool = False,
        known: Mapping[str, OpReplay] | None = None,
    ) -> Iterator[Event]:
        """Every step, as it moves on; the last event is :class:`Reported`. ``compare_input``:
        the report shows input records too; ``known``: replays done already (the inspector's),
        used as they are."""
        yield from self._computed()
        replays = dict(known or {})
        for event in self.replays(n for n in self.to_replay() if n not in replays):
            replays[event.name] = event.replay
            yield event
        evidence = self.evidence(replays)
        localisation = self.comparison.localise(None, evidence)
        yield Localised(localisation)
        yield Reported(self._report(localisation, evidence, compare_input))

    def _computed(self) -> Iterator[RecordsComputed]:
        """Every record not computed yet, in events of up to :data:`BATCH_RECORDS` records (one
        event, of none, when every record is computed already)."""
        records = self.comparison.uncomputed(jobs=self.jobs, cluster=self.cluster)
        batch: list[Record] = []
        with records:  # interrupted (the consumer stops iterating), no worker keeps computing
            for record in self.comparison.kept(records):
                batch.append(record)
                if len(batch) == BATCH_RECORDS:
                    yield RecordsComputed(tuple(batch), records.done, records.total)
                    batch = []
            if batch or records.done == 0:
                yield RecordsComputed(tuple(batch), records.done, records.total)

    def report(self, *, compare_input: bool = False, known: Mapping[str, OpReplay] | None = None) -> Report:
        """:meth:`events` consumed to the end: the report."""
        for event in self.events(compare_input=compare_input, known=known):
            if isinstance(event, Reported):
                return event.report
        raise AssertionError("an inspection ends with its report")  # pragma: no cover

    def _report(
        self, localisation: Localisation, evidence: Mapping[str, OpReplay], compare_input: bool
    ) -> Report:
        cmp = self.comparison
        report = cmp.report(localisation, compare_input=compare_input)
        return report.with_annotation(
            "replay",
            {
                (name, "output", i): ev.to_json()
                for name, r in evidence.items()
                for i, ev in r.outputs.items()
            },
        )
