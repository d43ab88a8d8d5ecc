"""The inspector's background loops stand still while a key is answered.

Its workers run Python for seconds (decoding 100 000 ops, comparing pairs, localising) on
threads that share the interpreter lock with the screen's; a key's answer, made in many small
steps, waited for the lock at each and took several times as long. So the app marks each key
or mouse event (:meth:`Answering.key`), and the workers' loops call :meth:`Answering.wait`
between two items: it returns once :data:`ANSWER_SECONDS` have passed since the last event.
Events that follow one another without a gap (a key held down repeats 30 times a second) never
stop the loops for more than :data:`LONGEST_WAIT` at a stretch: then they run on for :data:`BURST`.
"""

from __future__ import annotations

import time

#: Seconds a key or mouse event stops the loops: a key's answer on screen, with room.
ANSWER_SECONDS = 0.08
#: The longest the loops wait without a break while events follow one another (seconds) ...
LONGEST_WAIT = 0.5
#: ... and how long they then run on before events count again.
BURST = 0.05


class Answering:
    """When the screen is answering an event; one per app, read by its workers' threads."""

    def __init__(self) -> None:
        self._until = 0.0  # the loops wait until then (monotonic seconds) ...
        self._began = 0.0  # ... since then, without a break ...
        self._burst_until = 0.0  # ... unless they run on, unheld, until then

    def key(self) -> None:
        """An event to answer, now (on the screen's thread)."""
        now = time.monotonic()
        if now >= self._until:  # after a gap: the loops' wait begins now
            self._began = max(now, self._burst_until)
        self._until = now + ANSWER_SECONDS

    def wait(self) -> None:
        """Return once no event is being answered (on a worker's thread, between two items)."""
        while True:
            now = time.monotonic()
            if now >= self._until or now < self._burst_until:
                return
            if now >= self._began + LONGEST_WAIT:
                self._burst_until = now + BURST
                self._began = self._burst_until  # the next wait begins after the burst
                return
            time.sleep(min(self._until, self._began + LONGEST_WAIT) - now)
