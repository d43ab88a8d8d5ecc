"""Speed and memory of the toolkit, as ratios against baselines measured in the same run.

    .venv/bin/python benchmarks/bench_numerics.py [--quick] [--dir TMP]

1. ``ulp_diff`` against numpy's ``nulp_diff`` on 16 Mi float16 elements (target: >= 2.5x faster),
   and on 16 and 1 Ki elements (no slower than numpy's).
2. ``error_stats`` on a 1 GiB float16 memory map (target: peak RSS < 256 MiB above start).
3. ``fpinspect diff`` on two 256 MiB float16 files against a baseline that does what
   ``fusion_precision_analyzer.py`` does (load whole, float64 copies): time and peak RSS
   (targets: no slower, < 1/4 of the memory).

Memory is each child process's own peak RSS (``wait4``), minus its RSS right after imports
where noted. ``--quick`` shrinks every size by 16x to check the script itself.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

MiB = 1 << 20


# The child reports its own high-water mark (VmHWM) at exit. wait4's ru_maxrss would also
# count the parent's pages the child inherited at fork time, before exec.
HWM_PRELUDE = """
import atexit, os
def _report_hwm():
    with open("/proc/self/status") as f, open(os.environ["FPI_HWM_FILE"], "w") as out:
        out.write(next(line.split()[1] for line in f if line.startswith("VmHWM:")))
atexit.register(_report_hwm)
"""


def child(code: str, *args: str) -> tuple[float, int, str]:
    """Run ``code`` in a fresh interpreter; return (wall seconds, peak RSS bytes, stdout)."""
    with tempfile.NamedTemporaryFile("r") as hwm:
        env = {**os.environ, "FPI_HWM_FILE": hwm.name}
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", HWM_PRELUDE + textwrap.dedent(code), *args],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise SystemExit(f"benchmark child failed:\n{code}")
        return wall, int(hwm.read()) * 1024, proc.stdout


@contextlib.contextmanager
def empty_compile_cache():
    """``NUMBA_CACHE_DIR`` set, for the children started meanwhile, to an empty folder of their
    own (removed afterwards): their compiles are a first call's."""
    with tempfile.TemporaryDirectory() as cache:
        previous = os.environ.get("NUMBA_CACHE_DIR")
        os.environ["NUMBA_CACHE_DIR"] = cache
        try:
            yield cache
        finally:
            if previous is None:
                del os.environ["NUMBA_CACHE_DIR"]
            else:
                os.environ["NUMBA_CACHE_DIR"] = previous


def write_fp16(path: str, n: int, seed: int, scale: float = 1.0) -> None:
    """Write ``n`` float16 values in 16 Mi-element pieces (never the whole array in memory)."""
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=(n,))
    rng = np.random.default_rng(seed)
    step = 1 << 24
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        base = np.random.default_rng(lo).standard_normal(hi - lo).astype(np.float32)
        arr[lo:hi] = (base * (scale + rng.uniform(-1e-3, 1e-3, hi - lo).astype(np.float32))).astype(
            np.float16
        )
    arr.flush()
    del arr


def bench_ulp_diff(n: int) -> None:
    """``ulp_diff`` against numpy's ``nulp_diff``, both timed in this run: on ``n`` float16
    elements (fastest of 3) and on small arrays (16 and 1 Ki elements, fastest of 2000 calls)."""
    from numpy.testing._private.utils import nulp_diff

    from fpinspect.numerics import ulp_diff

    rng = np.random.default_rng(0)
    for size, repeat in ((n, 3), (1024, 2000), (16, 2000)):
        a = rng.standard_normal(size).astype(np.float16)
        b = (a.astype(np.float32) * 1.001).astype(np.float16)
        ulp_diff(a, b)  # compiled or loaded before timing
        ours = min(_timed(lambda a=a, b=b: ulp_diff(a, b)) for _ in range(repeat))
        theirs = min(_timed(lambda a=a, b=b: nulp_diff(a, b)) for _ in range(repeat))
        print(
            f"[1] ulp_diff vs numpy nulp_diff, {size} float16: "
            f"{ours * 1e6:.1f} us vs {theirs * 1e6:.1f} us -> {theirs / ours:.1f}x (target >= 2.5x)"
        )


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


