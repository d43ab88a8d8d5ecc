"""Computing the records of many plans over any :class:`concurrent.futures.Executor`.

One loop (:class:`Records`) sends the plans to an executor in batches and yields each record
as its batch is done; what differs between executors is a small strategy object (a
:class:`Way`): what a task carries, what a failed task means, how interrupted work is stopped.

* :class:`InlineExecutor`, in the caller's thread (``--jobs 1``, the inspector): a batch is one
  plan, sent when the one before is yielded, so a demand queue (the pairs of the op the user
  looks at) is taken first and whatever the caller does between records runs between them.
* a :class:`~concurrent.futures.ThreadPoolExecutor` where this process cannot fork
  (:func:`can_fork`): one plan a batch, a few per thread in flight (:class:`InProcess`).
* a :class:`~concurrent.futures.ProcessPoolExecutor` of forks of the caller (:class:`Forked`,
  ``compare --jobs N``). A record's Python side (reading the files, its statistics'
  bookkeeping, its verdict) holds the GIL about as long as its compiled pass runs without it:
  threads serialised on it, and on many small pairs ``--jobs 2`` was slower than one thread.
  The workers are made where the comparison is already loaded: their initializer hands each
  one the comparison and the plans (inherited through the fork, never pickled), so a task is a
  batch of positions, and comes back as the records without their plans (:func:`_portable`).
  A worker that dies (killed, out of memory) breaks the pool: every batch not answered yet is
  computed by the caller itself, so no pair is lost.
* Dask's own ``client.get_executor()`` (:class:`OnDask`, ``compare --scheduler``): a task is a
  batch of pickled plans with the judging settings, computed by whichever worker the scheduler
  picks; a worker that dies or leaves loses no pair (the scheduler runs its batches again on the
  others), and the run names it from the scheduler's ``remove-worker`` events. A scheduler lost
  mid-run is a :class:`~.cluster.ClusterError`.

Interrupted (ctrl+c) or failed, the loop stops every batch not done: a fork's workers are
terminated, a pool's queued batches cancelled, a cluster's batches cancelled on the scheduler.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import signal
import sys
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from queue import Empty, Queue
from typing import TYPE_CHECKING

from .plan import PairPlan
from .records import Record

if TYPE_CHECKING:
    from .cluster import ClusterError
    from .compare import DumpComparison
    from .verdict import ThresholdTable


def can_fork() -> bool:
    """Whether a worker can be a fork of this process: on Linux, while this is the only thread (a
    fork copies no other thread, and a lock one of them held would stay held in the child)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


#: At most this many pairs per batch ...
BATCH_PAIRS = 64
#: ... and at most this many bytes of fusion-on dump files (a larger pair is a batch alone).
BATCH_BYTES = 16 << 20


def batches(sizes: list[int]) -> list[range]:
    """Consecutive runs of positions ``0 .. len(sizes) - 1`` of at most :data:`BATCH_PAIRS`
    pairs and :data:`BATCH_BYTES` bytes (``sizes``: each pair's bytes), at least one pair each."""
    out: list[range] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and (i - start >= BATCH_PAIRS or total + size > BATCH_BYTES):
            out.append(range(start, i))
            start, total = i, 0
        total += size
    if start < len(sizes):
        out.append(range(start, len(sizes)))
    return out


def _portable(record: Record) -> tuple:
    """What a worker sends back of one record: everything but the plan (the caller holds it)."""
    return (record.result, record.verdict, record.reasons, record.score, record.conversion, record.budget)


class InlineExecutor(Executor):
    """An executor that runs each call at once, in the caller's thread, as it is submitted: the
    future it returns is done. What the call raises is the future's exception; an interrupt
    (a :class:`BaseException` that is no :class:`Exception`) is raised at once."""

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        future: Future = Future()
        future.set_running_or_notify_cancel()
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            future.set_exception(exc)
        else:
            future.set_result(result)
        return future


class Way(ABC):
    """How records are computed on one kind of executor (a strategy of :class:`Records`).

    ``batched``: plans travel in :func:`batches` (else one by one, in demand order); ``ahead``:
    at most this many batches in flight (``None``: every batch sent at once)."""

    batched: bool = False
    ahead: int | None = 1
    #: the first plan is computed in the caller before any batch is sent (a way that says so
    #: defines ``here(plans, positions)``, the records computed in the caller: :class:`Forked`)
    first_here: bool = False

    @abstractmethod
    def submit(self, executor: Executor, plans: list[PairPlan], positions: list[int]) -> Future:
        """Send the batch of ``plans`` at ``positions``."""

    def records(self, plans: list[PairPlan], positions: list[int], result) -> list[Record]:
        """The records of a batch from what its task returned."""
        return [Record(plans[i], *rest) for i, rest in zip(positions, result)]

    def failed(self, plans: list[PairPlan], positions: list[int], exc: Exception) -> list[Record]:
        """The records of a batch whose task failed with ``exc``, or an exception to end the run."""
        raise exc

    def finished(self) -> list[str]:
        """Once every record is in: what the run met, a sentence each, for the report's warnings."""
        return []

    def stop(self, executor: Executor) -> None:
        """Interrupted or failed: nothing keeps running for us."""
        executor.shutdown(wait=False, cancel_futures=True)


