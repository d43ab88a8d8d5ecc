"""The fused compiled pass against reading the data, the reference's way and a plain numpy pass.

    .venv/bin/python benchmarks/bench_fused.py [--quick] [--dir TMP] [--pairs N]

Side by side, each in a fresh process, files in the page cache:

1. One pair of float16 files (2 x 256 MiB; ``--quick``: 2 x 16 MiB):
   * reading both files in 1 Mi-element chunks and nothing else (the floor);
   * the reference's way (``fusion_precision_analyzer.py``: load whole, float64 copies, trio);
   * one plain numpy pass, ``abs(a.astype(f32) - b.astype(f32)).max()`` in 1 Mi chunks;
   * the fused pass (``accumulate``, every statistic but KL): its first call with an empty
     compile cache, then ``--jobs 1`` and ``--jobs 2`` with the cache warm;
   * ``fpinspect diff --format json`` (the pass, KL, the worst elements, JSON) with jobs 1 and 2.
   Targets: the fused pass at most as slow as the numpy pass, its first call within 3x of it.
2. ``fpinspect compare`` on a dump pair of N (10 000; ``--quick``: 1 000) fused ops whose
   outputs are float16 tensors of 64 KiB: ``bench_compare.py --pairs N``.
"""

from __future__ import annotations

import argparse
import os
import tempfile

from bench_compare import bench_many_pairs
from bench_numerics import BASELINE, MiB, child, write_fp16

READ_ONLY = """
import sys, numpy as np
for path in sys.argv[1:3]:
    with open(path, "rb") as f:
        np.lib.format.read_magic(f); np.lib.format.read_array_header_1_0(f)
        buf = np.empty(1 << 20, np.float16)
        while f.readinto(buf):
            pass
"""

NUMPY_PASS = """
import sys, time, numpy as np
a = np.load(sys.argv[1], mmap_mode="r"); b = np.load(sys.argv[2], mmap_mode="r")
t = time.perf_counter()
m = 0.0
for lo in range(0, a.size, 1 << 20):
    m = max(m, float(np.abs(a[lo:lo + (1 << 20)].astype(np.float32) - b[lo:lo + (1 << 20)].astype(np.float32)).max()))
print(time.perf_counter() - t, m)
"""

FUSED = """
import sys, time, numpy as np
from fpinspect.numerics.stats import accumulate
a = np.load(sys.argv[1], mmap_mode="r"); b = np.load(sys.argv[2], mmap_mode="r")
t = time.perf_counter()
s = accumulate(a, b, jobs=int(sys.argv[3]), worst=10)
print(time.perf_counter() - t, s.script_max_abs)
"""

DIFF = (
    "import sys; from fpinspect.cli import main; "
    "sys.argv=['fpinspect','diff','--format','json','--jobs',sys.argv[3],sys.argv[1],sys.argv[2]]; main()"
)


def row(label: str, run: tuple[float, int, str], base: float) -> None:
    """One line: the process's wall time and peak RSS; for the numpy and fused passes also the
    pass alone, timed inside the process (no interpreter start, imports or compile-cache load)."""
    t, mem, out = run
    inner = (
        f"  (the pass alone {float(out.split()[0]):6.2f} s)" if label.startswith(("plain", "fused")) else ""
    )
    print(
        f"    {label:38s}: {t:7.2f} s  peak RSS {mem / MiB:6.0f} MiB  x{t / base:5.2f} of the numpy pass{inner}"
    )


def bench_pair(tmp: str, n: int) -> None:
    a, b = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    write_fp16(a, n, 3)
    write_fp16(b, n, 4, scale=1.0005)
    print(f"[1] one pair of float16 files, 2 x {n * 2 / MiB:.0f} MiB ({n / MiB:.0f} Mi elements each)")
    child(READ_ONLY, a, b)  # page cache warm for everyone
    rows = [("read both, 1 Mi chunks (floor)", child(READ_ONLY, a, b))]
    rows.append(("reference's way (load whole, float64)", child(BASELINE, a, b)))
    numpy_t = child(NUMPY_PASS, a, b)
    rows.append(("plain numpy pass (abs diff max)", numpy_t))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache  # an empty compile cache: the first call compiles
        rows.append(("fused pass, first call (compiles)", child(FUSED, a, b, "1")))
        child(DIFF, a, b, "1")  # compiles (and caches) what diff adds: KL, the worst elements
        rows.append(("fused pass --jobs 1", child(FUSED, a, b, "1")))
        rows.append(("fused pass --jobs 2", child(FUSED, a, b, "2")))
        rows.append(("fpinspect diff --jobs 1 (+KL, JSON)", child(DIFF, a, b, "1")))
        rows.append(("fpinspect diff --jobs 2", child(DIFF, a, b, "2")))
        del os.environ["NUMBA_CACHE_DIR"]
    for label, run in rows:
        row(label, run, numpy_t[0])
    os.remove(a)
    os.remove(b)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16x smaller pair, 1 000 small pairs")
    p.add_argument("--dir", default=None, help="folder for the temporary files (needs ~1.5 GiB)")
    p.add_argument(
        "--pairs", type=int, default=None, help="small pairs in part 2 (default 10 000, quick 1 000)"
    )
    args = p.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        bench_pair(tmp, (128 * MiB) // (16 if args.quick else 1))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        bench_many_pairs(tmp, args.pairs or (1000 if args.quick else 10_000))


if __name__ == "__main__":
    main()
