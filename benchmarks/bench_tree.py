"""`fpinspect compare` of a whole dump tree against comparing each of its leaves alone.

    .venv/bin/python benchmarks/bench_tree.py [--ranks 8] [--graphs 2] [--steps 2] [--ops 156] [--dir TMP] [--before SRC]

Generates a GE dump tree per side, ``{time}/{rank}/{graph}/1/{step}/``, each leaf holding one
float16 output of 2 Ki elements per fused op (the defaults: 8 ranks x 2 graphs x 2 steps x 312
ops, about 10 000 pairs), and both sides' graphs in one folder per side. Then, each in a
fresh process with the compile cache warm:

* the whole tree: ``compare --steps all --jobs 2`` (one process);
* each leaf alone: one ``compare --jobs 2`` process per leaf, pointed at that leaf and its graph
  (what a user scripts today), timed back to back: the sum of their wall times, their largest peak;
* the whole tree on a Dask ``LocalCluster`` of two worker processes: ``--scheduler local:2``
  (the engine's overhead over ``--jobs 2``; the cluster's start is in it).

With ``--before SRC`` the whole tree and ``local:2`` also run from that source tree, alternating
with this one's runs. Printed: the wall time, CPU time and peak RSS of each, and the ratios the
issue sets: the whole tree at most 1.1x the sum of the leaves and 1.2x one leaf's peak memory;
``local:2`` at most 1.3x ``--jobs 2``; and the pairs per second the scaling model rests on.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

STAMP = "20261203101010"
ELEMENTS = 2048


def _desc(n: int, origin: str | None = None) -> dict:
    desc = {"dtype": "DT_FLOAT16", "layout": "ND", "shape": {"dim": [n]}}
    if origin:
        desc["attr"] = [
            {"key": "_datadump_origin_name", "value": {"s": origin}},
            {"key": "_datadump_origin_output_index", "value": {"i": 0}},
        ]
    return desc


def write_graphs(root: Path, graphs: int, ops: int) -> None:
    """One fusion-on and one fusion-off graph per compiled graph ``g``: ``ops`` fused ops
    ``g{g}_autofuse_{i}``, each replacing one Mul ``g{g}_Op_{i}``."""
    for g in range(graphs):
        on = [{"name": "x", "type": "Data", "output_desc": [_desc(ELEMENTS)]}]
        off = [{"name": "x", "type": "Data", "output_desc": [_desc(ELEMENTS)]}]
        for i in range(ops):
            names = {"list": {"s": [f"g{g}_Op_{i}"], "val_type": "VT_LIST_STRING"}}
            on.append(
                {
                    "name": f"g{g}_autofuse_{i}",
                    "type": "AscBackend",
                    "input": ["x:0"],
                    "output_desc": [_desc(ELEMENTS, f"g{g}_Op_{i}")],
                    "attr": [{"key": "_datadump_original_op_names", "value": names}],
                }
            )
            off.append(
                {"name": f"g{g}_Op_{i}", "type": "Mul", "input": ["x:0"], "output_desc": [_desc(ELEMENTS)]}
            )
        for side, ops_ in (("open", on), ("close", off)):
            folder = root / f"graphs_{side}"
            folder.mkdir(parents=True, exist_ok=True)
            doc = {"name": f"g{g}", "graph": [{"name": side, "op": ops_}]}
            (folder / f"g{g}.json").write_text(json.dumps(doc))


def write_tree(root: Path, ranks: int, graphs: int, steps: int, ops: int) -> list[tuple[Path, Path, int]]:
    """Both sides' dump trees; returns each leaf as (fusion-on folder, fusion-off folder, graph)."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal(ELEMENTS).astype(np.float16)
    noisy = (base.astype(np.float32) * np.float32(1.0005)).astype(np.float16)
    leaves = []
    for r in range(ranks):
        for g in range(graphs):
            for s in range(steps):
                rel = Path(STAMP) / str(r) / f"model_g{g}" / "1" / str(s)
                on, off = root / "open" / rel, root / "close" / rel
                on.mkdir(parents=True)
                off.mkdir(parents=True)
                for i in range(ops):
                    stamp = 1700000000000000 + i
                    np.save(on / f"AscBackend.g{g}_autofuse_{i}.3.44.{stamp}.output.0.npy", noisy)
                    np.save(off / f"Mul.g{g}_Op_{i}.3.44.{stamp}.output.0.npy", base)
                leaves.append((on, off, g))
    return leaves


