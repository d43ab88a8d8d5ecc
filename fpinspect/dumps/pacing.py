"""Make way for the user: the loops that walk a whole graph (decoding 100 000 ops, planning and
localising them) take their items through :func:`paced`, and while a front end :func:`hold`\\ s
them — for as long as it takes to answer a key press — they wait between two items.

Why: such a loop runs on a background thread of the inspector, in Python, and the screen's thread
shares the interpreter lock with it. Each time the screen's thread waits (for the terminal, a
timer) it must win the lock back, which a busy loop gives up only every switch interval; a key
press then takes twice its time or more. Held, the loops leave the lock to the screen.

A hold lasts the seconds it was taken for (or until :func:`release`), and the holding thread
itself never waits (it may run such a loop itself). Holds taken again and again without a gap
(a key held down repeats 30 times a second) would stop the loops for as long as the key is held:
once they have waited :data:`LONGEST_WAIT` without a break they run on for :data:`BURST`, so
that loading still moves on at a tenth of its pace.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from time import monotonic
from typing import TypeVar

T = TypeVar("T")

_free = threading.Event()
_free.set()
_holder: int | None = None  # the thread that holds the loops, None when none does
_until = 0.0  # when the hold lapses (monotonic seconds)
_began = 0.0  # when the loops began to wait without a break
_burst_until = 0.0  # the loops run on, unheld, until then
_taken = 0  # holds taken so far

#: The longest the paced loops wait without a break while holds follow one another (seconds).
LONGEST_WAIT = 0.5
#: How long they then run on before the holds count again (seconds).
BURST = 0.05


def hold(seconds: float) -> None:
    """Make the paced loops of other threads wait for ``seconds`` from now (or until
    :func:`release`); a hold taken again lasts until the later end."""
    global _holder, _until, _began, _taken
    _taken += 1
    now = monotonic()
    if not held():  # a hold after a gap: the loops' wait begins now
        _began = max(now, _burst_until)
    _until = max(_until, now + seconds)
    _free.clear()
    _holder = threading.get_ident()


def holds_taken() -> int:
    """How many holds were taken so far (for :func:`release`)."""
    return _taken


def release(taken: int | None = None) -> None:
    """Let the paced loops go on; with ``taken`` (a :func:`holds_taken`), only if no hold was
    taken since (a later key's hold stands)."""
    global _holder, _until, _burst_until
    if taken is not None and _taken != taken:
        return
    _holder, _until, _burst_until = None, 0.0, 0.0
    _free.set()


def held() -> bool:
    """True while a hold is in force."""
    return _holder is not None and monotonic() < _until


def give_way() -> None:
    """Wait while another thread holds the loops: until the hold lapses or is released, a hold
    taken meanwhile included, but after :data:`LONGEST_WAIT` without a break go on for
    :data:`BURST` (holds taken again and again must not starve the loops)."""
    global _began, _burst_until
    me = threading.get_ident()
    while True:
        holder = _holder
        now = monotonic()
        if holder is None or holder == me or now >= _until or now < _burst_until:
            return
        if now >= _began + LONGEST_WAIT:
            _burst_until = now + BURST
            _began = _burst_until  # the next wait begins after the burst
            return
        _free.wait(min(_until, _began + LONGEST_WAIT) - now)


def paced(items: Iterable[T]) -> Iterator[T]:
    """``items``, one by one, giving way (:func:`give_way`) before each."""
    for item in items:
        if _holder is not None:
            give_way()
        yield item
