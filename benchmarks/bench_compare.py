"""`fpinspect compare` on a dump pair with a few large tensors, against the reference's way.

    .venv/bin/python benchmarks/bench_compare.py [--quick] [--dir TMP]

The pair: three fused ops, each replacing one original op, each output a float16 tensor of
48 Mi elements (96 MiB; 288 MiB per side). The baseline does what
``fusion_precision_analyzer.py`` does per pair — load both files whole, cast to float64,
compute cosine / max abs / max rel — in one process. Targets: fpinspect at most as slow,
under 1/4 of the baseline's peak memory, and ``--jobs 2`` faster than ``--jobs 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

from bench_numerics import MiB, child, write_fp16

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


def _desc(n: int, origin: str | None = None) -> dict:
    attrs = [{"key": "origin_format", "value": {"s": "ND"}}]
    if origin:
        attrs += [
            {"key": "_datadump_origin_name", "value": {"s": origin}},
            {"key": "_datadump_origin_output_index", "value": {"i": 0}},
        ]
    return {"dtype": "DT_FLOAT16", "shape": {"dim": [n]}, "layout": "ND", "attr": attrs}


def write_pair(root: str, ops: int, n: int) -> dict[str, str]:
    """Graph JSONs in atc's shape and datadump folders as msaccucmp writes them."""
    paths = {k: os.path.join(root, k) for k in ("open", "close")}
    on = [{"name": "x", "type": "Data", "output_desc": [_desc(n)]}]
    off = [{"name": "x", "type": "Data", "output_desc": [_desc(n)]}]
    for i in range(ops):
        on.append(
            {
                "name": f"autofuse_{i}",
                "type": "AscBackend",
                "input": ["x:0"],
                "output_desc": [_desc(n, f"Op_{i}")],
                "attr": [
                    {
                        "key": "_datadump_original_op_names",
                        "value": {"list": {"s": [f"Op_{i}"], "val_type": "VT_LIST_STRING"}},
                    }
                ],
            }
        )
        off.append({"name": f"Op_{i}", "type": "Mul", "input": ["x:0"], "output_desc": [_desc(n)]})
    for side, ops_json in (("open", on), ("close", off)):
        os.makedirs(paths[side], exist_ok=True)
        with open(os.path.join(root, f"{side}.json"), "w") as f:
            json.dump({"name": "bench", "graph": [{"name": side, "op": ops_json}]}, f)
    for i in range(ops):
        ts = 1783906987170021 + i
        write_fp16(os.path.join(paths["open"], f"AscBackend.autofuse_{i}.3.44.{ts}.output.0.npy"), n, 10 + i)
        write_fp16(
            os.path.join(paths["close"], f"Mul.Op_{i}.3.44.{ts}.output.0.npy"), n, 20 + i, scale=1.0005
        )
    return {
        "open_graph": os.path.join(root, "open.json"),
        "close_graph": os.path.join(root, "close.json"),
        "open_data": paths["open"],
        "close_data": paths["close"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16x smaller tensors, to check the script")
    p.add_argument("--dir", default=None, help="folder for the temporary dumps (needs ~600 MiB)")
    args = p.parse_args()
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
