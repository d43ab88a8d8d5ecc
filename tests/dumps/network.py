"""A small network dumped with fusion off and on, in the real formats, with optional faults.

Fusion off (eager): every op is its own fp16 kernel, rounding after each op::

    x -> Mul_1(*0.7) -> Add_2(+0.3) -> Gelu_3 -> Mul_4(*1.3) -> Tanh_5 -> Mul_6(*2)
                           \\_____________________________________________/
                                                      Add_7 -> Relu_8

Fusion on: four AscBackend regions computing in fp32 and rounding once at their end::

    R1 = autofuse_1_Mul_Add   [Mul_1, Add_2]  -> stands for Add_2:0
    R2 = autofuse_2_Gelu_Mul  [Gelu_3, Mul_4] -> Mul_4:0
    R3 = autofuse_3_Tanh_Mul  [Tanh_5, Mul_6] -> Mul_6:0
    R4 = autofuse_4_Add_Relu  [Add_7, Relu_8] -> Relu_8:0   (inputs R3 and R1)

``inject`` plants a regression in one region: ``"R2=scale"`` (x1.03), ``"R2=bf16"``
(rounded through bfloat16), ``"R3=nan"`` (some outputs overflow to NaN).
"""

from __future__ import annotations

import math
from pathlib import Path

import ml_dtypes
import numpy as np
from gefixtures import GraphBuilder, tensor, write_dump

SHAPE = (64, 256)
F16 = np.float16


def _gelu(v):
    v = v.astype(np.float32)
    return 0.5 * v * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (v + np.float32(0.044715) * v**3)))


ORIGINAL = {  # name -> (type, function of fp32 inputs, input names); scalars are Muls / Adds values
    "Mul_1": ("Muls", lambda a: a * np.float32(0.7), ["x"]),
    "Add_2": ("Adds", lambda a: a + np.float32(0.3), ["Mul_1"]),
    "Gelu_3": ("Gelu", _gelu, ["Add_2"]),
    "Mul_4": ("Muls", lambda a: a * np.float32(1.3), ["Gelu_3"]),
    "Tanh_5": ("Tanh", np.tanh, ["Mul_4"]),
    "Mul_6": ("Muls", lambda a: a * np.float32(2.0), ["Tanh_5"]),
    "Add_7": ("Add", lambda a, b: a + b, ["Mul_6", "Add_2"]),
    "Relu_8": ("Relu", lambda a: np.maximum(a, 0), ["Add_7"]),
}
#: The attributes of the ops with a scalar operand (GE's Muls / Adds keep it as ``value``).
ATTRS = {"Mul_1": {"value": 0.7}, "Add_2": {"value": 0.3}, "Mul_4": {"value": 1.3}, "Mul_6": {"value": 2.0}}
REGIONS = {  # region -> (fused name, member ops, output op)
    "R1": ("autofuse_1_Mul_Add", ["Mul_1", "Add_2"]),
    "R2": ("autofuse_2_Gelu_Mul", ["Gelu_3", "Mul_4"]),
    "R3": ("autofuse_3_Tanh_Mul", ["Tanh_5", "Mul_6"]),
    "R4": ("autofuse_4_Add_Relu", ["Add_7", "Relu_8"]),
}


def fused_name(region: str) -> str:
    return REGIONS[region][0]


def _region_of(op: str) -> str | None:
    return next((r for r, (_, members) in REGIONS.items() if op in members), None)


