"""The compiled kernels' disk cache follows every edit of the numerics sources, also of a module
that a kernel only inlines: numba keys a cached kernel on its own file alone, so before the
cache folder was named by a digest of all of them, the statistics pass kept running the code of
an ``ulp_distance`` edited since."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import fpinspect

PROBE = """
import numpy as np
import fpinspect
from fpinspect.numerics import error_stats, ulp_diff
a = np.array([1.0, 2.0, 3.0], np.float16)
b = a.copy()
b[0] = np.nextafter(a[0], np.float16(2))
print(fpinspect.__file__)
print(error_stats(a, b).ulp.max, ulp_diff(a, b)[0])
"""

DISTANCE = "    return apart if ((a ^ b) & sign_mask) == np.uint64(0) else ma + mb\n"
TENFOLD = "    return np.uint64(10) * (apart if ((a ^ b) & sign_mask) == np.uint64(0) else ma + mb)\n"


def test_an_edit_of_a_module_the_kernels_inline_reaches_the_next_run(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(
        Path(fpinspect.__file__).parent,
        source / "fpinspect",
        ignore=shutil.ignore_patterns("__pycache__", "sample_dumps"),
    )
    env = {**os.environ, "PYTHONPATH": str(source), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", PROBE], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        where, numbers = done.stdout.splitlines()
        assert where.startswith(str(source))  # the copy, not the installed package
        return numbers.split()

    assert run() == ["1", "1"]
    ulp = source / "fpinspect" / "numerics" / "ulp.py"
    text = ulp.read_text()
    assert DISTANCE in text
    ulp.write_text(text.replace(DISTANCE, TENFOLD))
    assert run() == ["10", "10"]  # the pass (kernels.py, unchanged) inlines the new distance too
    folders = sorted(p.name for p in (tmp_path / "cache" / "fpinspect").iterdir())
    assert len(folders) == 2 and all(f.startswith("kernels-") for f in folders)