def _direct(fn: Callable, *args):
    return fn(*args)


class InProcess(Way):
    """In this process (the inline executor, or threads): each plan's record by
    ``comparison.compute`` (cached, and thread-safe), one plan a batch. ``call`` runs each
    computation of a comparable plan (``call(fn, plan)``; the inspector's keeps what the first
    one builds out of the collector's way); plans with nothing to compare cost nothing and are
    computed directly."""

    def __init__(self, comparison: DumpComparison, call: Callable = _direct, ahead: int = 1):
        self.comparison = comparison
        self.call = call
        self.ahead = ahead

    def submit(self, executor, plans, positions):
        return executor.submit(self._batch, [plans[i] for i in positions])

    def _batch(self, plans: list[PairPlan]) -> list[Record]:
        compute = self.comparison.compute
        return [self.call(compute, p) if p.comparable else compute(p) for p in plans]

    def records(self, plans, positions, result):
        return result


# A fork worker's share of the caller, set by its initializer (in the worker only).
_work: tuple[DumpComparison, list[PairPlan]] | None = None


def _inherit(comparison: DumpComparison, plans: list[PairPlan]) -> None:
    """A fork worker's initializer: keep what it computes from; signals are its caller's business."""
    global _work
    _work = comparison, plans
    # ctrl+c reaches the whole process group, and a terminal's hangup too: the caller alone
    # answers them (and stops us); a SIGTERM sent to a worker ends it, as it would any process.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # The inherited objects stay where they are: a collection would touch (so copy) every page.
    gc.freeze()


def _forked_batch(positions: list[int]) -> list[tuple]:
    comparison, plans = _work
    return [_portable(comparison.record_of(plans[i])) for i in positions]


class Forked(Way):
    """On :meth:`pool`, a pool of forks of this process that inherit ``comparison`` and the plans:
    a task is a batch of positions. A batch whose worker died is computed here. The first pair is
    computed here too, before the workers fork: a compile its kernels need (a first run on this
    machine) happens once, in this process, and the workers inherit the compiled code instead of
    each compiling it again at the same time."""

    batched = True
    ahead = None
    first_here = True

    def __init__(self, comparison: DumpComparison):
        self.comparison = comparison
        self.recomputed = 0
        self._before: set = set()

    def pool(self, plans: list[PairPlan], workers: int) -> ProcessPoolExecutor:
        """The fork pool of ``workers`` processes computing ``plans`` (made here, forked at its
        first batch: call it where the comparison is loaded)."""
        self._before = set(multiprocessing.active_children())
        return ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_inherit,
            initargs=(self.comparison, plans),
        )

    def submit(self, executor, plans, positions):
        return executor.submit(_forked_batch, positions)

    def failed(self, plans, positions, exc):
        if not isinstance(exc, BrokenProcessPool):
            raise exc
        self.recomputed += len(positions)  # a worker died: this batch is computed here
        return self.here(plans, positions)

    def here(self, plans: list[PairPlan], positions: list[int]) -> list[Record]:
        """The records of the plans at ``positions`` computed in the caller."""
        return [self.comparison.record_of(plans[i]) for i in positions]

    def finished(self):
        if not self.recomputed:
            return []
        return [
            f"a worker process died (killed or out of memory); its {self.recomputed} pairs were "
            "compared by the main process instead"
        ]

    def stop(self, executor):
        children = set(multiprocessing.active_children()) - self._before
        for child in children:  # no worker finishes its batch
            child.terminate()
        for child in children:
            child.join(timeout=5)
        # A worker ended while it wrote a batch's records leaves part of a message in the result
        # pipe, and the pool's manager thread waits in recv() for the rest: the pipe's one writer
        # left, this process's copy, is closed so that it reads an end of file instead (the pool
        # then calls itself broken and stops), rather than shutdown() waiting for it forever.
        writer = getattr(getattr(executor, "_result_queue", None), "_writer", None)
        if writer is not None and not any(child.is_alive() for child in children):
            with contextlib.suppress(OSError):
                writer.close()
        executor.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class _BatchRecords:
    """A batch's records, without their plans, as one object: Dask serialises a returned list item
    by item, which costs the worker and the client more than the statistics of a small pair."""

    records: list[tuple]