def build_network(root: Path, inject: str | None = None, seed: int = 0) -> dict[str, Path]:
    """Write ``root/{dumpgraph_af_open,dumpgraph_af_close}/Build.json`` and the two datadump
    folders; return their paths as the ``compare`` flags name them."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(SHAPE).astype(F16)
    paths = {
        "af_open_graph": root / "dumpgraph_af_open" / "Build.json",
        "af_close_graph": root / "dumpgraph_af_close" / "Build.json",
        "af_open_data": root / "datadump_af_open",
        "af_close_data": root / "datadump_af_close",
    }
    t = list(SHAPE)

    # fusion off: eager, one op at a time
    off = GraphBuilder("off").op("x", "Data", outputs=[tensor(t)])
    eager = {"x": x}
    write_dump(paths["af_close_data"], "Data", "x", "output", 0, x)
    for name, (typ, fn, ins) in ORIGINAL.items():
        eager[name] = fn(*(eager[i].astype(np.float32) for i in ins)).astype(F16)
        off.op(name, typ, inputs=[f"{i}:0" for i in ins], outputs=[tensor(t)], attrs=ATTRS.get(name))
        for k, i in enumerate(ins):
            write_dump(paths["af_close_data"], typ, name, "input", k, eager[i])
        write_dump(paths["af_close_data"], typ, name, "output", 0, eager[name])
    off.op("out", "NetOutput", inputs=["Relu_8:0"])
    off.write(paths["af_close_graph"])

    # fusion on: each region in fp32, rounded at its end
    where, kind = inject.split("=") if inject else (None, None)
    on = GraphBuilder("on").op("x", "Data", outputs=[tensor(t)])
    fused = {"x": x}
    produced_by = {"x": "x"}  # original op -> fusion-on op whose output carries its value
    write_dump(paths["af_open_data"], "Data", "x", "output", 0, x)
    for region, (fname, members) in REGIONS.items():
        ext_inputs = []
        for m in members:
            for i in ORIGINAL[m][2]:
                if i not in members and i not in ext_inputs:
                    ext_inputs.append(i)
        vals = {i: fused[produced_by[i]].astype(np.float32) for i in ext_inputs}
        for m in members:
            vals[m] = ORIGINAL[m][1](*(vals[i] for i in ORIGINAL[m][2]))
        out = vals[members[-1]]
        if region == where:
            if kind == "scale":
                out = out * np.float32(1.03)
            elif kind == "bf16":
                out = out.astype(ml_dtypes.bfloat16).astype(np.float32)
            elif kind == "nan":
                out = np.where(np.abs(out) > 1.5, np.float32(np.nan), out)
        fused[fname] = out.astype(F16)
        on.fused(
            fname,
            inputs=[f"{produced_by[i]}:0" for i in ext_inputs],
            outputs=[tensor(t, origin_name=members[-1], origin_index=0)],
            original=[(m, ORIGINAL[m][0]) for m in members],
        )
        for k, i in enumerate(ext_inputs):
            write_dump(paths["af_open_data"], "AscBackend", fname, "input", k, fused[produced_by[i]])
        write_dump(paths["af_open_data"], "AscBackend", fname, "output", 0, fused[fname])
        produced_by[members[-1]] = fname
    on.op("out", "NetOutput", inputs=[f"{fused_name('R4')}:0"])
    on.write(paths["af_open_graph"])
    return paths


def build_cast_and_flatten(root: Path) -> dict[str, Path]:
    """A run whose one fused op ``F`` needs a cast and a flattening before it can be compared:
    its output is declared float16 but dumped widened to float32, shaped ``(8, 16)``, while the
    original ``A`` it stands for is a float16 ``(128,)``. Elements 80..95 (row 5) are 1.03 times
    the original. Written like :func:`build_network` (run-folder names); returns the paths."""
    rng = np.random.default_rng(3)
    ref = rng.standard_normal(128).astype(F16)
    got = ref.astype(np.float32).reshape(8, 16)
    got[5] = (got[5] * np.float32(1.03)).astype(F16)
    paths = {
        "af_open_graph": root / "dumpgraph_af_open" / "Build.json",
        "af_close_graph": root / "dumpgraph_af_close" / "Build.json",
        "af_open_data": root / "datadump_af_open",
        "af_close_data": root / "datadump_af_close",
    }
    on = GraphBuilder("on").op("x", "Data", outputs=[tensor([128])])
    on.fused(
        "F",
        inputs=["x:0"],
        outputs=[tensor([8, 16], origin_name="A", origin_index=0)],
        original=[("A", "Mul")],
    )
    off = GraphBuilder("off").op("x", "Data", outputs=[tensor([128])])
    off.op("A", "Mul", inputs=["x:0"], outputs=[tensor([128])])
    on.write(paths["af_open_graph"])
    off.write(paths["af_close_graph"])
    write_dump(paths["af_open_data"], "AscBackend", "F", "output", 0, got)
    write_dump(paths["af_close_data"], "Mul", "A", "output", 0, ref)
    return paths
