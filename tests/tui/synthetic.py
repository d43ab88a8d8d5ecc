"""A large synthetic run for the inspector's scale test and benchmark.

``ops`` fused ops in a chain, each replacing two original ops (``Mul_i``, ``Add_i``) and
standing for ``Add_i:0`` (with ``originals=1``, one: ``Add_i``, the shape of the inspector's
100 000-op target); only the first ``dumped`` fused ops have dump files (float16
tensors of ``shape``). From op ``regress_at`` on, the fusion-on values are scaled by 1.03:
that op introduces the error, the later dumped ops inherit it. Written as raw JSON in the
shape ``atc --mode=5 --json`` gives it (attributes as key/value lists), lean on attributes
so that 10 000 ops write in a fraction of a second; ``indent=2`` indents it as atc does (the
100 000-op benchmark: ~130 MB per graph).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np

TIMESTAMP = 1783906987170021


def _desc(shape, origin: str | None = None) -> dict:
    attrs = [{"key": "origin_format", "value": {"s": "ND"}}]
    if origin:
        attrs += [
            {"key": "_datadump_origin_name", "value": {"s": origin}},
            {"key": "_datadump_origin_output_index", "value": {"i": 0}},
        ]
    return {"dtype": "DT_FLOAT16", "shape": {"dim": list(shape)}, "layout": "ND", "attr": attrs}


def _strings(values: list[str]) -> dict:
    return {"list": {"s": values, "val_type": "VT_LIST_STRING"}}


def write_synthetic(
    root: Path,
    ops: int,
    *,
    dumped: int = 8,
    shape=(32, 64),
    regress_at: int = 3,
    seed: int = 0,
    indent: int | None = None,
    originals: int = 2,
) -> Path:
    """Write the run under ``root`` (``dumpgraph_af_open/Build.json`` ...); returns ``root``."""
    on = [{"name": "x", "type": "Data", "output_desc": [_desc(shape)]}]
    off = [{"name": "x", "type": "Data", "output_desc": [_desc(shape)]}]
    prev_on, prev_off = "x", "x"
    for i in range(ops):
        mul, add, fused = f"Mul_{i}", f"Add_{i}", f"autofuse_{i}_Mul_Add"
        names, types = ([mul, add], ["Mul", "Add"]) if originals == 2 else ([add], ["Add"])
        if originals == 2:
            off.append(
                {"name": mul, "type": "Mul", "input": [f"{prev_off}:0"], "output_desc": [_desc(shape)]}
            )
        feed = mul if originals == 2 else prev_off
        off.append({"name": add, "type": "Add", "input": [f"{feed}:0"], "output_desc": [_desc(shape)]})
        on.append(
            {
                "name": fused,
                "type": "AscBackend",
                "input": [f"{prev_on}:0"],
                "input_desc": [_desc(shape)],
                "output_desc": [_desc(shape, add)],
                "attr": [
                    {"key": "_datadump_original_op_names", "value": _strings(names)},
                    {"key": "_datadump_original_op_types", "value": _strings(types)},
                ],
            }
        )
        prev_on, prev_off = fused, add
    for side, graph in (("open", on), ("close", off)):
        path = root / f"dumpgraph_af_{side}" / "Build.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"name": "synthetic", "graph": [{"name": side, "op": graph}]})
        # msgspec indents in C: json.dumps(indent=...) takes minutes for 100 000 ops
        path.write_bytes(msgspec.json.format(text.encode(), indent=indent) if indent else text.encode())
    rng = np.random.default_rng(seed)
    (root / "datadump_af_open").mkdir(exist_ok=True)
    (root / "datadump_af_close").mkdir(exist_ok=True)
    for i in range(min(dumped, ops)):
        ref = rng.standard_normal(shape).astype(np.float16)
        got = (ref.astype(np.float32) * np.float32(1.03)).astype(np.float16) if i >= regress_at else ref
        np.save(
            root / "datadump_af_open" / f"AscBackend.autofuse_{i}_Mul_Add.3.44.{TIMESTAMP}.output.0.npy", got
        )
        np.save(root / "datadump_af_close" / f"Add.Add_{i}.3.44.{TIMESTAMP}.output.0.npy", ref)
    return root