def _judged_batch(plans: list[PairPlan], thresholds: ThresholdTable, worst: int, kl: bool) -> _BatchRecords:
    """A cluster worker's task: the records of ``plans`` (what goes wrong with one pair is that
    pair's ``COMPUTE_ERROR``, as on one machine)."""
    from .compare import compute_record, contained

    return _BatchRecords(
        [_portable(contained(p, lambda p=p: compute_record(p, thresholds, worst, kl))) for p in plans]
    )


class OnDask(Way):
    """On a Dask cluster through ``client``'s own executor (:meth:`executor`): a task is a batch of
    pickled plans with the judging ``settings`` (thresholds, worst, kl), under a key of this run
    so that the scheduler's ``remove-worker`` events name the workers whose leaving made it run
    one of them again. A failed batch (the scheduler gone) ends the run with a
    :class:`~.cluster.ClusterError`."""

    batched = True
    ahead = None

    def __init__(self, client, settings: tuple[ThresholdTable, int, bool]):
        self.client = client
        self.settings = settings
        self._run = f"fpinspect-records-{uuid.uuid4().hex}"
        self._keys: set[str] = set()

    def executor(self) -> Executor:
        return self.client.get_executor(pure=False)

    def submit(self, executor, plans, positions):
        key = f"{self._run}-{len(self._keys)}"
        self._keys.add(key)
        try:
            return executor.submit(_judged_batch, [plans[i] for i in positions], *self.settings, key=key)
        except Exception as exc:
            raise self.lost(exc) from None

    def records(self, plans, positions, result):
        return [Record(plans[i], *rest) for i, rest in zip(positions, result.records)]

    def failed(self, plans, positions, exc):
        raise self.lost(exc) from None

    def lost(self, exc: Exception) -> ClusterError:
        """The sentence for a cluster that failed mid-run (``exc``: what the client raised)."""
        from .cluster import ClusterError, _said

        client = self.client
        address = getattr(client.scheduler, "address", None) or "the scheduler"
        if client.status != "running":
            return ClusterError(
                f"--scheduler {address}", "closed the connection mid-run: nothing was reported"
            )
        return ClusterError(f"--scheduler {address}", f"failed mid-run ({_said(exc)}): nothing was reported")

    def finished(self):
        try:
            events = self.client.get_events("all")
        except Exception as exc:
            raise self.lost(exc) from None
        left = set()
        for _, event in events:
            if isinstance(event, dict) and event.get("action") == "remove-worker":
                rerun = {*event.get("processing-tasks", ()), *event.get("lost-computed-tasks", ())}
                if self._keys & rerun:
                    left.add(event.get("worker"))
        if not left:
            return []
        return [
            f"{len(left)} cluster worker(s) left during the run ({', '.join(sorted(left))}); "
            "the scheduler compared their pairs on the others"
        ]

    def stop(self, executor):
        """Cancel every batch not done; nothing to do where the connection is gone."""
        if self.client.status == "running":
            with contextlib.suppress(Exception):  # gone meanwhile: nothing runs for us any more
                executor.shutdown(wait=False)


