"""Linear chains of elementwise ops dumped with fusion off and on, in the real formats.

Fusion off: every op is its own float16 kernel, computing in float32 and rounding after
each op. Fusion on: each region computes in float32 and rounds once at its end; ``inject``
changes one region's float32 result before that rounding (a planted regression)::

    paths = build_chain(tmp_path, [ChainOp("Muls_1", "Muls", {"value": 0.05}, lambda v: v * F32(0.05)), ...],
                        regions=[("autofuse_0_Muls_Exp", ["Muls_1", "Exp_2"])])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from gefixtures import GraphBuilder, tensor, write_dump

from fpinspect.dumps import DumpComparison
from fpinspect.inspection.pipeline import Inspection
from fpinspect.inspection.settings import CompareSettings

F32 = np.float32
F16 = np.float16


@dataclass
class ChainOp:
    name: str
    type: str
    attrs: dict = field(default_factory=dict)
    fn: Callable[[np.ndarray], np.ndarray] = lambda v: v  #: float32 in, float32 out


def build_chain(
    root: Path,
    ops: list[ChainOp],
    regions: list[tuple[str, list[str]]],
    *,
    inject: dict[str, Callable] | None = None,
    seed: int = 0,
    shape=(64, 256),
    scale: float = 1.0,
) -> dict[str, Path]:
    """Write both graphs and dump folders under ``root``; return the ``compare`` flags' paths."""
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(F16)
    paths = {
        "af_open_graph": root / "dumpgraph_af_open" / "Build.json",
        "af_close_graph": root / "dumpgraph_af_close" / "Build.json",
        "af_open_data": root / "datadump_af_open",
        "af_close_data": root / "datadump_af_close",
    }
    t = list(shape)
    off = GraphBuilder("off").op("x", "Data", outputs=[tensor(t)])
    write_dump(paths["af_close_data"], "Data", "x", "output", 0, x)
    prev, value = "x", x
    for op in ops:
        out = op.fn(value.astype(F32)).astype(F16)
        off.op(op.name, op.type, inputs=[f"{prev}:0"], outputs=[tensor(t)], attrs=op.attrs or None)
        write_dump(paths["af_close_data"], op.type, op.name, "input", 0, value)
        write_dump(paths["af_close_data"], op.type, op.name, "output", 0, out)
        prev, value = op.name, out
    off.op("out", "NetOutput", inputs=[f"{prev}:0"]).write(paths["af_close_graph"])

    by_name = {op.name: op for op in ops}
    on = GraphBuilder("on").op("x", "Data", outputs=[tensor(t)])
    write_dump(paths["af_open_data"], "Data", "x", "output", 0, x)
    prev, value = "x", x
    for fused, members in regions:
        v = value.astype(F32)
        for m in members:
            v = by_name[m].fn(v)
        if inject and fused in inject:
            v = inject[fused](v)
        out = v.astype(F16)
        on.fused(
            fused,
            inputs=[f"{prev}:0"],
            outputs=[tensor(t, origin_name=members[-1], origin_index=0)],
            original=[(m, by_name[m].type) for m in members],
        )
        write_dump(paths["af_open_data"], "AscBackend", fused, "input", 0, value)
        write_dump(paths["af_open_data"], "AscBackend", fused, "output", 0, out)
        prev, value = fused, out
    on.op("out", "NetOutput", inputs=[f"{prev}:0"]).write(paths["af_open_graph"])
    return paths


def muls(name: str, value: float) -> ChainOp:
    return ChainOp(name, "Muls", {"value": value}, lambda v: v * F32(value))


def adds(name: str, value: float) -> ChainOp:
    return ChainOp(name, "Adds", {"value": value}, lambda v: v + F32(value))


def square(name: str) -> ChainOp:
    return ChainOp(name, "Square", {}, lambda v: v * v)


def exp(name: str) -> ChainOp:
    return ChainOp(name, "Exp", {}, np.exp)


def cancellation_chain() -> tuple[list[ChainOp], list[tuple[str, list[str]]]]:
    """Muls 0.05 -> Exp -> Adds -1 -> Muls 20, fused whole (computed in float32): eager rounds
    exp(x) to float16 before subtracting 1 and loses ~8 eps to cancellation."""
    ops = [muls("Muls_1", 0.05), exp("Exp_2"), adds("Adds_3", -1.0), muls("Muls_4", 20.0)]
    return ops, [("autofuse_0_Muls_Exp_Adds_Muls", [op.name for op in ops])]


def compare_with_replay(paths: dict[str, Path], replay: str = "failing"):
    """The report of ``compare`` on a chain's dumps, with ``--replay replay``."""
    c = DumpComparison(
        str(paths["af_open_graph"]),
        str(paths["af_close_graph"]),
        str(paths["af_open_data"]),
        str(paths["af_close_data"]),
    )
    return Inspection(c, CompareSettings(replay=replay)).report()
