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
import re
from collections.abc import Callable, Iterator
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
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
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


def _portable(record: Record) -> tuple:
    return (record.result, record.verdict, record.reasons, record.score, record.conversion)


def compute_batch(plans: list[PairPlan], thresholds: ThresholdTable, worst: int, kl: bool) -> list[tuple]:
    """A worker's task: the records of ``plans``, each without its plan (what goes wrong with one
    pair is that pair's ``COMPUTE_ERROR``, as on one machine)."""
    from .compare import compute_record, contained

    return [_portable(contained(p, lambda p=p: compute_record(p, thresholds, worst, kl))) for p in plans]


def compute_on_cluster(
    client,
    plans: list[PairPlan],
    sizes: list[int],
    settings: tuple[ThresholdTable, int, bool],
    done: Callable[[PairPlan, Record], None],
) -> list[str]:
    """Compute the records of ``plans`` (``sizes``: their bytes) on ``client``'s cluster, calling
    ``done(plan, record)`` as each batch comes back. Returns the addresses of the workers that
    left during the run (their batches were run again elsewhere)."""
    distributed = _distributed()
    workers = set(client.scheduler_info().get("workers", {}))
    runs = batches(sizes)
    futures = {}
    finished = False
    try:
        for run in runs:
            part = [plans[i] for i in run]
            futures[client.submit(compute_batch, part, *settings, pure=False)] = run
        for future in distributed.as_completed(list(futures)):
            run = futures[future]
            for i, rest in zip(run, future.result()):
                done(plans[i], Record(plans[i], *rest))
        finished = True
    finally:
        if not finished:  # interrupted or failed: nothing keeps running for us
            client.cancel(list(futures), force=True)
    now = set(client.scheduler_info().get("workers", {}))
    return sorted(workers - now)
