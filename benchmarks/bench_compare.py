"""`fpinspect compare` on a few large tensors, or on many small ones, against the reference's way.

    .venv/bin/python benchmarks/bench_compare.py [--quick] [--dir TMP]
    .venv/bin/python benchmarks/bench_compare.py --pairs 10000 [--data DIR] [--before SRC] [--repeat R]

The pair: three fused ops, each replacing one original op, each output a float16 tensor of
48 Mi elements (96 MiB; 288 MiB per side). The baseline does what
``fusion_precision_analyzer.py`` does per pair — load both files whole, cast to float64,
compute cosine / max abs / max rel — in one process. Targets: fpinspect at most as slow,
under 1/4 of the baseline's peak memory, and ``--jobs 2`` faster than ``--jobs 1``.

With ``--pairs N``: N fused ops whose outputs are float16 tensors of 64 KiB (what a real model
has thousands of), each in a fresh process, files in the page cache, side by side: ``np.load``
of every file (the floor), that plus one plain numpy pass per pair
(``abs(a.astype(f32) - b.astype(f32)).max()``: what the data costs), the reference's way, and
``fpinspect compare --format json`` with jobs 1 and 2 (compile cache warm). Printed: wall time,
peak RSS, the time per pair above reading and above reading + the numpy pass, and each time as
a multiple of the read-only time; wall and CPU time (user + system: on a shared machine the
CPU time is the steadier of the two). Then the same number of 64-byte pairs, whose compare costs
what a pair costs whatever its data, and one 64-byte pair, what the process costs whatever its
pairs: the fixed cost per pair (the slope from one pair to N, the process start left out; also
printed with the start shared out over the N pairs), against the cost of 64 KiB of data (the
difference of the N-pair runs), and where a 64-byte pair's time goes, stage by stage, in one
process with the kernels loaded. ``--before SRC`` also runs that source tree's compare on both
sets (``--jobs 1`` and ``2`` on the 64 KiB pairs, ``--jobs 1`` on the 64-byte pairs, alternating
with this tree's, each the fastest or least CPU of ``--repeat``) and
says whether the reports are the same bytes. ``--data DIR`` keeps the generated dumps there.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from pathlib import Path

from bench_numerics import MiB, child, write_fp16

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "dumps"))
from gefixtures import chain_run  # noqa: E402

BASELINE = """
import sys, glob, os, numpy as np
open_dir, close_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    a = np.load(glob.glob(os.path.join(open_dir, f"*.autofuse_{i}.*output.0.npy"))[0])
    b = np.load(glob.glob(os.path.join(close_dir, f"*.Op_{i}.*output.0.npy"))[0])
    a = a.astype(np.float64).flatten(); b = b.astype(np.float64).flatten()
    cos = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-8)
    diff = np.abs(a - b)
    print(cos, np.max(diff), np.max(diff / (np.maximum(np.abs(a), np.abs(b)) + 1e-8)))
"""


def write_pair(root: str, ops: int, n: int) -> dict[str, str]:
    """Graph JSONs in atc's shape and datadump folders as msaccucmp writes them."""
    paths, dumps = chain_run(root, ops, n)
    for i, (fused, original) in enumerate(dumps):
        write_fp16(fused, n, 10 + i)
        write_fp16(original, n, 20 + i, scale=1.0005)
    return paths


READ_DIRS = """
import sys, os, numpy as np
for d in sys.argv[1:3]:
    for name in os.listdir(d):
        np.load(os.path.join(d, name))
"""

_PAIRS_OF = """
import sys, os, numpy as np
open_dir, close_dir = sys.argv[1], sys.argv[2]
close = {name.split(".")[1]: name for name in os.listdir(close_dir)}
def pairs():
    for name in sorted(os.listdir(open_dir)):
        i = name.split(".")[1].split("_")[1]
        yield np.load(os.path.join(open_dir, name)), np.load(os.path.join(close_dir, close[f"Op_{i}"]))
"""

NUMPY_PASS_PAIRS = (
    _PAIRS_OF
    + """
for a, b in pairs():
    m = float(np.abs(a.astype(np.float32) - b.astype(np.float32)).max())
"""
)

BASELINE_PAIRS = (
    _PAIRS_OF
    + """
for a, b in pairs():
    a = a.astype(np.float64).flatten(); b = b.astype(np.float64).flatten()
    cos = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-8)
    diff = np.abs(a - b)
    res = (cos, np.max(diff), np.max(diff / (np.maximum(np.abs(a), np.abs(b)) + 1e-8)))
"""
)

COMPARE_JSON = (
    "import sys; from fpinspect.cli import main; "
    "sys.argv=['fpinspect','compare','--format','json','--output',sys.argv[6],'--jobs',sys.argv[5],"
    "'--af-open-graph',sys.argv[1],'--af-close-graph',sys.argv[2],'--af-open-data',sys.argv[3],"
    "'--af-close-data',sys.argv[4]]; main()"
)

