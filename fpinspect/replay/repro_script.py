"""Recompute one fused op's replay from this bundle, with numpy alone (written by `fpinspect repro`).

    python repro.py            # prints, per compared output, the errors the fpinspect report gives

The bundle: ``bundle.npz`` (the fused op's inputs and outputs on both sides), ``subgraph.json``
(the original ops it replaced, their attributes and edges, which arrays are which, and the
report's numbers), and ``ops/`` (the op semantics fpinspect replays with: plain numpy).
Each original op computes in float32 (float64 where a float tensor is float32 or wider) and
rounds its outputs to the declared format, as an eager framework does; the float64 truth keeps
every value. Errors are the relative Euclidean distance ``sqrt(sum (x-y)^2 / sum y^2)`` over the
elements finite on both sides, in eps of the compared format, and the largest distance in ULPs.
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from ops import OPS, OpCall  # noqa: E402  (the bundle's own copy)

#: format -> (storage dtype of its bit patterns, bits of precision, eps)
FORMATS = {
    "float16": (np.uint16, 11, 2.0**-10),
    "bfloat16": (np.uint16, 8, 2.0**-7),
    "float32": (np.uint32, 24, 2.0**-23),
    "float64": (np.uint64, 53, 2.0**-52),
}


def decode(array, fmt):
    """A stored array as numbers: bfloat16 comes as its bit patterns (numpy has no bfloat16)."""
    if fmt == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def round_bfloat16(x):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    rounded = np.where(np.isnan(x), bits | 0x00400000, rounded)  # NaN stays NaN
    return rounded.astype(np.uint32).view(np.float32)


def rounded(value, fmt, mode):
    """An op output in its declared format (eager) or kept exact (fp64)."""
    value = np.asarray(value)
    if fmt is None or not fmt.startswith(("float", "bfloat")):
        return value.astype(fmt) if fmt else value
    if mode == "fp64":
        return value.astype(np.float64)
    if fmt == "bfloat16":
        return round_bfloat16(value.astype(np.float32))
    return value.astype(fmt)


def precision(fmt):
    return FORMATS[fmt][1] if fmt in FORMATS else None


def run(manifest, arrays, side, mode):
    """Evaluate the subgraph on one side's inputs; returns every op output by ``"op:index"``."""
    values = {}
    for b in manifest["boundary"]:
        values[f"{b['producer']}:{b['index']}"] = decode(arrays[b[side]], b["format"])
    for op in manifest["ops"]:
        fmts = [d["format"] for d in op["inputs"] + op["outputs"] if d]
        wide = any(precision(f) is not None and precision(f) >= 24 for f in fmts)
        ins = [None if ref is None else values.get(f"{ref[0]}:{ref[1]}") for ref in op["refs"]]
        wide = wide or any(v is not None and v.dtype.kind == "f" and v.dtype.itemsize >= 4 for v in ins)
        compute = np.dtype(np.float64 if mode == "fp64" or wide else np.float32)
        ins = [None if v is None else (v.astype(compute) if v.dtype.kind == "f" else v) for v in ins]
        call = OpCall(
            op["name"],
            op["type"],
            op["attrs"],
            ins,
            [None if d is None else tuple(d["shape"]) for d in op["inputs"]],
            [tuple(d["shape"]) for d in op["outputs"]],
            compute,
            [None if d is None else d["layout"] for d in op["inputs"]],
        )
        with np.errstate(all="ignore"):
            outs = OPS[op["type"]](call)
        for i, desc in enumerate(op["outputs"]):
            y = np.asarray(outs[i]).reshape(desc["shape"])
            values[f"{op['name']}:{i}"] = rounded(y, desc["format"], mode)
    return values


def red(x, y, fmt):
    """Relative Euclidean distance of ``x`` against ``y`` in eps of ``fmt`` (finite elements)."""
    x, y = np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()
    ok = np.isfinite(x) & np.isfinite(y)
    num, den = np.sum((x[ok] - y[ok]) ** 2), np.sum(y[ok] ** 2)
    if den == 0:
        return 0.0 if num == 0 else float("inf")
    return float(np.sqrt(num / den)) / FORMATS[fmt][2]


def max_ulp(x, y, fmt):
    """The largest distance in ULPs of ``fmt`` between two arrays of that format (finite elements)."""
    store = FORMATS[fmt][0]
    if fmt == "bfloat16":
        a, b = (round_bfloat16(v).view(np.uint32) >> 16 for v in (x, y))
    else:
        a, b = np.asarray(x, fmt).view(store), np.asarray(y, fmt).view(store)
    a, b = a.astype(np.int64).ravel(), b.astype(np.int64).ravel()
    sign = 1 << (8 * np.dtype(store).itemsize - 1)
    ordered = [np.where(v & sign, -(v & (sign - 1)), v) for v in (a, b)]
    ok = np.isfinite(np.asarray(x, np.float64).ravel()) & np.isfinite(np.asarray(y, np.float64).ravel())
    return int(np.max(np.abs(ordered[0][ok] - ordered[1][ok]))) if ok.any() else 0


def figures(fmt, fused, eager, replay_on, replay_off, truth_on, truth_off):
    """The report's replay figures of one output in format ``fmt``: ``fused`` and ``eager`` are the
    compared outputs, ``replay_*`` the eager replays and ``truth_*`` the float64 ones on the fused
    side's (``on``) and the eager side's (``off``) inputs."""
    if precision(fmt) <= 11:  # as fpinspect keeps a narrow format's truth
        truth_on, truth_off = np.asarray(truth_on, np.float32), np.asarray(truth_off, np.float32)
    return {
        "fidelity": {"red": red(replay_off, eager, fmt), "max_ulp": max_ulp(replay_off, eager, fmt)},
        "fused_vs_replay": {"red": red(fused, replay_on, fmt), "max_ulp": max_ulp(fused, replay_on, fmt)},
        "fused_vs_fp64": {"red": red(fused, truth_on, fmt)},
        "eager_vs_fp64": {"red": red(eager, truth_off, fmt)},
    }


def show(out, key, fmt, got):
    """Print one output's figures ``got`` beside the report's (``out["expected"]``)."""
    print(f"output {out['fused_index']} (vs {key}, {fmt}):")
    for name, value in got.items():
        expected = (out.get("expected") or {}).get(name) or {}
        line = ", ".join(f"{k} {v:.6g}" for k, v in value.items())
        report = ", ".join(f"{k} {expected[k]:.6g}" for k in value if expected.get(k) is not None)
        print(f"  {name:16} {line:40} report: {report or '-'}")


def main():
    with open(os.path.join(HERE, "subgraph.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    arrays = np.load(os.path.join(HERE, "bundle.npz"), allow_pickle=False)
    runs = {
        (side, mode): run(manifest, arrays, side, mode)
        for side in ("on", "off")
        for mode in ("eager", "fp64")
    }
    print(
        f"fused op {manifest['op']}: {len(manifest['ops'])} original ops ({', '.join(o['type'] for o in manifest['ops'])})"
    )
    results = []
    for out in manifest["outputs"]:
        key, fmt = f"{out['origin'][0]}:{out['origin'][1]}", out["format"]
        got = figures(
            fmt,
            decode(arrays[out["fused"]], fmt),
            decode(arrays[out["eager"]], fmt),
            runs[("on", "eager")][key],
            runs[("off", "eager")][key],
            runs[("on", "fp64")][key],
            runs[("off", "fp64")][key],
        )
        results.append({"fused_index": out["fused_index"], "origin": out["origin"], **got})
        show(out, key, fmt, got)
    if "--json" in sys.argv:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