class Records:
    """The records of ``plans`` computed over ``executor`` the ``way`` says; iterating yields
    ``(record, demanded)`` as each batch is done (in the order they finish), once per plan.

    Batches are taken in order (for a :attr:`Way.batched` way, :func:`batches` of ``sizes``,
    each plan's bytes), except that plans put on ``demand`` (a queue
    the caller keeps filling, e.g. with the pairs of the op a user looks at) go first, newest
    first when it is a ``LifoQueue``, each a batch alone. :meth:`start` sends the first batches
    without waiting (for a cluster: every batch, so that it computes while the caller plans the
    next comparison); :meth:`close` stops what was sent and not done. ``owned``: the executor
    is shut down at the end. :attr:`done` counts the records yielded, :attr:`total` the plans;
    :attr:`warnings`, once every record is in, what the run met (a worker died or left)."""

    def __init__(
        self,
        plans: list[PairPlan],
        executor: Executor,
        way: Way,
        *,
        demand: Queue | None = None,
        sizes: list[int] | None = None,
        owned: bool = False,
    ):
        self.plans = list(plans)
        self.executor = executor
        self.way = way
        self.demand = demand
        self.owned = owned
        self.total = len(self.plans)
        self.done = 0
        self.warnings: list[str] = []
        first = min(int(way.first_here), len(self.plans))
        #: the positions computed in the caller before any batch is sent
        self._here = list(range(first))
        if way.batched:
            sized = sizes[first:] if sizes is not None else [0] * (len(self.plans) - first)
            self._order: Iterator[range] = (range(r.start + first, r.stop + first) for r in batches(sized))
        else:
            self._order = (range(i, i + 1) for i in range(first, len(self.plans)))
        self._seen: set[tuple] = set()
        self._positions: dict[tuple, int] | None = None
        self._pending: dict[Future, tuple[list[int], bool]] = {}
        self._closed = False

    def _next(self) -> tuple[list[int], bool] | None:
        """The positions of the next batch not computed yet (and whether it was demanded)."""
        while self.demand is not None:
            try:
                plan = self.demand.get_nowait()
            except Empty:
                break
            if plan.key in self._seen:
                continue
            self._seen.add(plan.key)
            if self._positions is None:
                self._positions = {p.key: i for i, p in enumerate(self.plans)}
            at = self._positions.get(plan.key)
            if at is None:  # a plan beyond the list: computed all the same
                at = self._positions[plan.key] = len(self.plans)
                self.plans.append(plan)
            return [at], True
        for run in self._order:
            plans, seen = self.plans, self._seen
            positions = [i for i in run if plans[i].key not in seen]
            if positions:
                seen.update(plans[i].key for i in positions)
                return positions, False
        return None

    def start(self) -> None:
        """Send batches until :attr:`Way.ahead` are in flight (or none is left)."""
        ahead = self.way.ahead
        while ahead is None or len(self._pending) < ahead:
            batch = self._next()
            if batch is None:
                return
            self._pending[self.way.submit(self.executor, self.plans, batch[0])] = batch

    def close(self) -> None:
        """Stop every batch sent and not done (the executor's own way), or, where none is left,
        shut down an executor made for these records; once. Leaving a ``with`` block of the
        records closes them, however the block ends (an interrupt in the caller's own code
        between two records stops the workers too)."""
        if not self._closed:
            self._closed = True
            if self._pending:
                self.way.stop(self.executor)
            elif self.owned:
                self.executor.shutdown(wait=True)

    def __enter__(self) -> Records:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self) -> Iterator[tuple[Record, bool]]:
        way, pending = self.way, self._pending
        try:
            if self._here:
                here, self._here = self._here, []
                self._seen.update(self.plans[i].key for i in here)
                for record in way.here(self.plans, here):
                    self.done += 1
                    yield record, False
            self.start()
            while pending:
                if len(pending) == 1 and next(iter(pending)).done():  # one by one (the inline executor)
                    finished = list(pending)  # wait() would make five objects more for the collector
                else:
                    finished = wait(pending, return_when=FIRST_COMPLETED)[0]
                for future in finished:
                    positions, demanded = pending.pop(future)
                    try:
                        records = way.records(self.plans, positions, future.result())
                    except Exception as exc:  # the task failed (or its result cannot be read)
                        records = way.failed(self.plans, positions, exc)
                    for record in records:
                        self.done += 1
                        yield record, demanded
                self.start()
            self.warnings = way.finished()
        finally:  # done, or interrupted or failed: then no batch of ours keeps running
            self.close()


def inline(
    comparison: DumpComparison,
    plans: list[PairPlan],
    *,
    demand: Queue | None = None,
    call: Callable = _direct,
) -> Records:
    """The records of ``plans`` computed one by one in the caller's thread, ``demand`` first."""
    return Records(plans, InlineExecutor(), InProcess(comparison, call), demand=demand)


def on_threads(
    comparison: DumpComparison,
    plans: list[PairPlan],
    jobs: int,
    *,
    demand: Queue | None = None,
    call: Callable = _direct,
) -> Records:
    """The records of ``plans`` computed on ``jobs`` threads of this process, ``demand`` first."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="fpinspect-records")
    return Records(plans, pool, InProcess(comparison, call, ahead=2 * jobs), demand=demand, owned=True)


def in_forks(comparison: DumpComparison, plans: list[PairPlan], sizes: list[int], jobs: int) -> Records:
    """The records of ``plans`` (``sizes``: their bytes) computed on ``jobs`` forks of this
    process (:func:`can_fork` must hold), a batch of positions a task."""
    way = Forked(comparison)
    workers = max(1, min(jobs, len(batches(sizes[1:]))))
    return Records(plans, way.pool(plans, workers), way, sizes=sizes, owned=True)


def on_dask(client, comparison: DumpComparison, plans: list[PairPlan], sizes: list[int]) -> Records:
    """The records of ``plans`` (``sizes``: their bytes) computed on ``client``'s Dask cluster,
    every batch sent at once (:meth:`Records.start`)."""
    way = OnDask(client, (comparison.thresholds, comparison.worst, comparison.kl))
    records = Records(plans, way.executor(), way, sizes=sizes)
    try:
        records.start()
    except BaseException:
        records.close()
        raise
    return records


__all__ = [
    "BATCH_BYTES",
    "BATCH_PAIRS",
    "Forked",
    "InProcess",
    "InlineExecutor",
    "OnDask",
    "Records",
    "Way",
    "batches",
    "can_fork",
    "in_forks",
    "inline",
    "on_dask",
    "on_threads",
]
