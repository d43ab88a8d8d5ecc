"""ctrl+c in the middle of a command's work, as a user presses it: one helper for the tests."""

from __future__ import annotations

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


def interrupt_fpinspect(
    args: list[str], started: Callable[[int], object], what: str, settle: float
) -> object:
    """Run ``python -m fpinspect ARGS``, wait until ``started(pid)`` is truthy (at most 120 s; the
    process must still run meanwhile, else ``what`` never started), ``settle`` seconds more, then
    send SIGINT; assert it ends with status 130 and the one line ``fpinspect: interrupted``.
    Returns what ``started`` last returned."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _AS_FROM_A_TERMINAL, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (seen := started(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline, f"{what} never started"
            time.sleep(0.01)
        time.sleep(settle)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (out, err)
    assert err.strip() == "fpinspect: interrupted"
    return seen
