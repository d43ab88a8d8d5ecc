"""The first command after an install says, in one line, that the numerics kernels compile; the
next one, which loads them from numba's disk cache, says nothing."""

import os
import subprocess
import sys

import numpy as np


def test_a_first_diff_says_once_that_the_kernels_compile(tmp_path):
    a = np.linspace(-2, 2, 1000).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", np.nextafter(a, np.float16(9)))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "fpinspect", "diff", str(tmp_path / "a.npy"), str(tmp_path / "b.npy")]
    first, again = (subprocess.run(command, capture_output=True, text=True, env=env) for _ in range(2))
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert first.stderr.splitlines() == [
        "fpinspect: compiling the numerics kernels once (about 10 s; cached afterwards)"
    ]
    assert again.stderr == "" and again.stdout == first.stdout
