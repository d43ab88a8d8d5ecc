"""The fused compiled pass against reading the data, the reference's way and a plain numpy pass.

    .venv/bin/python benchmarks/bench_fused.py [--quick] [--dir TMP] [--pairs N] [--ops N]
                                               [--only pair|pairs|tui] [--repeat R]

Side by side, each in a fresh process, files in the page cache; each timed ``R`` times (3),
the fastest kept (the machine may be shared: the load average is printed before and after):

1. One pair of float16 files (2 x 256 MiB; ``--quick``: 2 x 16 MiB):
   * reading both files in 1 Mi-element chunks and nothing else (the floor);
   * the reference's way (``fusion_precision_analyzer.py``: load whole, float64 copies, trio);
   * one plain numpy pass, ``abs(a.astype(f32) - b.astype(f32)).max()`` in 1 Mi chunks;
   * the fused pass (``accumulate``, every statistic but KL): its first call with an empty
     compile cache (each of the ``R`` runs with a cache of its own; ``--jobs 1``, and ``--jobs
     2`` as ``diff`` runs on two cores), then ``--jobs 1`` and ``--jobs 2`` with the cache warm, and the
     speed-up of 2 threads over 1; and ``--jobs 1`` on a file against itself (every block equal
     bit for bit, so its error loops are skipped);
   * ``fpinspect diff --format json`` (the pass, KL, the worst elements, JSON) with jobs 1 and 2;
   * ``fpinspect diff`` of one 64 KiB pair with an empty compile cache (every kernel it calls
     compiled) and warm.
   The numpy and fused passes are also timed inside their process (wall and CPU seconds:
   no interpreter start or imports; with the cache warm, no loading of the compiled kernels).
   Targets: the fused pass at most as slow as the numpy pass, its first call within 3x of it.
2. ``fpinspect compare`` on a dump pair of N (10 000; ``--quick``: 1 000) fused ops whose
   outputs are float16 tensors of 64 KiB: ``bench_compare.py --pairs N``.
3. ``fpinspect open`` on a graph of N (100 000; ``--quick``: 10 000) fused ops, one original op
   each, in atc's indentation: ``bench_tui.py --ops N --repeat 1`` (first ops, ``G``, key
   presses while loading / once loaded / once compared, peak RSS, against ``json.load`` and the
   whole load).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile

from bench_compare import bench_many_pairs
from bench_numerics import BASELINE, MiB, child, empty_compile_cache, write_fp16

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
t, c = time.perf_counter(), time.process_time()
m = 0.0
for lo in range(0, a.size, 1 << 20):
    m = max(m, float(np.abs(a[lo:lo + (1 << 20)].astype(np.float32) - b[lo:lo + (1 << 20)].astype(np.float32)).max()))
print(time.perf_counter() - t, time.process_time() - c, m)
"""

FUSED = """
import sys, time, numpy as np
from fpinspect.numerics.stats import accumulate
a = np.load(sys.argv[1], mmap_mode="r"); b = np.load(sys.argv[2], mmap_mode="r")
if sys.argv[4] == "warm":  # the kernels loaded from the compile cache before the clock starts
    accumulate(a[:4096], b[:4096], worst=10)
t, c = time.perf_counter(), time.process_time()
s = accumulate(a, b, jobs=int(sys.argv[3]), worst=10)
print(time.perf_counter() - t, time.process_time() - c, s.script_max_abs)
"""

DIFF = (
    "import sys; from fpinspect.cli import main; "
    "sys.argv=['fpinspect','diff','--format','json','--jobs',sys.argv[3],sys.argv[1],sys.argv[2]]; main()"
)


#: Elements of the small pair (64 KiB of float16 per side).
SMALL_PAIR = 32 * 1024


