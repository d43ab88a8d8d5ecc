"""Make way for the user: the loops that walk a whole graph (decoding 100 000 ops, planning and
localising them) take their items through :func:`paced`, and while a front end :func:`hold`\\ s
them — for as long as it takes to answer a key press — they wait between two items.

Why: such a loop runs on a background thread of the inspector, in Python, and the screen's thread
shares the interpreter lock with it. Each time the screen's thread waits (for the terminal, a
timer) it must win the lock back, which a busy loop gives up only every switch interval; a key
press then takes twice its time or more. Held, the loops leave the lock to the screen.

A hold lasts the seconds it was taken for (or until :func:`release`), and the holding thread
itself never waits (it may run such a loop itself).
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


def hold(seconds: float) -> None:
    """Make the paced loops of other threads wait for ``seconds`` from now (or until
    :func:`release`); a hold taken again lasts until the later end."""
    global _holder, _until
    _until = max(_until, monotonic() + seconds)
    _free.clear()
    _holder = threading.get_ident()


def release() -> None:
    """Let the paced loops go on."""
    global _holder, _until
    _holder, _until = None, 0.0
    _free.set()


def held() -> bool:
    """True while a hold is in force."""
    return _holder is not None and monotonic() < _until


def give_way() -> None:
    """Wait while another thread holds the loops (at most until the hold lapses)."""
    holder = _holder
    if holder is not None and holder != threading.get_ident():
        left = _until - monotonic()
        if left > 0:
            _free.wait(left)


def paced(items: Iterable[T]) -> Iterator[T]:
    """``items``, one by one, giving way (:func:`give_way`) before each."""
    for item in items:
        if _holder is not None:
            give_way()
        yield item
