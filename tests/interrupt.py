"""ctrl+c in the middle of a command's work, as a user presses it: one helper for the tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

#: ``python -m fpinspect ARGS`` with ctrl+c's signal at its default, as a terminal's foreground job
#: has it: run from a background job (``make test &``, which GNU make passes on), SIGINT arrives
#: ignored, Python then installs no KeyboardInterrupt for it, and the command runs to its end. The
#: same process (``exec``), so its pid is the one watched.
_AS_FROM_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'fpinspect', *sys.argv[1:]])"
)


#: The signals a terminal sends to every process of its foreground job (ctrl+c, its hangup), not
#: to the command's own process alone: the command's workers get them too.
_TO_THE_GROUP = (signal.SIGINT, signal.SIGHUP)

#: The one line each stopping signal ends a command with.
STOPPED = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}


def interrupt_fpinspect(
    args: list[str],
    started: Callable[[int], object],
    what: str,
    settle: float,
    sig: signal.Signals = signal.SIGINT,
) -> object:
    """Run ``python -m fpinspect ARGS``, wait until ``started(pid)`` is truthy (at most 120 s; the
    process must still run meanwhile, else ``what`` never started), ``settle`` seconds more, then
    send ``sig`` (ctrl+c's SIGINT and SIGHUP to its whole process group, as a terminal does; SIGTERM
    to it alone); assert it ends with status 128 + ``sig`` and its one line on stderr, nothing
    else (``fpinspect: interrupted`` for ctrl+c). Returns what ``started`` last returned."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _AS_FROM_A_TERMINAL, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's foreground job
    )
    try:
        deadline = time.monotonic() + 120
        while not (seen := started(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline, f"{what} never started"
            time.sleep(0.01)
        time.sleep(settle)
        if sig in _TO_THE_GROUP:
            os.killpg(proc.pid, sig)  # the terminal's ctrl+c or hangup reaches every process of the job
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + sig, (out, err)
    assert err.strip() == f"fpinspect: {STOPPED[sig]}", err
    return seen
