"""Replay of one 64 MiB fused op, as a ratio to comparing it.

    .venv/bin/python benchmarks/bench_replay.py [--quick] [--dir TMP]

The pair: one fused op replacing ``Muls 0.05 -> Exp -> Adds -1 -> Muls 20`` (elementwise)
and one replacing ``LayerNorm`` over the last axis (a reduction that leaves axis 0 alone),
both replayed in row blocks, each on a float16 tensor of 32 Mi elements (64 MiB). Each child process
loads the comparison, computes the op's records (the compare), then replays the op (four
evaluations: eager and float64 on both sides, and four comparisons). Printed: both times,
their ratio and the peak RSS of the process.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

import numpy as np
from bench_numerics import MiB, child

ROWS, COLS = 8192, 4096
CHAIN = [
    ("Muls_1", "Muls", {"value": {"f": "0.05"}}),
    ("Exp_2", "Exp", {}),
    ("Adds_3", "Adds", {"value": {"f": "-1"}}),
    ("Muls_4", "Muls", {"value": {"f": "20"}}),
]


def _desc(shape, origin: str | None = None) -> dict:
    attrs = [{"key": "origin_format", "value": {"s": "ND"}}]
    if origin:
        attrs += [
            {"key": "_datadump_origin_name", "value": {"s": origin}},
            {"key": "_datadump_origin_output_index", "value": {"i": 0}},
        ]
    return {"dtype": "DT_FLOAT16", "shape": {"dim": list(shape)}, "layout": "ND", "attr": attrs}


def _attrs(attrs: dict) -> list[dict]:
    return [{"key": k, "value": v} for k, v in attrs.items()]


def _save(path: str, shape, fill) -> None:
    """A float16 .npy written in row blocks (never a float32 copy of the whole)."""
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=shape)
    step = max(1, shape[0] // 16)
    for lo in range(0, shape[0], step):
        arr[lo : lo + step] = fill(lo, min(lo + step, shape[0]))
    arr.flush()
    del arr


def write_case(root: str, kind: str, rows: int) -> dict[str, str]:
    shape = (rows, COLS)
    on_dir, off_dir = os.path.join(root, kind, "on"), os.path.join(root, kind, "off")
    os.makedirs(on_dir)
    os.makedirs(off_dir)
    x_ops = [{"name": "x", "type": "Data", "output_desc": [_desc(shape)]}]
    ts = "3.44.1783906987170021"

    def x(lo, hi):
        return np.random.default_rng(lo).standard_normal((hi - lo, COLS)).astype(np.float16)

    if kind == "chain":
        names = [n for n, _, _ in CHAIN]
        off = x_ops + [
            {
                "name": n,
                "type": t,
                "input": [f"{prev}:0"],
                "attr": _attrs(a),
                "input_desc": [_desc(shape)],
                "output_desc": [_desc(shape)],
            }
            for (n, t, a), prev in zip(CHAIN, ["x"] + names)
        ]

        def eager(lo, hi):
            v = x(lo, hi)
            for f in (
                lambda v: v * np.float32(0.05),
                np.exp,
                lambda v: v - np.float32(1),
                lambda v: v * np.float32(20),
            ):
                v = f(v.astype(np.float32)).astype(np.float16)
            return v

        def fused(lo, hi):
            v = x(lo, hi).astype(np.float32)
            return ((np.exp(v * np.float32(0.05)) - np.float32(1)) * np.float32(20)).astype(np.float16)

        first, last, types = "Muls_1", "Muls_4", [t for _, t, _ in CHAIN]
    else:
        names, types = ["ln"], ["LayerNorm"]
        off = x_ops + [
            {"name": "g", "type": "Const", "output_desc": [_desc((COLS,))]},
            {"name": "b", "type": "Const", "output_desc": [_desc((COLS,))]},
            {
                "name": "ln",
                "type": "LayerNorm",
                "input": ["x:0", "g:0", "b:0"],
                "attr": _attrs(
                    {"begin_norm_axis": {"i": 1}, "begin_params_axis": {"i": 1}, "epsilon": {"f": "1e-05"}}
                ),
                "input_desc": [_desc(shape), _desc((COLS,)), _desc((COLS,))],
                "output_desc": [_desc(shape)],
            },
        ]

        def norm(lo, hi):
            v = x(lo, hi).astype(np.float32)
            mu = v.mean(axis=1, keepdims=True)
            return (
                (v - mu) / np.sqrt(((v - mu) ** 2).mean(axis=1, keepdims=True) + np.float32(1e-5))
            ).astype(np.float16)

        eager = fused = norm
        first, last = "ln", "ln"
        for side in (on_dir, off_dir):
            np.save(os.path.join(side, f"Const.g.{ts}.output.0.npy"), np.ones(COLS, np.float16))
            np.save(os.path.join(side, f"Const.b.{ts}.output.0.npy"), np.zeros(COLS, np.float16))
            np.save(os.path.join(off_dir, f"LayerNorm.ln.{ts}.input.1.npy"), np.ones(COLS, np.float16))
            np.save(os.path.join(off_dir, f"LayerNorm.ln.{ts}.input.2.npy"), np.zeros(COLS, np.float16))
    ins = ["x:0"] + (["g:0", "b:0"] if kind == "norm" else [])
    on = off[: len(ins)] + [
        {
            "name": "fused",
            "type": "AscBackend",
            "input": ins,
            "output_desc": [_desc(shape, last)],
            "attr": [
                {"key": "_datadump_original_op_names", "value": {"list": {"s": names}}},
                {"key": "_datadump_original_op_types", "value": {"list": {"s": types}}},
            ],
        }
    ]
    for side, ops in (("on", on), ("off", off)):
        with open(os.path.join(root, kind, f"{side}.json"), "w") as f:
            json.dump({"name": "bench", "graph": [{"name": side, "op": ops}]}, f)
    _save(os.path.join(on_dir, f"AscBackend.fused.{ts}.input.0.npy"), shape, x)
    _save(os.path.join(on_dir, f"AscBackend.fused.{ts}.output.0.npy"), shape, fused)
    _save(os.path.join(off_dir, f"{types[0]}.{first}.{ts}.input.0.npy"), shape, x)
    _save(os.path.join(off_dir, f"{types[-1]}.{last}.{ts}.output.0.npy"), shape, eager)
    return {
        "on": os.path.join(root, kind, "on.json"),
        "off": os.path.join(root, kind, "off.json"),
        "on_data": on_dir,
        "off_data": off_dir,
    }


CODE = """
import sys, time
from fpinspect.dumps import DumpComparison
from fpinspect.replay.evidence import replay_op
c = DumpComparison(*sys.argv[1:5])
t = time.perf_counter()
report = c.run()
compare = time.perf_counter() - t
t = time.perf_counter()
ev = replay_op(c, "fused")
replay = time.perf_counter() - t
print(compare, replay, ev.outputs[0].status)
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16x smaller tensors, to check the script")
    p.add_argument("--dir", default=None, help="folder for the temporary dumps (needs ~600 MiB)")
    args = p.parse_args()
    rows = ROWS // (16 if args.quick else 1)
    print(
        f"replay of one fused op on a float16 tensor of {rows * COLS * 2 / MiB:.0f} MiB "
        f"(ratio: replay time / compare time of the same op, in one process)"
    )
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for kind, what in (
            ("chain", "Muls -> Exp -> Adds -> Muls (row blocks)"),
            ("norm", "LayerNorm (whole)"),
        ):
            paths = write_case(tmp, kind, rows)
            _, peak, out = child(CODE, paths["on"], paths["off"], paths["on_data"], paths["off_data"])
            compare, replay, status = out.split()
            ratio = float(replay) / float(compare)
            print(
                f"  {what:42s}: compare {float(compare):6.2f} s  replay {float(replay):6.2f} s  "
                f"ratio {ratio:5.1f}x  peak RSS {peak / MiB:6.0f} MiB  ({status})"
            )


if __name__ == "__main__":
    main()