def run(args: list[str], source: str | None = None) -> tuple[float, float, int]:
    """``fpinspect`` with ``args`` in a fresh process: (wall s, CPU s of the child, peak RSS bytes);
    ``source``: the source tree it imports fpinspect from (default: this interpreter's)."""
    before = os.times()
    t0 = time.perf_counter()
    code = (
        "import resource, sys, runpy\n"
        "sys.argv = ['fpinspect', *sys.argv[1:]]\n"
        "try:\n"
        "    runpy.run_module('fpinspect', run_name='__main__')\n"
        "finally:\n"
        "    sys.stderr.write(f'\\nHWM {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
    )
    env = None if source is None else {**os.environ, "PYTHONPATH": source}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    after = os.times()
    # 1 is a compare that found failing pairs; a traceback is a run that did not compare at all
    if proc.returncode not in (0, 1) or "Traceback (most recent call last)" in proc.stderr:
        raise SystemExit(f"fpinspect {' '.join(args)} failed:\n{proc.stderr}")
    hwm = int(proc.stderr.rsplit("HWM ", 1)[1].split()[0]) * 1024
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, hwm


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--graphs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--ops", type=int, default=312)
    parser.add_argument("--dir", default=None)
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run the whole tree and local:2 this many times, alternating; the fastest counts",
    )
    parser.add_argument("--no-leaves", action="store_true", help="skip comparing each leaf alone")
    parser.add_argument(
        "--before",
        metavar="SRC",
        default=None,
        help="also run the whole tree and local:2 from this source tree (an older commit), alternating",
    )
    a = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        root = Path(tmp)
        write_graphs(root, a.graphs, a.ops)
        leaves = write_tree(root, a.ranks, a.graphs, a.steps, a.ops)
        pairs = len(leaves) * a.ops
        print(f"{a.ranks} ranks x {a.graphs} graphs x {a.steps} steps, {a.ops} ops a leaf: {pairs} pairs")
        graphs = [
            "--af-open-graph",
            str(root / "graphs_open"),
            "--af-close-graph",
            str(root / "graphs_close"),
        ]
        data = ["--af-open-data", str(root / "open"), "--af-close-data", str(root / "close")]
        common = ["--format", "json", "--jobs", "2"]
        # warm the compile cache and the page cache
        on, off, g = leaves[0]
        one_leaf = [
            "compare",
            "--af-open-graph",
            str(root / "graphs_open" / f"g{g}.json"),
            "--af-close-graph",
            str(root / "graphs_close" / f"g{g}.json"),
            "--af-open-data",
            str(on),
            "--af-close-data",
            str(off),
            *common,
        ]
        run(one_leaf)
        whole_args = ["compare", *graphs, *data, "--steps", "all", *common]
        cluster_args = [
            "compare",
            *graphs,
            *data,
            "--steps",
            "all",
            "--format",
            "json",
            "--scheduler",
            "local:2",
        ]
        wholes, clusters, before = [], [], {"--jobs 2": [], "--scheduler local:2": []}
        if a.before:
            run(one_leaf, a.before)
        for _ in range(a.repeat):
            if a.before:  # the older tree's runs alternating with this one's
                before["--jobs 2"].append(run(whole_args, a.before))
            wholes.append(run(whole_args))
            if a.before:
                before["--scheduler local:2"].append(run(cluster_args, a.before))
            clusters.append(run(cluster_args))
        whole, cluster = min(wholes), min(clusters)
        if a.before:
            for case, now in (("--jobs 2", whole), ("--scheduler local:2", cluster)):
                then = min(before[case])
                print(
                    f"whole tree {case}: {now[0]:.2f} s wall, {now[1]:.2f} s CPU; before {then[0]:.2f} s wall, "
                    f"{then[1]:.2f} s CPU; {now[0] / then[0]:.2f}x before's wall (fastest of {a.repeat})"
                )
        print(
            f"--scheduler local:2: {cluster[0]:.2f} s wall, {cluster[0] / whole[0]:.2f}x --jobs 2 "
            f"({whole[0]:.2f} s; target <= 1.3x); client peak {cluster[2] / 2**20:.0f} MiB"
        )
        if a.no_leaves:
            return
        alone = []
        for on, off, g in leaves:
            args = list(one_leaf)
            args[args.index("--af-open-graph") + 1] = str(root / "graphs_open" / f"g{g}.json")
            args[args.index("--af-close-graph") + 1] = str(root / "graphs_close" / f"g{g}.json")
            args[args.index("--af-open-data") + 1] = str(on)
            args[args.index("--af-close-data") + 1] = str(off)
            alone.append(run(args))
        summed = (sum(x[0] for x in alone), sum(x[1] for x in alone), max(x[2] for x in alone))
        print(f"{'':28} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9}")
        for label, (wall, cpu, hwm) in (
            ("whole tree, one process", whole),
            ("each leaf alone, summed", summed),
        ):
            print(f"{label:28} {wall:8.2f} {cpu:8.2f} {hwm / 2**20:9.0f}")
        print(
            f"whole / sum of leaves: wall {whole[0] / summed[0]:.2f}x, CPU {whole[1] / summed[1]:.2f}x (target <= 1.1x)"
        )
        print(f"whole tree's peak / one leaf's peak: {whole[2] / summed[2]:.2f}x (target <= 1.2x)")
        print(
            f"pairs per second, whole tree: {pairs / whole[0]:.0f} (wall), {pairs / whole[1]:.0f} per CPU second"
        )


if __name__ == "__main__":
    main()