# The same command run from another source tree (``git archive COMMIT | tar -x -C DIR``): the
# editable install's import hook is dropped so that DIR's fpinspect is the one imported.
OTHER_SOURCE = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in type(f).__module__]; "
)

# Where a compare's time goes per pair, stage by stage, in one process with the kernels loaded
# (a first run over the pairs, not timed, loads them): the least CPU of three runs of each stage.
STAGES = """
import gc, io, sys, time
from fpinspect.cli.output import write_json_object
from fpinspect.dumps.engine.compare import DumpComparison
from fpinspect.inspection.pipeline import Inspection
from fpinspect.inspection.settings import CompareSettings
open_graph, close_graph, open_data, close_data, pairs = sys.argv[1:6]
gc.disable()  # as compare runs

def once():
    spent, t = {}, time.process_time()
    cmp = DumpComparison(open_graph, close_graph, open_data, close_data, worst=5, kl=True)
    spent["graphs, dump index, plans"], t = time.process_time() - t, time.process_time()
    cmp.compute_all(jobs=1)
    spent["records (reading, statistics, verdicts)"], t = time.process_time() - t, time.process_time()
    report = Inspection(cmp, CompareSettings(replay="failing")).report()
    spent["replay and localisation"], t = time.process_time() - t, time.process_time()
    write_json_object(io.StringIO(), report.json_fields())
    spent["the JSON report"] = time.process_time() - t
    return spent

once()
least = {}
for _ in range(3):
    for stage, cpu in once().items():
        least[stage] = min(least.get(stage, cpu), cpu)
for stage, cpu in least.items():
    print(f"{stage}\t{cpu / int(pairs) * 1e6:.1f}")
"""

DIFF_ONE = "import sys; from fpinspect.cli import main; sys.argv=['fpinspect','diff',sys.argv[1],sys.argv[2]]; main()"

SMALL = 32 * 1024  # float16 elements of a small pair: 64 KiB
#: float16 elements of a tiny pair (64 B): what its compare costs is what any pair costs, whatever its data.
TINY = 32


def small_pairs(root: str, pairs: int, n: int = SMALL) -> dict[str, str]:
    """The dump pair of ``pairs`` fused outputs of ``n`` float16 elements each under ``root``,
    written unless already there."""
    paths = {
        "open_graph": os.path.join(root, "open.json"),
        "close_graph": os.path.join(root, "close.json"),
        "open_data": os.path.join(root, "open"),
        "close_data": os.path.join(root, "close"),
    }
    complete = all(
        os.path.isdir(paths[k]) and len(os.listdir(paths[k])) == pairs for k in ("open_data", "close_data")
    )
    if not complete or not os.path.exists(paths["close_graph"]):
        write_pair(root, pairs, n)
    return paths