def timed(code: str, *args: str) -> tuple[float, int, str, float]:
    """:func:`child`'s ``(wall, peak RSS, stdout)`` and the child's CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, mem, out = child(code, *args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, mem, out, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def best(repeat: int, code: str, *args: str) -> tuple[float, int, str, float]:
    """The fastest of ``repeat`` runs of :func:`timed` (by wall time)."""
    return min((timed(code, *args) for _ in range(repeat)), key=lambda run: run[0])


def inner(run: tuple[float, int, str]) -> tuple[float, float]:
    """``(wall, CPU)`` seconds of the pass alone, as the child printed them."""
    wall, cpu = run[2].split()[:2]
    return float(wall), float(cpu)


def first_calls(repeat: int, code: str, *args: str) -> tuple[tuple[float, int, str, float], list]:
    """The fastest of ``repeat`` first calls (by wall time), each a fresh process with an empty
    compile cache of its own, and every run (a first call varies more than a warm one: it is
    two processes compiling on two cores)."""
    runs = []
    for _ in range(repeat):
        with empty_compile_cache():
            runs.append(timed(code, *args))
    return min(runs, key=lambda run: run[0]), runs


def row(label: str, run: tuple[float, int, str, float], base: tuple[float, int, str, float]) -> None:
    """One line: the process's wall and CPU time and peak RSS against the numpy pass's process;
    for the numpy and fused passes also the pass alone (wall, CPU) against the numpy pass alone."""
    t, mem, _, cpu = run
    alone = ""
    if label.startswith(("plain", "fused")):
        (w, c), (bw, bc) = inner(run), inner(base)
        alone = f"  | the pass alone {w:5.2f} s (x{w / bw:4.2f}), CPU {c:5.2f} s (x{c / bc:4.2f})"
    print(
        f"    {label:44s}: {t:6.2f} s (x{t / base[0]:5.2f}), CPU {cpu:6.2f} s (x{cpu / base[3]:5.2f})"
        f"  peak RSS {mem / MiB:5.0f} MiB{alone}"
    )


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def bench_pair(tmp: str, n: int, repeat: int) -> None:
    a, b = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    write_fp16(a, n, 3)
    write_fp16(b, n, 4, scale=1.0005)
    print(f"[1] one pair of float16 files, 2 x {n * 2 / MiB:.0f} MiB ({n / MiB:.0f} Mi elements each)")
    print(f"    before: {load()} ({os.cpu_count()} cores)")
    child(READ_ONLY, a, b)  # page cache warm for everyone
    rows = [("read both, 1 Mi chunks (floor)", best(repeat, READ_ONLY, a, b))]
    rows.append(("reference's way (load whole, float64)", timed(BASELINE, a, b)))
    numpy_t = best(repeat, NUMPY_PASS, a, b)
    rows.append(("plain numpy pass (abs diff max)", numpy_t))
    # an empty compile cache: the first call compiles (--jobs 2: what diff does on two cores)
    first, first_runs = first_calls(repeat, FUSED, a, b, "1", "cold")
    first2, first2_runs = first_calls(repeat, FUSED, a, b, "2", "cold")
    rows.append(("fused pass, first call (compiles)", first))
    rows.append(("fused pass --jobs 2, first call", first2))
    with empty_compile_cache():
        child(DIFF, a, b, "1")  # compiles (and caches) every kernel diff calls
        jobs1, jobs2 = best(repeat, FUSED, a, b, "1", "warm"), best(repeat, FUSED, a, b, "2", "warm")
        rows.append(("fused pass --jobs 1", jobs1))
        rows.append(("fused pass --jobs 2", jobs2))
        rows.append(("fused pass --jobs 1, a file against itself", best(repeat, FUSED, a, a, "1", "warm")))
        rows.append(("fpinspect diff --jobs 1 (+KL, JSON)", best(repeat, DIFF, a, b, "1")))
        rows.append(("fpinspect diff --jobs 2", best(repeat, DIFF, a, b, "2")))
    # what a user's first command costs: one small pair, every kernel it calls compiled
    small = os.path.join(tmp, "small_a.npy"), os.path.join(tmp, "small_b.npy")
    write_fp16(small[0], SMALL_PAIR, 5)
    write_fp16(small[1], SMALL_PAIR, 6, scale=1.0005)
    small_first, small_runs = first_calls(repeat, DIFF, *small, "1")
    small_rows = [("first call (compiles)", small_first)]
    with empty_compile_cache():
        child(DIFF, *small, "1")
        small_rows.append(("cache warm", best(repeat, DIFF, *small, "1")))
    print(f"    after:  {load()}")
    print("    (x: against the numpy pass; process wall time, then the pass alone)")
    for label, run in rows:
        row(label, run, numpy_t)
    print(f"    --jobs 2 over --jobs 1, the pass alone: x{inner(jobs1)[0] / inner(jobs2)[0]:.2f} faster")
    for label, runs in (("--jobs 1", first_runs), ("--jobs 2", first2_runs)):
        alone = " / ".join(f"{inner(run)[0]:.2f}" for run in runs)
        print(f"    first calls {label}, each a fresh process, the pass alone: {alone} s")
    print("    fpinspect diff --jobs 1 of one 64 KiB float16 pair (exact percentiles, KL, JSON):")
    for label, (t, mem, _, cpu) in small_rows:
        print(f"      {label:40s}: {t:6.2f} s, CPU {cpu:6.2f} s  peak RSS {mem / MiB:5.0f} MiB")
    print(f"      first calls, each a fresh process: {' / '.join(f'{run[0]:.2f}' for run in small_runs)} s")
    for path in small:
        os.remove(path)
    os.remove(a)
    os.remove(b)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16x smaller pair, 1 000 small pairs")
    p.add_argument("--dir", default=None, help="folder for the temporary files (needs ~1.5 GiB)")
    p.add_argument(
        "--pairs", type=int, default=None, help="small pairs in part 2 (default 10 000, quick 1 000)"
    )
    p.add_argument(
        "--ops", type=int, default=None, help="fused ops in part 3 (default 100 000, quick 10 000)"
    )
    p.add_argument(
        "--only", choices=("pair", "pairs", "tui"), help="run only part 1 (pair), 2 (pairs) or 3 (tui)"
    )
    p.add_argument("--repeat", type=int, default=3, help="runs of each timed child; the fastest is kept")
    args = p.parse_args()
    if args.only in (None, "pair"):
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            bench_pair(tmp, (128 * MiB) // (16 if args.quick else 1), max(1, args.repeat))
    if args.only in (None, "pairs"):
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            bench_many_pairs(tmp, args.pairs or (1000 if args.quick else 10_000))
    if args.only in (None, "tui"):
        ops = args.ops or (10_000 if args.quick else 100_000)
        tui = [sys.executable, os.path.join(os.path.dirname(__file__), "bench_tui.py"), "--ops", str(ops)]
        subprocess.run([*tui, "--repeat", "1", *(["--dir", args.dir] if args.dir else [])], check=True)


if __name__ == "__main__":
    main()
