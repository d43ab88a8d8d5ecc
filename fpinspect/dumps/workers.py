"""Computing many records on several processes: ``fpinspect compare --jobs N``.

A record's Python side (reading the pair's files, its statistics' bookkeeping, its verdict)
holds the GIL about as long as its compiled pass runs without it: threads sharing one
interpreter serialised on it, and on many small pairs ``--jobs 2`` was slower than one
thread. Worker processes share nothing but the work.

The workers are forks of the caller, made where the comparison is already loaded: they
inherit its graphs, dump indices and plans, so a batch of work is sent as its number and
comes back as the records' comparison results and judgements (a :class:`~.records.Record`
without its plan, which the caller already holds). Batches are handed out one at a time to
whichever worker is free. A worker that dies (killed, out of memory) leaves its batch to the
caller, which computes it itself; the caller's interrupt or error stops every worker.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import wait
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


# What the workers inherit: set just before they fork, cleared once they are done.
_comparison: DumpComparison | None = None
_plans: list[PairPlan] = []
_batches: list[range] = []


def _portable(record: Record) -> tuple:
    """What a worker sends back of one record: everything but the plan."""
    return (record.result, record.verdict, record.reasons, record.score, record.conversion)


def _serve(conn) -> None:
    """A worker: compute each batch whose number arrives, send back its records, until ``None``."""
    # Ctrl+C reaches the whole process group: the caller alone answers it (and stops us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The inherited objects stay where they are: a collection would touch (so copy) every page.
    gc.freeze()
    try:
        while (n := conn.recv()) is not None:
            conn.send([_portable(_comparison.record_of(_plans[i])) for i in _batches[n]])
    except BaseException:  # the caller computes the batch itself; a traceback here would say nothing
        os._exit(1)


def compute_in_processes(
    comparison: DumpComparison,
    plans: list[PairPlan],
    sizes: list[int],
    jobs: int,
    done: Callable[[PairPlan, Record], None],
) -> None:
    """Compute the records of ``plans`` (``sizes``: their bytes) on ``jobs`` worker processes,
    calling ``done(plan, record)`` for each as its batch comes back (in no fixed order)."""
    global _comparison, _plans, _batches
    if not plans:
        return
    # The first pair here, before the workers fork: a compile its kernels need (a first run on
    # this machine) happens once, in this process, and the workers inherit the compiled code
    # instead of each compiling it again at the same time.
    done(plans[0], comparison.record_of(plans[0]))
    plans, sizes = plans[1:], sizes[1:]
    _comparison, _plans, _batches = comparison, plans, batches(sizes)
    context = multiprocessing.get_context("fork")
    todo = iter(range(len(_batches)))
    working: dict = {}  # connection -> (process, number of the batch it computes)
    stopped = []  # every worker started, to stop and reap at the end

    def finish(n: int, records: list[tuple] | None) -> None:
        for i, rest in zip(_batches[n], records) if records is not None else ():
            done(_plans[i], Record(_plans[i], *rest))
        if records is None:  # a worker died with it: computed here
            for i in _batches[n]:
                done(_plans[i], comparison.record_of(_plans[i]))

    def give(conn, proc) -> None:
        """Send ``proc`` the next batch (or its stop); a worker that cannot take it is gone."""
        n = next(todo, None)
        try:
            conn.send(n)
        except OSError:
            if n is not None:
                finish(n, None)
            return
        if n is not None:
            working[conn] = (proc, n)

    try:
        for _ in range(min(jobs, len(_batches))):
            mine, theirs = context.Pipe()
            proc = context.Process(target=_serve, args=(theirs,), name="fpinspect-compare", daemon=True)
            proc.start()
            theirs.close()
            stopped.append((proc, mine))
            give(mine, proc)
        while working:
            by_sentinel = {proc.sentinel: conn for conn, (proc, _) in working.items()}
            for ready in wait([*working, *by_sentinel]):
                conn = by_sentinel.get(ready, ready)
                if conn not in working:
                    continue  # both its connection and its sentinel were ready: answered already
                proc, n = working.pop(conn)
                try:
                    records = conn.recv()
                except (EOFError, OSError):  # it died
                    finish(n, None)
                    continue
                finish(n, records)
                give(conn, proc)
        for n in todo:  # batches left when no worker was
            finish(n, None)
    finally:
        for proc, conn in stopped:
            if proc.is_alive():
                proc.terminate()
            proc.join()
            conn.close()
        _comparison, _plans, _batches = None, [], []


__all__ = ["BATCH_BYTES", "BATCH_PAIRS", "batches", "can_fork", "compute_in_processes"]
