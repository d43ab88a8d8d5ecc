"""CPU seconds each statistics kernel takes to compile, with an empty compile cache.

    .venv/bin/python benchmarks/bench_compile.py [--dtype float16] [--size N] [--kl]
                                                 [--repeat R] [--before SRC] [KERNEL ...]

What a first call compiles (see the README's "The first call"), kernel by kernel: each run is a
fresh process with an empty ``NUMBA_CACHE_DIR``. It compiles a trivial function first (numba
loads its typing registries on its first compile, ~0.3 s that would otherwise be charged to the
first kernel), then every kernel that a pair of ``--dtype`` and ``--size`` elements calls, in
the order the first call needs them: the fused pass's block kernels, the pass, ``finish_pass``'s,
then what runs after (the exact percentiles' selection for a pair of at most 2**21 elements, KL's
pass with ``--kl``). Each kernel's figure is the least of ``R`` runs (3), with the spread.
``--before SRC`` (a tree from ``git archive COMMIT | tar -x -C SRC``) runs that tree's kernels in
alternation with this one's and prints both columns: compile times move by ±20 % from run to run
on a shared machine, so a change is measured against its before in the same minutes. Name
kernels to time only those (the others are not compiled; a pass compiles without its block
kernels, :mod:`fpinspect.numerics.calls`).
"""

from __future__ import annotations

import argparse
import json
import sys

from bench_compare import OTHER_SOURCE
from bench_numerics import child, empty_compile_cache

KERNELS = """
import json, sys, time
import numba, numpy as np
from fpinspect.numerics.dtypes import dtype_of
from fpinspect.numerics.jit import argument_types
from fpinspect.numerics.stats import _calls

dtype, size, kl, wanted = dtype_of(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4:]

@numba.njit
def _warm(x):
    return x + 1

_warm(1)  # numba's typing registries, loaded on its first compile
(pass_call, blocks), after = _calls(dtype, dtype, size, kl)
out = {}
for kernel, args in [*blocks, pass_call, *after]:
    name = kernel.__name__
    if name in out or (wanted and name not in wanted):
        continue
    t = time.process_time()
    kernel.compile(argument_types(args))
    out[name] = time.process_time() - t
print(json.dumps(out))
"""


def run(source: str | None, dtype: str, size: int, kl: bool, kernels: list[str]) -> dict[str, float]:
    """One fresh process's compile times, by kernel, with an empty cache of its own."""
    code, args = KERNELS, [dtype, str(size), "1" if kl else "0", *kernels]
    if source is not None:
        code, args = OTHER_SOURCE + KERNELS, [source, *args]
    with empty_compile_cache():
        _, _, out = child(code, *args)
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernels", nargs="*", help="time only these kernels (default: every one the pair calls)")
    p.add_argument("--dtype", default="float16", help="both sides' format (float16, bfloat16, float32, ...)")
    p.add_argument(
        "--size", type=int, default=1 << 27, help="elements of the pair (default 2**27: 256 MiB of float16)"
    )
    p.add_argument("--kl", action="store_true", help="KL's pass too")
    p.add_argument(
        "--repeat", type=int, default=3, help="fresh processes per tree; the least of them is kept"
    )
    p.add_argument("--before", default=None, help="another source tree, run in alternation with this one")
    o = p.parse_args()
    trees = [("now", None)] + ([("before", o.before)] if o.before else [])
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in trees}
    for _ in range(max(1, o.repeat)):
        for label, source in trees:
            runs[label].append(run(source, o.dtype, o.size, o.kl, o.kernels))
    names = list(dict.fromkeys(name for r in runs["now"] for name in r))
    print(f"compile CPU seconds, {o.dtype} x {o.size} elements, least of {o.repeat} fresh processes (range)")
    head = "".join(f"  {label:>20s}" for label, _ in trees)
    print(f"  {'kernel':24s}{head}")
    totals = {label: 0.0 for label, _ in trees}
    for name in names:
        cells = ""
        for label, _ in trees:
            times = [r[name] for r in runs[label] if name in r]
            if not times:
                cells += f"  {'-':>20s}"
                continue
            totals[label] += min(times)
            cells += f"  {min(times):6.3f} ({min(times):.2f}-{max(times):.2f})"
        print(f"  {name:24s}{cells}")
    print(
        f"  {'all (sum of the least)':24s}" + "".join(f"  {totals[label]:6.3f}{'':14s}" for label, _ in trees)
    )
    if o.before:
        print(f"  now / before: {totals['now'] / totals['before']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
