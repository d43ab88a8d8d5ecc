"""Computing records: one :class:`Record` per planned pair, and :class:`Sweep`, the one loop
that computes many of them — ``fpinspect compare`` (:meth:`~.compare.DumpComparison.run`) and
the inspector's background sweep both consume it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from queue import Empty, Queue, SimpleQueue
from typing import TYPE_CHECKING

from .pair import PairResult, finish_status, json_clean
from .plan import PairPlan

if TYPE_CHECKING:
    from .compare import DumpComparison


@dataclass(slots=True)
class Record:
    """One row of the comparison (the ``records`` contract of docs/design.md): the plan, the
    comparison of its two sides (``None`` when the plan had nothing to compare), and the
    judgement of :func:`~.verdict.judge`."""

    plan: PairPlan
    result: PairResult | None
    verdict: str | None = None  #: "pass" / "warn" / "fail"; None when nothing was compared
    reasons: tuple[str, ...] = ()  #: why the verdict is not "pass"
    score: float | None = None  #: severity: ``red`` in eps of the measured format, or of ``budget``
    conversion: str | None = None  #: the conversions made before comparing, e.g. "fused NC1HWC0->NCHW"
    #: the narrower format the output was judged in (:func:`~.plan.budget_format`), where one applied
    budget: str | None = None

    @property
    def status(self) -> list[str]:
        """The planning codes, then the comparison's, each once; ``["OK"]`` when there are none."""
        codes = list(self.plan.status) + (self.result.status if self.result else [])
        return finish_status(list(dict.fromkeys(codes)))

    def fields(self) -> dict:
        """The record's fields of the ``records`` contract, its numbers as they are (NaN and
        infinities included), every value plain (Python numbers, strings, lists, dicts with string
        keys, ``None``): :meth:`to_json` makes them JSON's, and the report writer
        (:func:`~fpinspect.cli.output.indented_json`) encodes them as they are."""
        p, r = self.plan, self.result
        return {
            "kind": p.kind,
            "fused_op": p.fused_op,
            "fused_type": p.fused_type,
            "fused_index": p.fused_index,
            "origin_op": p.origin_op,
            "origin_index": p.origin_index,
            "status": self.status,
            "cosine": r.cosine if r else None,
            "max_abs": r.max_abs if r else None,
            "max_rel": r.max_rel if r else None,
            "metrics": {
                **(r.metrics_json() if r else {}),
                "worst": r.worst if r else [],
                "red_eps": self.score,
                **({"budget_format": self.budget} if self.budget else {}),
            },
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "message": p.message or (r.message if r else None),
            "conversion": self.conversion,
            "fused_file": p.fused_file.path if p.fused_file else None,
            "origin_file": p.origin_file.path if p.origin_file else None,
        }

    def to_json(self) -> dict:
        """:meth:`fields`, JSON-safe (:func:`~.pair.json_clean`)."""
        return json_clean(self.fields())


def _direct(fn: Callable, *args):
    return fn(*args)


class Sweep:
    """The records of ``plans``, each computed once by ``comparison.compute``.

    Plans are taken in order, except that plans put on ``demand`` (a queue the caller keeps
    filling, e.g. with the pairs of the op a user looks at) go first, newest first when it
    is a ``LifoQueue``. Iterating yields ``(record, demanded)`` as records are done. ``call``
    runs each computation of a comparable plan (``call(fn, plan)``; the inspector passes one
    that gives up when its worker is cancelled); plans with nothing to compare cost nothing
    and are computed directly. With ``jobs`` > 1, that many threads compute at once and
    records come in the order they finish. :attr:`done` counts the records yielded.
    """

    def __init__(
        self,
        comparison: DumpComparison,
        plans: list[PairPlan],
        *,
        demand: Queue | None = None,
        call: Callable = _direct,
        jobs: int = 1,
    ):
        self.comparison = comparison
        self.todo = list(plans)
        self.total = len(self.todo)
        self.demand = demand
        self.call = call
        self.jobs = max(1, jobs)
        self.done = 0
        self._position = 0
        self._seen: set[tuple] = set()
        self._lock = threading.Lock()

    def _next(self) -> tuple[PairPlan, bool] | None:
        """The next plan not computed yet (and whether it was demanded); ``None`` when none is left."""
        with self._lock:
            while True:
                plan, demanded = None, False
                if self.demand is not None:
                    try:
                        plan, demanded = self.demand.get_nowait(), True
                    except Empty:
                        pass
                if plan is None:
                    if self._position >= len(self.todo):
                        return None
                    plan = self.todo[self._position]
                    self._position += 1
                if plan.key not in self._seen:
                    self._seen.add(plan.key)
                    return plan, demanded

    def _compute(self, plan: PairPlan):
        compute = self.comparison.compute
        return self.call(compute, plan) if plan.comparable else compute(plan)

    def __iter__(self) -> Iterator[tuple[Record, bool]]:
        if self.jobs == 1:
            while (task := self._next()) is not None:
                record = self._compute(task[0])
                self.done += 1
                yield record, task[1]
            return
        yield from self._threaded()

    def _threaded(self) -> Iterator[tuple[Record, bool]]:
        finished: SimpleQueue = SimpleQueue()
        stop = threading.Event()

        def work() -> None:
            try:
                while not stop.is_set() and (task := self._next()) is not None:
                    finished.put((self._compute(task[0]), task[1]))
            except BaseException as exc:  # raised again in the consumer's thread
                finished.put(exc)
            finally:
                finished.put(None)

        threads = [
            threading.Thread(target=work, name=f"fpinspect-sweep-{i}", daemon=True) for i in range(self.jobs)
        ]
        for t in threads:
            t.start()
        running = len(threads)
        try:
            while running:
                item = finished.get()
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    self.done += 1
                    yield item
        finally:
            # not joined: an interrupted caller must not wait for a long pair; each thread stops
            # before its next plan
            stop.set()
