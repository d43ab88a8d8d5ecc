"""Connecting to a Dask cluster: ``fpinspect compare --scheduler ADDRESS|local:N``.

For dump trees too large for one machine: the graphs are loaded and every pair planned here (the
client); the pairs travel to the cluster's workers in batches through the client's own executor
(:class:`~.executing.OnDask`), each worker reads the pairs' dump files itself from storage every
worker sees, and the records come back as each batch is done. A plan holds paths and tensor
descriptions only, so it pickles small; a record comes back without its plan (the client holds
it). A worker that dies or leaves mid-run loses no pair: the scheduler runs its batches again on
the others, and the run names the workers whose leaving made it do so (from the scheduler's own
``remove-worker`` events, never from a snapshot of its worker list, which a periodic refresh can
replace by one listing none).

Dask is an optional extra (``pip install 'fpinspect[cluster]'``): this module imports it only
when a cluster is asked for. Interrupted, the client cancels every batch not done and closes its
connection (and a local cluster). A scheduler lost mid-run is a :class:`ClusterError`, as is an
address where no Dask scheduler answers within :data:`CONNECT_TIMEOUT` s or a scheduler no
worker joins within :data:`WORKERS_TIMEOUT` s.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import sys
from collections.abc import Iterator

from ..errors import InputError

#: How long the client waits for a scheduler to answer before it says it cannot be reached (seconds;
#: said in compare's --scheduler help, as is the next).
CONNECT_TIMEOUT = 5
#: How long the client waits for a scheduler's first worker (seconds).
WORKERS_TIMEOUT = 60
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
def connect(
    address: str, *, timeout: float = CONNECT_TIMEOUT, workers_timeout: float = WORKERS_TIMEOUT
) -> Iterator:
    """A Dask client of the scheduler at ``address``, or of a :class:`~distributed.LocalCluster`
    of N worker processes started here for ``local:N``; both closed on leaving. Raises
    :class:`ClusterError` when no Dask scheduler answers at ``address`` within ``timeout`` s
    (nothing listens, or another service does), or when no worker has joined it within
    ``workers_timeout`` s."""
    distributed = _distributed()
    # Dask logs on stderr what the run reports itself (a lost scheduler, a worker gone), with
    # tracebacks: the user's terminal gets the run's sentences alone.
    with distributed.utils.silence_logging_cmgr(logging.CRITICAL):
        yield from _connected(distributed, address, timeout, workers_timeout)


def _connected(distributed, address: str, timeout: float, workers_timeout: float) -> Iterator:
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
    what = f"--scheduler {address}"
    _identify(address, timeout, what)
    try:
        client = distributed.Client(address, timeout=timeout)
    except Exception as exc:  # whatever the connection met, it is one sentence
        raise ClusterError(what, f"cannot be reached ({_said(exc)})") from None
    try:
        try:
            client.wait_for_workers(1, timeout=workers_timeout)
        except TimeoutError:
            raise ClusterError(what, f"has no workers: none joined it within {workers_timeout:g} s") from None
        yield client
    finally:
        with contextlib.suppress(Exception):  # a scheduler gone already: nothing to close politely
            client.close(timeout=timeout)


def _said(exc: BaseException) -> str:
    """``TypeName: message``, or the type's name alone, for a sentence."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _identify(address: str, timeout: float, what: str) -> None:
    """Ask whatever listens at ``address`` who it is, as a Dask scheduler is asked, all of it
    within ``timeout`` s: Dask's own handshake waits without end for a peer that accepts and
    stays silent, and reads a peer that greets first (an SSH server) as a frame of any length.
    Raises :class:`ClusterError` unless a scheduler answers."""
    import asyncio
    import socket

    from distributed.comm import connect as open_comm
    from distributed.comm.addressing import parse_address, parse_host_port

    # a plain TCP connection first: Dask's connect retries a refused port until its timeout, which
    # the handshake's timeout below would then read as a peer that accepts and stays silent
    scheme, location = parse_address(address)
    if scheme in ("tcp", "tls"):
        try:
            socket.create_connection(parse_host_port(location), timeout=timeout).close()
        except OSError as exc:
            raise ClusterError(what, f"cannot be reached ({_said(exc)})") from None

    async def identity():
        comm = await open_comm(address, timeout=timeout)
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        finally:
            comm.abort()

    try:
        reply = asyncio.run(asyncio.wait_for(identity(), timeout))
    except TimeoutError:  # connected, then no handshake: Dask's own timeout is an OSError
        raise ClusterError(
            what, f"accepts connections but does not answer as a Dask scheduler does within {timeout:g} s"
        ) from None
    except OSError as exc:
        raise ClusterError(what, f"cannot be reached ({_said(exc)})") from None
    except Exception:  # a peer's garbage frame can fail anywhere in the protocol
        reply = None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise ClusterError(
            what, "answers, but not as a Dask scheduler does: is another service listening there?"
        )


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
            preload=[__name__],  # each worker runs this module's dask_setup as it starts
        )


def dask_setup(worker) -> None:
    """A local cluster's worker, as it starts (Dask's preload hook): ctrl+c and a terminal's hangup
    reach every process of the job, and the client alone answers them (it cancels the work and
    closes the cluster); a worker that took ctrl+c itself would print its own traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
