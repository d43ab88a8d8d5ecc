"""Calls that cannot be interrupted halfway (reading a large graph, comparing a large pair)
run on daemon threads, so that quitting never waits for one to finish.

A Textual thread worker cannot be stopped from outside: it must return by itself, and the
interpreter waits for it at exit. So a worker hands such a call to :func:`call` and waits in
short steps; once the worker is cancelled it gives up and returns, and the daemon thread is
dropped with the process (its result, if it ever comes, lands in the comparison's cache).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as StillRunning
from queue import SimpleQueue
from typing import TypeVar

from textual.worker import get_current_worker

T = TypeVar("T")

#: Daemon threads serving calls: loading, the sweep, a drill-down and an export at once.
THREADS = 4
#: Seconds between checks of the waiting worker's cancellation.
POLL = 0.05


class Cancelled(Exception):
    """The waiting worker was cancelled before the call finished."""


_jobs: SimpleQueue = SimpleQueue()
_started = threading.Lock()
_threads: list[threading.Thread] = []


def _serve() -> None:
    while True:
        fn, args, future = _jobs.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # handed to the waiting worker, raised there
            future.set_exception(exc)


def call(fn: Callable[..., T], *args) -> T:
    """``fn(*args)`` on a daemon thread, from inside a thread worker; raises
    :class:`Cancelled` as soon as that worker is cancelled (checked every :data:`POLL`
    seconds), and whatever ``fn`` raises."""
    worker = get_current_worker()
    with _started:
        while len(_threads) < THREADS:
            _threads.append(threading.Thread(target=_serve, name=f"fpinspect-{len(_threads)}", daemon=True))
            _threads[-1].start()
    future: Future = Future()
    _jobs.put((fn, args, future))
    while True:
        try:
            return future.result(timeout=POLL)
        except StillRunning:
            if worker.is_cancelled:
                future.cancel()
                raise Cancelled from None
