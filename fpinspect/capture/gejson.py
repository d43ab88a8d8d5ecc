"""Write a dump graph as ``atc --mode=5 --json`` writes GE's ``Build`` graph.

The JSON is GE's ``ModelDef`` protobuf through Pb2Json (``ascend_formats.md`` §1.3-1.5), so
it has the same quirks the reader (:mod:`fpinspect.dumps.formats.ge_decode`) absorbs: maps as lists of
``{"key", "value"}``; ``AttrDef`` as a oneof (``"i": 0`` is written); fields at their proto3
default omitted (``id`` 0, the ``shape`` of a scalar, empty ``input`` or ``attr``); enums by
name (``"DT_FLOAT16"``, ``"VT_LIST_INT"``); singular strings C-escaped, repeated ones raw.
Every tensor description carries the attributes ``GeTensorDescAsProto`` always writes
(``origin_format``, ``origin_format_for_int``, ``format_for_int``, ``origin_shape_initialized``,
``origin_shape``, ``origin_data_type``); a fused op's outputs add ``_datadump_origin_name``,
``_datadump_origin_output_index`` and ``_datadump_origin_format``, the op itself
``_datadump_original_op_names`` / ``_datadump_original_op_types``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..dumps.formats.ge_text import c_escape as c_escape_bytes
from .storage import Desc

#: GE ``Format`` enum numbers (``format_for_int``) of the layouts capture writes.
FORMAT_INT = {"NCHW": 0, "ND": 2, "NC1HWC0": 3, "FRACTAL_NZ": 29}
#: GE's name for the op that collects the graph outputs.
NET_OUTPUT = "Node_Output"


def c_escape(text: str) -> str:
    """``google::protobuf::CEscape`` of the UTF-8 bytes of ``text``: what GE writes for ``s``."""
    return c_escape_bytes(text.encode("utf-8"))


def float32_text(value: float) -> str:
    """A float attribute as GE holds it (a C++ ``float``): the shortest decimal that reads
    back as the same float32 (``0.1`` for 0.100000001490116...). Pb2Json writes singular
    floats as strings; ``%g`` would lose digits (``0.0883883`` for 1/sqrt(128))."""
    return str(np.float32(value))


def attr_value(value: Any) -> dict:
    """One ``AttrDef``: str -> ``s``, bool -> ``b``, int -> ``i``, float -> ``f`` (float32
    text), list of str / int / float -> ``list``."""
    if isinstance(value, str):
        return {"s": c_escape(value)}
    if isinstance(value, bool):
        return {"b": value}
    if isinstance(value, int):
        return {"i": value}
    if isinstance(value, float):
        return {"f": float32_text(value)}
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, str) for v in value):
            member, val_type, items = "s", "VT_LIST_STRING", list(value)
        elif any(isinstance(v, float) for v in value):  # repeated floats are JSON numbers
            member, val_type, items = "f", "VT_LIST_FLOAT", [float(np.float32(v)) for v in value]
        else:
            member, val_type, items = "i", "VT_LIST_INT", [int(v) for v in value]
        listed: dict[str, Any] = {member: items} if value else {}
        return {"list": {**listed, "val_type": val_type}}
    raise TypeError(f"no AttrDef encoding for {value!r}")


def attr_list(attrs: dict[str, Any]) -> list[dict]:
    return [{"key": key, "value": attr_value(value)} for key, value in attrs.items()]


def tensor_desc(desc: Desc) -> dict:
    """One ``TensorDescriptor`` as ``GeTensorDescAsProto`` serialises it."""
    attrs: dict[str, Any] = {
        "origin_format": desc.origin_format,
        "origin_format_for_int": FORMAT_INT[desc.origin_format],
        "format_for_int": FORMAT_INT[desc.layout],
        "origin_shape_initialized": True,
        "origin_shape": list(desc.shape),
        "origin_data_type": desc.ge_dtype,
    }
    if desc.origin is not None:
        attrs["_datadump_origin_name"], attrs["_datadump_origin_output_index"] = desc.origin
        attrs["_datadump_origin_format"] = desc.origin_format
    out: dict[str, Any] = {"dtype": desc.ge_dtype}
    if desc.storage_shape:
        out["shape"] = {"dim": list(desc.storage_shape)}
    out["layout"] = desc.layout
    out["attr"] = attr_list(attrs)
    out["device_type"] = "NPU"
    return out


class GraphWriter:
    """Collects the ops of one graph in execution order, then writes the model JSON."""

    def __init__(self, graph_name: str):
        self.graph_name = graph_name
        self.ops: list[dict] = []
        self.inputs: list[str] = []

    def add(
        self,
        name: str,
        type: str,
        inputs: list[str],
        input_descs: list[Desc],
        output_descs: list[Desc],
        attrs: dict[str, Any] | None = None,
    ) -> None:
        """Add an op; ``inputs`` are ``"producer:index"`` strings, one per input desc."""
        op: dict[str, Any] = {"name": name, "type": type}
        if self.ops:
            op["id"] = len(self.ops)
        if inputs:
            op["input"] = list(inputs)
        if attrs:
            op["attr"] = attr_list(attrs)
        if input_descs:
            op["input_desc"] = [tensor_desc(d) for d in input_descs]
        if output_descs:
            op["output_desc"] = [tensor_desc(d) for d in output_descs]
        if type == "Data":
            self.inputs.append(f"{name}:0")
        self.ops.append(op)

    def write(self, path: Path, model_name: str, attrs: dict[str, Any]) -> Path:
        graph: dict[str, Any] = {"name": self.graph_name}
        if self.inputs:
            graph["input"] = self.inputs
        graph["op"] = self.ops
        model = {"name": model_name, "graph": [graph], "attr": attr_list(attrs)}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(model, indent=1), encoding="utf-8")
        return path