def _timed(code: str, *args: str) -> tuple[float, float, int]:
    """:func:`child`'s wall time and peak RSS, with the child's CPU time (user + system):
    on a machine shared with other work the CPU time moves much less than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, mem, _ = child(code, *args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), mem


def bench_many_pairs(root: str, pairs: int, before: str | None = None, repeat: int = 1) -> None:
    """``fpinspect compare`` on ``pairs`` fused outputs of 64 KiB float16 (see the module docstring);
    with ``before`` (a source tree), also that tree's ``compare --jobs 1``; ``repeat``: the jobs 1
    and jobs 2 rows are the fastest of that many alternating runs (``--jobs 2`` gains only while
    the second core is free, which on a shared machine comes and goes)."""
    # One BLAS thread in every child: the reference's float64 dot products would otherwise run on
    # OpenBLAS threads whose spinning made its CPU time swing from 20 to 80 s with the machine's load.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    paths = small_pairs(root, pairs)
    data = (paths["open_data"], paths["close_data"])
    print(f"compare: {pairs} fused outputs of {SMALL * 2 // 1024} KiB float16 each, load average {_load()}")
    child(READ_DIRS, *data)  # page cache warm for everyone
    one = [os.path.join(d, sorted(os.listdir(d))[0]) for d in data]
    child(DIFF_ONE, *one)  # the compile cache warm: the float16 pass and KL
    read = _timed(READ_DIRS, *data)
    numpy_pass = _timed(NUMPY_PASS_PAIRS, *data)
    rows = [
        ("np.load every file (the floor)", read),
        ("+ one numpy pass per pair (the data)", numpy_pass),
        ("reference's way (load, float64, trio)", _timed(BASELINE_PAIRS, *data)),
    ]
    out = os.path.join(root, "report.json")
    if before:
        child(OTHER_SOURCE + DIFF_ONE, before, *one)
    fastest: dict[int, tuple[float, float, int]] = {}
    fastest_before: dict[int, tuple[float, float, int]] = {}
    for _ in range(max(1, repeat)):  # before's runs alternating with this tree's
        for jobs in (1, 2):
            if before:
                run = _timed(OTHER_SOURCE + COMPARE_JSON, before, *paths.values(), str(jobs), out + ".before")
                if jobs not in fastest_before or run[0] < fastest_before[jobs][0]:
                    fastest_before[jobs] = run
            run = _timed(COMPARE_JSON, *paths.values(), str(jobs), out)
            if jobs not in fastest or run[0] < fastest[jobs][0]:
                fastest[jobs] = run
    suffix = f" (fastest of {repeat})" if repeat > 1 else ""
    rows += [
        (f"fpinspect compare --jobs {jobs}, before{suffix}", run) for jobs, run in fastest_before.items()
    ]
    rows += [(f"fpinspect compare --jobs {jobs}{suffix}", fastest[jobs]) for jobs in (1, 2)]
    # The same count of 64-byte pairs: what a pair costs whatever its data (reading, matching,
    # statistics' setup, the record, the report), measured, not inferred.
    tiny = small_pairs(os.path.join(root, "tiny"), pairs, TINY)
    tiny_data = (tiny["open_data"], tiny["close_data"])
    child(READ_DIRS, *tiny_data)
    tiny_read = _timed(READ_DIRS, *tiny_data)
    tiny_ref = _timed(BASELINE_PAIRS, *tiny_data)
    tiny_out = os.path.join(root, "tiny", "report.json")
    # One tiny pair: what a compare process costs whatever its pairs (interpreter, imports, the
    # compiled kernels loaded from the cache), so that the fixed cost per pair is the slope
    # between one pair and N, not the process start shared out.
    one = small_pairs(os.path.join(root, "one"), 1, TINY)
    one_data = (one["open_data"], one["close_data"])
    one_out = os.path.join(root, "one", "report.json")
    tiny_run = tiny_before = one_run = one_read = None
    for _ in range(max(1, repeat)):  # alternating with before's, each the least CPU of its runs
        tiny_run = _least_cpu(tiny_run, _timed(COMPARE_JSON, *tiny.values(), "1", tiny_out))
        one_run = _least_cpu(one_run, _timed(COMPARE_JSON, *one.values(), "1", one_out))
        one_read = _least_cpu(one_read, _timed(READ_DIRS, *one_data))
        if before:
            run = _timed(OTHER_SOURCE + COMPARE_JSON, before, *tiny.values(), "1", tiny_out + ".before")
            tiny_before = _least_cpu(tiny_before, run)
    print(
        f"  {'':40s}  {'wall':>7s} {'cpu':>7s}  {'x reading':>9s}  {'peak RSS':>8s}   ms per pair (cpu) above:"
    )
    print(f"  {'':40s}  {'':7s} {'':7s}  {'wall cpu':>9s}  {'':8s}   reading, reading + the pass")
    for label, (wall, cpu, mem) in rows:
        above = ""
        if label.startswith("fpinspect"):
            above = f"   {(cpu - read[1]) / pairs * 1e3:5.2f}    {(cpu - numpy_pass[1]) / pairs * 1e3:5.2f}"
        print(
            f"  {label:40s}: {wall:6.2f}s {cpu:6.2f}s  {wall / read[0]:4.1f} {cpu / read[1]:4.1f}  "
            f"{mem / MiB:5.0f} MiB{above}"
        )
    with open(out) as f:
        text = f.read()
    same = ""
    if before:
        with open(out + ".before") as f:
            old = f.read()
        same = (
            "; the same bytes as before's"
            if old == text
            else f"; {_differences(json.loads(old), json.loads(text))}"
        )
    print(f"  ({len(json.loads(text)['records'])} records in the report{same}; load average {_load()})")
    print(f"  the same {pairs} pairs at {TINY * 2} B each (what a pair costs whatever its data):")
    tiny_rows = [("np.load every file", tiny_read), ("reference's way", tiny_ref)]
    if before:
        tiny_rows.append(("fpinspect compare --jobs 1, before", tiny_before))
    for label, (wall, cpu, mem) in (*tiny_rows, ("fpinspect compare --jobs 1", tiny_run)):
        print(
            f"  {label:40s}: {wall:6.2f}s {cpu:6.2f}s  {mem / MiB:5.0f} MiB   {cpu / pairs * 1e3:5.2f} ms per pair"
        )
    start = one_run[1] - one_read[1]
    print(
        f"  {'fpinspect compare --jobs 1, one pair':40s}: {one_run[0]:6.2f}s {one_run[1]:6.2f}s  {one_run[2] / MiB:5.0f} MiB   (the process start)"
    )
    shared = (tiny_run[1] - tiny_read[1]) / pairs * 1e3
    fixed = (tiny_run[1] - tiny_read[1] - start) / (pairs - 1) * 1e3
    data = (fastest[1][1] - tiny_run[1]) / pairs * 1e3
    numpy_data = (numpy_pass[1] - read[1]) / pairs * 1e3
    print(
        f"  compare --jobs 1, ms CPU per pair: {fixed:.2f} fixed (64 B pairs above reading them, less the process start "
        f"of {start:.2f} s; {shared:.2f} with it shared out), {data:.2f} for 64 KiB of data (the numpy pass: "
        f"{numpy_data:.2f}); fixed / data = {fixed / data:.2f} ({shared / data:.2f} with the start shared out)"
    )
    _, _, staged = child(STAGES, *tiny.values(), str(pairs))
    stages = [line.split("\t") for line in staged.strip().splitlines()]
    print(
        "  where a 64-byte pair's time goes, in one process (CPU, least of 3): "
        + "; ".join(f"{name} {us} us" for name, us in stages)
    )
    if before:
        with open(tiny_out) as f, open(tiny_out + ".before") as g:
            same = "the same bytes" if f.read() == g.read() else "reports that differ"
        print(
            f"  before: {(tiny_before[1] - tiny_read[1]) / pairs * 1e3:.2f} ms fixed per pair, the start shared out ({same})"
        )


def _least_cpu(best, run):
    """Of two :func:`_timed` runs (``best`` may be ``None``), the one with less CPU time."""
    return run if best is None or run[1] < best[1] else best


def _differences(old, new) -> str:
    """How two reports differ: the values that changed, by field, and the largest relative change."""
    changed: dict[str, int] = {}
    worst = 0.0

    def walk(x, y, path: str) -> None:
        nonlocal worst
        if isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys():
            for k in x:
                walk(x[k], y[k], f"{path}.{k}" if path else k)
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for u, v in zip(x, y):
                walk(u, v, path)
        elif x != y:
            changed[path] = changed.get(path, 0) + 1
            if isinstance(x, float) and isinstance(y, float) and x:
                worst = max(worst, abs(x - y) / abs(x))
            else:
                worst = float("inf")

    walk(old, new, "")
    fields = ", ".join(f"{k} x{n}" for k, n in sorted(changed.items()))
    return f"differs from before's in {fields} (largest relative change {worst:.1e})"


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16x smaller tensors, to check the script")
    p.add_argument("--dir", default=None, help="folder for the temporary dumps (needs ~600 MiB)")
    p.add_argument("--pairs", type=int, default=None, help="many small pairs instead (e.g. 10000)")
    p.add_argument("--data", default=None, help="with --pairs: keep the generated dumps in this folder")
    p.add_argument(
        "--before",
        default=None,
        help="with --pairs: also time compare from this source tree (an older commit)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="with --pairs: the fastest of R alternating jobs 1 / jobs 2 runs",
    )
    args = p.parse_args()
    if args.pairs:
        if args.data:
            os.makedirs(args.data, exist_ok=True)
            bench_many_pairs(args.data, args.pairs, args.before, args.repeat)
        else:
            with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
                bench_many_pairs(tmp, args.pairs, args.before, args.repeat)
        return
    ops, n = 3, (48 * MiB) // (16 if args.quick else 1)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        paths = write_pair(tmp, ops, n)
        base_t, base_m, _ = child(BASELINE, paths["open_data"], paths["close_data"], str(ops))
        print(
            f"compare: {ops} fused outputs of {n * 2 / MiB:.0f} MiB float16 each "
            f"(baseline: the reference's load-whole + float64 copies)"
        )
        print(f"  baseline          : {base_t:6.1f} s  peak RSS {base_m / MiB:6.0f} MiB")
        times = {}
        for jobs in (1, 2):
            code = (
                "import sys; from fpinspect.cli import main; "
                "sys.argv=['fpinspect','compare','--format','json','--jobs',sys.argv[5],'--af-open-graph',sys.argv[1],"
                "'--af-close-graph',sys.argv[2],'--af-open-data',sys.argv[3],'--af-close-data',sys.argv[4]]; main()"
            )
            t, m, _ = child(
                code,
                paths["open_graph"],
                paths["close_graph"],
                paths["open_data"],
                paths["close_data"],
                str(jobs),
            )
            times[jobs] = t
            print(
                f"  fpinspect --jobs {jobs}: {t:6.1f} s  peak RSS {m / MiB:6.0f} MiB  "
                f"-> time x{t / base_t:.2f}, memory x{m / base_m:.3f} (targets: <= 1, < 0.25)"
            )
        print(f"  --jobs 2 speed-up over --jobs 1: x{times[1] / times[2]:.2f}")


if __name__ == "__main__":
    main()
