"""Computing many records on several processes: ``fpinspect compare --jobs N``.

A record's Python side (reading the pair's files, its statistics' bookkeeping, its verdict)
holds the GIL about as long as its compiled pass runs without it: threads sharing one
interpreter serialised on it, and on many small pairs ``--jobs 2`` was slower than one
thread. Worker processes share nothing but the work.

The workers are a :class:`~concurrent.futures.ProcessPoolExecutor` of forks of the caller,
made where the comparison is already loaded: its initializer hands each one the comparison and
the plans (inherited through the fork, never pickled), so a batch of work is sent as a range of
positions and comes back as the records' comparison results and judgements (a
:class:`~.records.Record` without its plan, which the caller already holds). A worker that dies
(killed, out of memory) breaks the pool: every batch not answered yet is computed by the caller
itself, so no pair is lost. The caller's interrupt or error stops every worker.
"""

from __future__ import annotations

import gc
import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from .plan import PairPlan
from .records import Record

if TYPE_CHECKING:
    from .compare import DumpComparison


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


# A worker's share of the caller, set by its initializer (in the worker only).
_work: tuple[DumpComparison, list[PairPlan]] | None = None


def _inherit(comparison: DumpComparison, plans: list[PairPlan]) -> None:
    """A worker's initializer: keep what it computes from; signals are its caller's business."""
    global _work
    _work = comparison, plans
    # ctrl+c reaches the whole process group, and a terminal's hangup too: the caller alone
    # answers them (and stops us); a SIGTERM sent to a worker ends it, as it would any process.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # The inherited objects stay where they are: a collection would touch (so copy) every page.
    gc.freeze()


def _portable(record: Record) -> tuple:
    """What a worker sends back of one record: everything but the plan."""
    return (record.result, record.verdict, record.reasons, record.score, record.conversion, record.budget)


def _compute_batch(positions: range) -> list[tuple]:
    comparison, plans = _work
    return [_portable(comparison.record_of(plans[i])) for i in positions]


def compute_in_processes(
    comparison: DumpComparison,
    plans: list[PairPlan],
    sizes: list[int],
    jobs: int,
    done: Callable[[PairPlan, Record], None],
) -> int:
    """Compute the records of ``plans`` (``sizes``: their bytes) on ``jobs`` worker processes,
    calling ``done(plan, record)`` for each as its batch comes back (in no fixed order).
    Returns how many pairs this process computed because a worker died."""
    if not plans:
        return 0
    # The first pair here, before the workers fork: a compile its kernels need (a first run on
    # this machine) happens once, in this process, and the workers inherit the compiled code
    # instead of each compiling it again at the same time.
    done(plans[0], comparison.record_of(plans[0]))
    plans, sizes = plans[1:], sizes[1:]
    runs = batches(sizes)
    if not runs:
        return 0
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(runs)),
        mp_context=multiprocessing.get_context("fork"),
        initializer=_inherit,
        initargs=(comparison, plans),
    )
    pending: dict[Future, range] = {}
    stopped, recomputed = False, 0
    try:
        pending = {pool.submit(_compute_batch, run): run for run in runs}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                run = pending.pop(future)
                try:
                    records = future.result()
                except BrokenProcessPool:  # a worker died: this batch is computed here
                    records = [_portable(comparison.record_of(plans[i])) for i in run]
                    recomputed += len(run)
                for i, rest in zip(run, records):
                    done(plans[i], Record(plans[i], *rest))
        stopped = True
    finally:
        if not stopped:  # interrupted or failed: no worker finishes its batch
            for child in set(multiprocessing.active_children()) - before:
                child.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
    return recomputed


__all__ = ["BATCH_BYTES", "BATCH_PAIRS", "batches", "can_fork", "compute_in_processes"]
