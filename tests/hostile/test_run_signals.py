"""SIGTERM and SIGHUP to ``fpinspect run`` get what ctrl+c gets: the experiment child and
whatever it started are stopped, the exit status is 128 + the signal, nothing is written."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found += map(int, children)
        todo += map(int, children)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from /proc")
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_stops_the_child_and_writes_nothing(tmp_path, sig, status):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "fpinspect", "run", "C3", "--device", "cpu", "--out", str(out)]
    command += ["--set", "shape=[2048, 2048]"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _descendants(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)  # the child is importing torch or computing
        children = _descendants(proc.pid)
        assert children and proc.poll() is None, "the run ended before it could be signalled"
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == status, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"fpinspect run: stopped by {signal.Signals(sig).name}; the task's process was stopped and no "
        "output was written."
    )
    assert "Traceback" not in stderr
    assert not [pid for pid in children if _alive(pid)]
    assert not (out / "result.json").exists() and not list(out.glob(".incomplete-*"))
