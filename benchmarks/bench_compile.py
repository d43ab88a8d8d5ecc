"""Seconds a first comparison spends compiling the statistics kernels, with an empty compile cache.

    .venv/bin/python benchmarks/bench_compile.py [--dtype float16] [--size N] [--repeat R] [--before SRC]

Each run is a fresh process with an empty ``NUMBA_CACHE_DIR`` that imports the toolkit and times
its first ``accumulate(a, ref, worst=10, kl=True).error_stats()`` of a pair of ``--dtype`` and
``--size`` elements (every kernel that pair calls is compiled then), wall and CPU seconds of this
process, the least of ``R`` runs (3). ``--before SRC`` (a tree from ``git archive COMMIT | tar -x
-C SRC``) runs that tree in alternation with this one: compile times move by tens of percent from
run to run on a shared machine, so a change is measured against its before in the same minutes.
"""

from __future__ import annotations

import argparse
import json
import sys

from bench_compare import OTHER_SOURCE
from bench_numerics import child, empty_compile_cache

FIRST = """
import json, sys, time
import numpy as np
from fpinspect.numerics.dtypes import dtype_of
from fpinspect.numerics.stats import accumulate

dtype, size = dtype_of(sys.argv[1]), int(sys.argv[2])
ref = np.random.default_rng(0).standard_normal(size)
a, b = (ref * 1.001).astype(dtype), ref.astype(dtype)
wall, cpu = time.perf_counter(), time.process_time()
accumulate(a, b, worst=10, kl=True).error_stats()
print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""


def run(source: str | None, dtype: str, size: int) -> tuple[float, float]:
    """One fresh process's ``(wall, CPU)`` seconds of its first pair, with an empty cache of its own."""
    code, args = FIRST, [dtype, str(size)]
    if source is not None:
        code, args = OTHER_SOURCE + FIRST, [source, *args]
    with empty_compile_cache():
        _, _, out = child(code, *args)
    return tuple(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", default="float16", help="both sides' format (float16, bfloat16, float32, ...)")
    p.add_argument("--size", type=int, default=1 << 16, help="elements of the pair (default 2**16)")
    p.add_argument("--repeat", type=int, default=3, help="fresh processes per tree; the least is kept")
    p.add_argument("--before", default=None, help="another source tree, run in alternation with this one")
    o = p.parse_args()
    trees = [("now", None)] + ([("before", o.before)] if o.before else [])
    runs: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in trees}
    for _ in range(max(1, o.repeat)):
        for label, source in trees:
            runs[label].append(run(source, o.dtype, o.size))
    print(f"first pair, {o.dtype} x {o.size} elements, empty cache, least of {o.repeat} fresh processes")
    for label, _ in trees:
        wall, cpu = min(w for w, _ in runs[label]), min(c for _, c in runs[label])
        print(f"  {label:8s} wall {wall:6.2f} s   CPU (this process) {cpu:6.2f} s")


if __name__ == "__main__":
    sys.exit(main())
