"""Computing records on a Dask cluster: ``fpinspect compare --scheduler ADDRESS|local:N``.

For dump trees too large for one machine: the graphs are loaded and every pair planned here (the
client); the pairs travel to the cluster's workers in batches (:func:`~.workers.batches`), each
worker reads the pairs' dump files itself from storage every worker sees, and the records come
back as each batch is done. A plan holds paths and tensor descriptions only, so it pickles small;
a record comes back without its plan (the client holds it).

Dask is an optional extra (``pip install 'fpinspect[cluster]'``): this module imports it only
when a cluster is asked for. A worker that dies or leaves mid-run loses no pair: the scheduler
runs its batches again on the others (the run says how many workers left). Interrupted, the
client cancels every batch not done and closes its connection (and a local cluster).
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import InputError
from .plan import PairPlan
from .records import Record
from .workers import batches

if TYPE_CHECKING:
    from .verdict import ThresholdTable

#: How long the client waits for a scheduler before it says it cannot be reached (seconds).
CONNECT_TIMEOUT = 5
_LOCAL = re.compile(r"local:(\d+)")


class ClusterError(InputError):
    """The cluster cannot be used: not installed, unreachable, or a bad ``--scheduler``."""

    def __init__(self, what: str, problem: str):
        super().__init__(what, problem, "CLUSTER_ERROR")


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError(
            "--scheduler", "needs Dask: install it with pip install 'fpinspect[cluster]'"
        ) from None
    return distributed


@contextlib.contextmanager
def connect(address: str) -> Iterator:
    """A Dask client of the scheduler at ``address``, or of a :class:`~distributed.LocalCluster`
    of N worker processes started here for ``local:N``; both closed on leaving. Raises
    :class:`ClusterError` when the scheduler cannot be reached within :data:`CONNECT_TIMEOUT` s."""
    distributed = _distributed()
    local = _LOCAL.fullmatch(address.strip())
    if local:
        workers = int(local.group(1))
        if not 1 <= workers <= 256:
            raise ClusterError("--scheduler", f"local:{workers} asks for {workers} workers; give 1 to 256")
        cluster = _local_cluster(distributed, workers)
        try:
            with distributed.Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(
            f"--scheduler {address}", f"cannot be reached ({type(exc).__name__}: {exc})".rstrip(": ()")
        ) from None
    try:
        yield client
    finally:
        client.close()


def _local_cluster(distributed, workers: int):
    """A :class:`~distributed.LocalCluster` of ``workers`` single-threaded worker processes. On
    Linux they are forks of this process (Dask's ``multiprocessing-method``; spawning is its
    default): a fork starts in a fraction of the time and inherits the comparison code already
    imported here instead of importing it again, and its nanny stops it at once at the end."""
    import dask

    from . import compare  # noqa: F401  (imported before the fork, so the workers have it)

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        return distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: never a clash with another cluster here
            # Its workers' log lines (a heartbeat that meets the closing scheduler logs a
            # traceback) are not the user's business: what matters, the run reports itself.
            silence_logs=logging.CRITICAL,
        )


def _portable(record: Record) -> tuple:
    return (record.result, record.verdict, record.reasons, record.score, record.conversion, record.budget)


@dataclass(frozen=True)
class BatchRecords:
    """A batch's records, without their plans, as one object: Dask serialises a returned list item
    by item, which costs the worker and the client more than the statistics of a small pair."""

    records: list[tuple]


def compute_batch(plans: list[PairPlan], thresholds: ThresholdTable, worst: int, kl: bool) -> BatchRecords:
    """A worker's task: the records of ``plans`` (what goes wrong with one pair is that pair's
    ``COMPUTE_ERROR``, as on one machine)."""
    from .compare import compute_record, contained

    return BatchRecords(
        [_portable(contained(p, lambda p=p: compute_record(p, thresholds, worst, kl))) for p in plans]
    )


@dataclass
class Submitted:
    """One comparison's batches on the cluster: each future and the positions of its plans."""

    plans: list[PairPlan]
    futures: dict = field(default_factory=dict)
    workers: set[str] = field(default_factory=set)

    def cancel(self, client) -> None:
        client.cancel(list(self.futures), force=True)


def submit(
    client, plans: list[PairPlan], sizes: list[int], settings: tuple[ThresholdTable, int, bool]
) -> Submitted:
    """Send the records of ``plans`` (``sizes``: their bytes) to ``client``'s cluster in batches,
    without waiting for them: the client can plan the next comparison meanwhile."""
    job = Submitted(plans, workers=set(client.scheduler_info().get("workers", {})))
    try:
        for run in batches(sizes):
            part = [plans[i] for i in run]
            job.futures[client.submit(compute_batch, part, *settings, pure=False)] = run
    except BaseException:
        job.cancel(client)
        raise
    return job


def collect(client, job: Submitted, done: Callable[[PairPlan, Record], None]) -> list[str]:
    """Wait for ``job``, calling ``done(plan, record)`` as each batch comes back. Returns the
    addresses of the workers that left meanwhile (their batches were run again elsewhere).
    Interrupted or failed, it cancels every batch of ``job`` not done."""
    distributed = _distributed()
    finished = False
    try:
        for future in distributed.as_completed(list(job.futures)):
            run = job.futures[future]
            for i, rest in zip(run, future.result().records):
                done(job.plans[i], Record(job.plans[i], *rest))
        finished = True
    finally:
        if not finished:  # interrupted or failed: nothing keeps running for us
            job.cancel(client)
    now = set(client.scheduler_info().get("workers", {}))
    return sorted(job.workers - now)
