"""A repro bundle of one fused op: what a compiler team needs to see the difference on their desk.

``bundle.npz`` holds the op's boundary inputs and its compared outputs on both sides (as the
comparison loaded them: layouts restored, declared formats); ``subgraph.json`` the original ops it
replaced (types, attributes, edges, logical shapes and formats), which array is which, and the
report's replay numbers; ``ops/`` a copy of the replay's op semantics (plain numpy); ``repro.py``
(:mod:`.repro_script`) recomputes the eager and float64 replays with numpy alone and prints the
errors next to the report's.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

from ..dumps.engine.sides import SIDE_ERRORS, load_sides
from ..dumps.formats.ge_types import numpy_dtype_name
from ..numerics import float_format, is_supported
from .bind import array_of, bind
from .evidence import replay_op
from .ops import OPS
from .subgraph import extract, logical_shape

#: Formats the bundle's script computes in (numpy has no bfloat16: its bit patterns are stored).
SCRIPT_FORMATS = ("float16", "bfloat16", "float32", "float64")
_OPS_SOURCE = Path(__file__).resolve().parent / "ops"
_SCRIPT = Path(__file__).resolve().parent / "repro_script.py"


class ReproError(Exception):
    """The bundle cannot be made; ``str()`` is one sentence."""


def _format(ge_dtype: str | None) -> str | None:
    name = numpy_dtype_name(ge_dtype)
    if name is None:
        return None
    return float_format(name).name if is_supported(name) else name


def _stored(array: np.ndarray, fmt: str | None) -> np.ndarray:
    """An array as the bundle stores it: bfloat16 as its bit patterns."""
    if fmt == "bfloat16":
        return np.ascontiguousarray(array).view(np.uint16)
    return np.ascontiguousarray(array)


def _desc(desc) -> dict | None:
    if desc is None:
        return None
    return {
        "shape": list(logical_shape(desc)),
        "format": _format(desc.dtype),
        "layout": desc.origin_format or desc.layout,
    }


def _plain(value):
    """An attribute value as JSON holds it (numpy scalars and arrays as numbers and lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def write_bundle(comparison, name: str, out: str | os.PathLike) -> dict:
    """Write the repro bundle of fused op ``name`` of ``comparison`` (a
    :class:`~fpinspect.dumps.engine.compare.DumpComparison`) into the folder ``out``; returns the manifest.
    Raises :class:`ReproError` when the op is unknown or cannot be replayed."""
    try:
        fused = comparison.fused_op(name)
    except KeyError:
        known = ", ".join(op.name for op in comparison.fused[:8])
        raise ReproError(
            f"the run has no fused op {name} (fused ops: {known}{', ...' if len(comparison.fused) > 8 else ''})"
        ) from None
    sub = extract(comparison.close_model, fused, comparison.close_positions)
    unknown = [t for t in sub.types if t not in OPS]
    if sub.missing or not sub.ops or unknown:
        why = (
            f"its original ops {', '.join(sub.missing)} are not in the fusion-off graph"
            if sub.missing
            else f"no replay semantic for {', '.join(unknown)}"
            if unknown
            else "it names no original ops"
        )
        raise ReproError(f"{name} cannot be replayed: {why}")
    formats = {_format(d.dtype) for op in sub.ops for d in op.input_desc + op.output_desc if d is not None}
    odd = sorted(f for f in formats if f and f.startswith(("float", "bfloat")) and f not in SCRIPT_FORMATS)
    if odd:
        raise ReproError(
            f"{name} computes in {', '.join(odd)}, which the bundle's numpy script cannot round to"
        )
    bound = bind(comparison, sub)
    if bound.missing:
        raise ReproError(f"{name} cannot be replayed: {'; '.join(bound.missing[:3])}")
    evidence = replay_op(comparison, name).outputs
    arrays: dict[str, np.ndarray] = {}

    def keep(array: np.ndarray, fmt: str | None) -> str:
        key = f"a{len(arrays)}"
        arrays[key] = _stored(array, fmt)
        return key

    boundary = []
    for b in sub.boundary:
        fmt = _format(b.desc.dtype) if b.desc is not None else None
        on, off = bound.on[b.key], bound.off[b.key]
        fmt = fmt if fmt in SCRIPT_FORMATS or fmt is None else None
        boundary.append(
            {
                "producer": b.producer,
                "index": b.index,
                "format": fmt,
                "on": keep(on, fmt),
                "off": keep(off, fmt),
            }
        )
    names = {op.name for op in sub.ops}
    outputs = []
    for plan in comparison.outputs[name]:
        if not plan.comparable or plan.origin_op not in names:
            continue
        try:
            sides = load_sides(plan)
        except SIDE_ERRORS as exc:
            raise ReproError(f"{name} output {plan.fused_index}: {exc}") from None
        fused_arr, eager_arr = array_of(sides.fused), array_of(sides.original)
        fmt = _format(sub.op(plan.origin_op).output_desc[plan.origin_index].dtype)
        ev = evidence.get(plan.fused_index)
        outputs.append(
            {
                "fused_index": plan.fused_index,
                "origin": [plan.origin_op, plan.origin_index],
                "format": fmt,
                "fused": keep(fused_arr, fmt),
                "eager": keep(eager_arr, fmt),
                "expected": None if ev is None else ev.to_json(),
            }
        )
    manifest = {
        "op": name,
        "type": fused.type,
        "ops": [
            {
                "name": op.name,
                "type": op.type,
                "attrs": _plain(dict(op.attrs)),
                "refs": [None if r is None else [r.op, r.index] for r in op.inputs],
                "inputs": [_desc(d) for d in op.input_desc],
                "outputs": [_desc(d) for d in op.output_desc],
            }
            for op in sub.ops
        ],
        "boundary": boundary,
        "outputs": outputs,
    }
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "bundle.npz", **arrays)
        (folder / "subgraph.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        shutil.copyfile(_SCRIPT, folder / "repro.py")
        shutil.copytree(
            _OPS_SOURCE, folder / "ops", dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
        )
    except (OSError, TypeError, ValueError) as exc:
        raise ReproError(
            f"cannot write the bundle to {folder} ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    return manifest