RSS_NOW = """
def rss_now():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
"""


def bench_error_stats(tmp: str, n: int) -> None:
    a, b = os.path.join(tmp, "big_a.npy"), os.path.join(tmp, "big_b.npy")
    write_fp16(a, n, 1)
    write_fp16(b, n, 2)
    code = (
        RSS_NOW
        + """
import sys, resource, numpy as np
from fpinspect.numerics import error_stats
x = np.load(sys.argv[1], mmap_mode="r"); y = np.load(sys.argv[2], mmap_mode="r")
start = rss_now()
s = error_stats(x, y)
print(start, s["ulp"]["p99"])
"""
    )
    wall, peak, out = child(code, a, b)
    start = int(out.split()[0])
    above = (peak - start) / MiB
    print(
        f"[2] error_stats on a {n * 2 / MiB:.0f} MiB float16 memmap pair: {wall:.1f} s, "
        f"peak RSS {above:.0f} MiB above start (target < 256 MiB)"
    )
    os.remove(a)
    os.remove(b)


BASELINE = """
# What fusion_precision_analyzer.py does in mode 2: load whole, promote, float64 copies.
import sys, numpy as np
a = np.load(sys.argv[1]); b = np.load(sys.argv[2])
if a.dtype != b.dtype:
    t = np.promote_types(a.dtype, b.dtype); a = a.astype(t); b = b.astype(t)
a = a.astype(np.float64).flatten(); b = b.astype(np.float64).flatten()
cos = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-8)
diff = np.abs(a - b)
max_abs = np.max(diff)
max_rel = np.max(diff / (np.maximum(np.abs(a), np.abs(b)) + 1e-8))
print(cos, max_abs, max_rel)
"""


def bench_diff(tmp: str, n: int) -> None:
    a, b = os.path.join(tmp, "diff_a.npy"), os.path.join(tmp, "diff_b.npy")
    write_fp16(a, n, 3)
    write_fp16(b, n, 4, scale=1.0005)
    base_t, base_m, base_out = child(BASELINE, a, b)
    runs = {}
    for jobs in (1, 2):
        code = f"import sys; from fpinspect.cli import main; sys.argv=['fpinspect','diff','--format','json','--jobs','{jobs}',sys.argv[1],sys.argv[2]]; main()"
        runs[jobs] = child(code, a, b)
    print(f"[3] diff of two {n * 2 / MiB:.0f} MiB float16 files (baseline: load whole + float64 copies)")
    print(f"    baseline          : {base_t:6.1f} s  peak RSS {base_m / MiB:6.0f} MiB")
    for jobs, (t, m, _) in runs.items():
        print(
            f"    fpinspect --jobs {jobs}: {t:6.1f} s  peak RSS {m / MiB:6.0f} MiB  "
            f"-> time x{t / base_t:.2f}, memory x{m / base_m:.3f} (targets: <= 1, < 0.25)"
        )
    import json

    ours = json.loads(runs[1][2])
    cos, mabs, mrel = (float(v) for v in base_out.split())
    print(
        f"    same numbers: cosine {ours['cosine']:.12f} vs {cos:.12f}; max_abs {ours['max_abs']:.6e} vs {mabs:.6e}; "
        f"max_rel {ours['max_rel']:.6e} vs {mrel:.6e}"
    )
    os.remove(a)
    os.remove(b)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16x smaller sizes, to check the script")
    p.add_argument("--dir", default=None, help="folder for the temporary files (needs ~2 GiB)")
    args = p.parse_args()
    k = 16 if args.quick else 1
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        bench_ulp_diff((16 * MiB) // k)
        bench_error_stats(tmp, (512 * MiB) // k)
        bench_diff(tmp, (128 * MiB) // k)


if __name__ == "__main__":
    main()
