"""ctrl+c on `fpinspect run TASK --out DIR` leaves no empty folder behind where the run made it,
and keeps a folder that was there before."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _ctrl_c_run(out: Path) -> subprocess.CompletedProcess:
    """``run C3 --out OUT`` stopped by ctrl+c (to its process group, as a terminal sends it) while
    its child computes."""
    command = [sys.executable, "-m", "fpinspect", "run", "C3", "--device", "cpu", "--out", str(out)]
    command += ["--set", "shape=[2048, 2048]", "--no-record"]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)  # the child is importing torch or computing
        assert _children(proc.pid) and proc.poll() is None, "the run ended before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)
        out_text, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(command, proc.returncode, out_text, err)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from /proc")
def test_an_interrupted_run_removes_the_out_folder_it_made_and_keeps_one_that_was_there(tmp_path):
    pytest.importorskip("torch")
    made = tmp_path / "new" / "out"
    r = _ctrl_c_run(made)
    assert r.returncode == 130, r.stderr
    assert r.stderr.strip().splitlines()[-1] == "fpinspect: interrupted"
    assert not (tmp_path / "new").exists()
    there = tmp_path / "there"
    there.mkdir()
    r = _ctrl_c_run(there)
    assert r.returncode == 130, r.stderr
    assert there.is_dir() and not list(there.iterdir())
