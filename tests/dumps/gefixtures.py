"""Build small GE dump graphs and datadump folders in the real on-disk formats.

Graphs come out as ``atc --mode=5 --json`` writes them (``ascend_formats.md`` §1.3-1.4), with
its quirks: attributes as ``{"key", "value"}`` lists, proto3 defaults omitted (``id`` 0,
scalar ``shape``, empty ``layout``, ``input`` and ``attr``), singular floats as ``%g``
strings, C-escaped singular strings, ``null`` for an unconnected input's description, and,
with ``quoted_ints=True``, int64 values as strings::

    g = GraphBuilder()
    g.op("x", "Data", outputs=[tensor([2, 3])])
    g.fused("autofuse_0_Mul_Add", inputs=["x:0"],
            outputs=[tensor([2, 3], origin_name="Add_2", origin_index=0)],
            original=[("Mul_1", "Mul"), ("Add_2", "Add")])
    g.subgraph("body").op("y", "Relu", inputs=["a:0", "", "b:-1"])
    g.write(tmp_path / "on.json")

Datadump folders come out as ``msaccucmp.py convert`` writes them::

    write_dump(folder, "Add", "layer1/Add.2", "output", 0, array, timestamp=...)
    # -> folder/Add.layer1_Add_2.3.44.1783906987170021.output.0.npy

Names of 255 characters or more go to a uuid file name listed in ``mapping.csv``, as
msaccucmp does.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: A 16-digit microsecond timestamp like the ones in real dump names.
DEFAULT_TIMESTAMP = 1783906987170021

#: GE ``Format`` enum numbers of the layouts the fixtures use (``format_for_int``).
_FORMAT_INTS = {
    "NCHW": 0,
    "NHWC": 1,
    "ND": 2,
    "NC1HWC0": 3,
    "FRACTAL_Z": 4,
    "HWCN": 16,
    "C1HWNCoC0": 25,
    "NDHWC": 27,
    "FRACTAL_NZ": 29,
    "NCDHW": 30,
    "NDC1HWC0": 32,
}


class Raw:
    """An ``AttrDef`` JSON object to write as is, e.g. ``Raw({"dt": 1})`` or ``Raw({"t": {}})``."""

    def __init__(self, value: dict):
        self.value = value


def c_escape(text: str) -> str:
    """``google::protobuf::CEscape`` of the UTF-8 bytes of ``text`` (what GE does to ``s``)."""
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    return "".join(
        named.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}") for b in text.encode("utf-8")
    )


def tensor(
    shape: Sequence[int] = (),
    dtype: str | None = "DT_FLOAT16",
    layout: str | None = "ND",
    *,
    origin_format: str | None = None,
    origin_shape: Sequence[int] | None = None,
    origin_name: str | None = None,
    origin_index: int | None = None,
    attrs: dict | None = None,
) -> dict:
    """A tensor description for :meth:`GraphBuilder.op`.

    ``origin_format`` defaults to ``layout`` (without sub-format) and ``origin_shape`` to
    ``shape``; ``origin_name`` / ``origin_index`` become ``_datadump_origin_name`` /
    ``_datadump_origin_output_index`` (written only when not ``None``); ``attrs`` are extra
    description attributes.
    """
    return dict(
        shape=list(shape),
        dtype=dtype,
        layout=layout,
        origin_format=origin_format,
        origin_shape=None if origin_shape is None else list(origin_shape),
        origin_name=origin_name,
        origin_index=origin_index,
        attrs=dict(attrs or {}),
    )


class GraphBuilder:
    """Collects graphs and ops, then writes them as the JSON of ``atc --mode=5 --json``.

    The first graph (the root) is named ``name``; :meth:`subgraph` starts another graph
    that receives the following ops. Every method returns the builder for chaining.
    """

    def __init__(self, name: str = "root", *, quoted_ints: bool = False):
        self.quoted_ints = quoted_ints
        self.graphs: list[dict] = []
        self._outputs: dict[str, list[dict]] = {}
        self._next_id = 0
        self.subgraph(name)

    def subgraph(self, name: str) -> GraphBuilder:
        """Start a new ``graph[]`` entry; the ops added next belong to it."""
        self.graphs.append({"name": name, "op": []})
        return self

    def op(
        self,
        name: str,
        type: str,
        inputs: Iterable[str | None] = (),
        outputs: Iterable[dict] = (),
        attrs: dict | None = None,
        input_descs: Iterable[dict | None] | None = None,
    ) -> GraphBuilder:
        """Add an op to the current graph.

        ``inputs`` are raw ``OpDef.input`` strings: ``"producer:idx"``, ``""`` for an
        unconnected optional input, ``"producer:-1"`` for a control edge (``None`` writes a
        JSON ``null``). ``outputs`` are :func:`tensor` dicts. ``input_descs`` defaults to the
        producer's output description for each connected data input (``null`` for an
        unconnected one), as GE writes it. ``attrs`` values: str, int, float, bool, lists of
        those, or :class:`Raw`.
        """
        inputs = list(inputs)
        outputs = list(outputs)
        self._outputs[name] = outputs
        if input_descs is None:
            input_descs = [self._producer_desc(text) for text in inputs if not (text or "").endswith(":-1")]
        raw: dict[str, Any] = {"name": name, "type": type}
        if self._next_id:
            raw["id"] = self._int(self._next_id)
        self._next_id += 1
        if inputs:
            raw["input"] = inputs
        if attrs:
            raw["attr"] = self._attr_list(attrs)
        descs = [None if d is None else self._desc(d) for d in input_descs]
        if descs:
            raw["input_desc"] = descs
        if outputs:
            raw["output_desc"] = [self._desc(d) for d in outputs]
        self.graphs[-1]["op"].append(raw)
        return self

    def fused(
        self,
        name: str,
        inputs: Iterable[str] = (),
        outputs: Iterable[dict] = (),
        original: Iterable[tuple[str, str]] = (),
        type: str = "AscBackend",
        attrs: dict | None = None,
    ) -> GraphBuilder:
        """Add an autofuse op; ``original`` lists the (name, type) of the ops it replaced."""
        original = list(original)
        merged = {
            "_datadump_original_op_names": [n for n, _ in original],
            "_datadump_original_op_types": [t for _, t in original],
            **(attrs or {}),
        }
        return self.op(name, type, inputs, outputs, merged)

    def to_json(self) -> dict:
        """The whole model as the JSON object ``atc`` writes (a fresh copy each call)."""
        model = {"name": "fixture", "graph": self.graphs, "attr": self._attr_list({"atc_version": "fixture"})}
        return json.loads(json.dumps(model))

    def write(self, path: str | Path) -> Path:
        """Write :meth:`to_json` to ``path``; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json()), encoding="utf-8")
        return path

    # ------------------------------------------------------------------ encoding

    def _int(self, value: int) -> int | str:
        return str(value) if self.quoted_ints else value

    def _producer_desc(self, text: str | None) -> dict | None:
        if not text:
            return None
        producer, _, index = text.rpartition(":")
        outputs = self._outputs.get(producer, [])
        return outputs[int(index)] if int(index) < len(outputs) else tensor()

    def _desc(self, spec: dict) -> dict:
        """A ``TensorDescriptor`` as GE serializes it (``GeTensorDescAsProto``)."""
        layout = spec["layout"]
        origin_format = spec["origin_format"] or (layout.partition(":")[0] if layout else "ND")
        origin_shape = spec["shape"] if spec["origin_shape"] is None else spec["origin_shape"]
        attrs: dict[str, Any] = {
            "origin_format": origin_format,
            "origin_format_for_int": _FORMAT_INTS.get(origin_format, 2),
            "format_for_int": _FORMAT_INTS.get(layout.partition(":")[0] if layout else "ND", 2),
            "origin_shape_initialized": True,
            "origin_shape": Raw({"list": self._list_value([int(d) for d in origin_shape], "VT_LIST_INT")}),
        }
        if spec["origin_name"] is not None:
            attrs["_datadump_origin_name"] = spec["origin_name"]
        if spec["origin_index"] is not None:
            attrs["_datadump_origin_output_index"] = spec["origin_index"]
        attrs.update(spec["attrs"])
        desc: dict[str, Any] = {}
        if spec["dtype"]:
            desc["dtype"] = spec["dtype"]
        if spec["shape"]:
            desc["shape"] = {"dim": [self._int(int(d)) for d in spec["shape"]]}
        if layout:
            desc["layout"] = layout
        desc["attr"] = self._attr_list(attrs)
        desc["device_type"] = "NPU"
        return desc

    def _attr_list(self, attrs: dict) -> list[dict]:
        return [{"key": key, "value": self._attr_value(value)} for key, value in attrs.items()]

    def _attr_value(self, value: Any) -> dict:
        """One ``AttrDef``: a oneof, so ``"i": 0`` and ``"b": false`` ARE written."""
        if isinstance(value, Raw):
            return value.value
        if isinstance(value, bool):
            return {"b": value}
        if isinstance(value, int):
            return {"i": self._int(value)}
        if isinstance(value, float):
            return {"f": f"{value:g}"}
        if isinstance(value, str):
            return {"s": c_escape(value)}
        if isinstance(value, (list, tuple)):
            return {"list": self._list_value(list(value))}
        raise TypeError(f"no AttrDef encoding for {value!r}")

    def _list_value(self, items: list, val_type: str | None = None) -> dict:
        """A ``ListValue``: repeated strings raw, floats as numbers, empty members omitted."""
        if not items and val_type is None:
            return {}  # VT_LIST_NONE is the proto3 default, so nothing is written
        first = items[0] if items else 0
        if isinstance(first, bool):
            member, val_type = "b", val_type or "VT_LIST_BOOL"
        elif isinstance(first, int):
            member, val_type = "i", val_type or "VT_LIST_INT"
            items = [self._int(i) for i in items]
        elif isinstance(first, float):
            member, val_type = "f", val_type or "VT_LIST_FLOAT"
        else:
            member, val_type = "s", val_type or "VT_LIST_STRING"
        return {member: items, "val_type": val_type} if items else {"val_type": val_type}


# ---------------------------------------------------------------------- datadump folders


def dump_name(
    op_type: str,
    op_name: str,
    io: str,
    index: int,
    *,
    timestamp: int = DEFAULT_TIMESTAMP,
    task_id: int = 3,
    stream_id: int = 44,
    shape: Sequence[int] | None = None,
) -> str:
    """The file name ``msaccucmp.py convert`` gives one tensor of a raw dump.

    ``{type}.{name}.{task_id}.{stream_id}.{timestamp}.{io}.{index}[.{d0xd1...}].npy`` with
    ``.``, ``/``, ``\\`` and space in type and name replaced by ``_`` as the dumper does;
    ``shape`` adds the field ``convert -f FORMAT`` appends.
    """

    def clean(text: str) -> str:
        return re.sub(r"[./\\ ]", "_", text)

    suffix = f".{'x'.join(str(d) for d in shape)}" if shape is not None else ""
    return f"{clean(op_type)}.{clean(op_name)}.{task_id}.{stream_id}.{timestamp}.{io}.{index}{suffix}.npy"


def write_dump(
    folder: str | Path,
    op_type: str,
    op_name: str,
    io: str,
    index: int,
    array: np.ndarray,
    *,
    timestamp: int = DEFAULT_TIMESTAMP,
    task_id: int = 3,
    stream_id: int = 44,
    shape_suffix: bool = False,
    mapped: bool | None = None,
) -> Path:
    """Save ``array`` in ``folder`` under its dump file name (:func:`dump_name`).

    ``shape_suffix`` appends the ``-f FORMAT`` shape field. ``mapped`` stores the file
    under a uuid name and appends ``uuid_name,original_name`` to ``mapping.csv``; by default
    that happens only for names of 255 characters or more, as msaccucmp does.
    Returns the written path.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = dump_name(
        op_type,
        op_name,
        io,
        index,
        timestamp=timestamp,
        task_id=task_id,
        stream_id=stream_id,
        shape=array.shape if shape_suffix else None,
    )
    if mapped or (mapped is None and len(name) >= 255):
        stored = uuid.uuid3(uuid.NAMESPACE_DNS, name).hex + ".npy"
        with open(folder / "mapping.csv", "a", encoding="utf-8") as f:
            f.write(f"{stored},{name}\n")
        name = stored
    path = folder / name
    np.save(path, np.asarray(array), allow_pickle=False)
    return path


# ---------------------------------------------------------------------- a ready-made pair


def chain_pair() -> tuple[GraphBuilder, GraphBuilder]:
    """Fusion-on and fusion-off graphs of ``x -> Mul_1 -> Add_2 -> Relu_3 -> out``.

    Fusion off: every op on its own (``Mul_1`` also reads the constant ``w``). Fusion on:
    ``Mul_1`` and ``Add_2`` become ``autofuse_0_Mul_Add`` (AscBackend, output 0 stands for
    ``Add_2:0``), and ``Relu_3`` reads the fused op. Tensors are float16 of shape (2, 3).
    """
    t = [2, 3]
    off = (
        GraphBuilder("off")
        .op("x", "Data", outputs=[tensor(t)])
        .op("w", "Const", outputs=[tensor(t)])
        .op("Mul_1", "Mul", inputs=["x:0", "w:0"], outputs=[tensor(t)])
        .op("Add_2", "Add", inputs=["Mul_1:0", "x:0"], outputs=[tensor(t)])
        .op("Relu_3", "Relu", inputs=["Add_2:0"], outputs=[tensor(t)])
        .op("out", "NetOutput", inputs=["Relu_3:0"])
    )
    on = (
        GraphBuilder("on")
        .op("x", "Data", outputs=[tensor(t)])
        .op("w", "Const", outputs=[tensor(t)])
        .fused(
            "autofuse_0_Mul_Add",
            inputs=["x:0", "w:0"],
            outputs=[tensor(t, origin_name="Add_2", origin_index=0)],
            original=[("Mul_1", "Mul"), ("Add_2", "Add")],
        )
        .op("Relu_3", "Relu", inputs=["autofuse_0_Mul_Add:0"], outputs=[tensor(t)])
        .op("out", "NetOutput", inputs=["Relu_3:0"])
    )
    return on, off


# ---------------------------------------------------------------------- every fusion kind


def fusion_kinds_run(root: str | Path, *, shift_matmul: bool = False) -> dict[str, Path]:
    """A run folder of ``x -> conv1 -> mm -> autofuse_0`` (float16, shape (4, 8)).

    Fusion on: ``conv1`` is a UB-fused ``Conv2D`` that absorbed ``bn1`` (its output stands for
    ``bn1:0``), ``mm`` a ``MatMul`` fusion left alone, ``autofuse_0`` an AscBackend for ``relu``.
    Fusion off: every op on its own. ``shift_matmul`` makes the fusion-on MatMul diverge (×1.5),
    and the fused Relu after it inherits that. Returns the paths as ``compare``'s flags name them.
    """
    root = Path(root)
    t = [4, 8]
    on = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor(t)])
        .op(
            "conv1",
            "Conv2D",
            inputs=["x:0"],
            outputs=[tensor(t, origin_name="bn1", origin_index=0)],
            attrs={"_datadump_original_op_names": ["conv1", "bn1"], "strides": [1, 1]},
        )
        .op("mm", "MatMul", inputs=["conv1:0"], outputs=[tensor(t)], attrs={"transpose_x1": False})
        .fused(
            "autofuse_0",
            inputs=["mm:0"],
            outputs=[tensor(t, origin_name="relu", origin_index=0)],
            original=[("relu", "Relu")],
        )
    )
    off = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor(t)])
        .op("conv1", "Conv2D", inputs=["x:0"], outputs=[tensor(t)])
        .op("bn1", "BatchNorm", inputs=["conv1:0"], outputs=[tensor(t)])
        .op("mm", "MatMul", inputs=["bn1:0"], outputs=[tensor(t)])
        .op("relu", "Relu", inputs=["mm:0"], outputs=[tensor(t)])
    )
    paths = {
        "af_open_graph": on.write(root / "dumpgraph_af_open" / "Build.json"),
        "af_close_graph": off.write(root / "dumpgraph_af_close" / "Build.json"),
        "af_open_data": root / "datadump_af_open",
        "af_close_data": root / "datadump_af_close",
    }
    rng = np.random.default_rng(0)
    bn, mm = (rng.standard_normal(t).astype(np.float16) for _ in range(2))
    on_mm = mm * np.float16(1.5) if shift_matmul else mm
    write_dump(paths["af_open_data"], "Conv2D", "conv1", "output", 0, bn)
    write_dump(paths["af_open_data"], "MatMul", "mm", "output", 0, on_mm)
    write_dump(paths["af_open_data"], "AscBackend", "autofuse_0", "output", 0, np.maximum(on_mm, 0))
    write_dump(paths["af_close_data"], "BatchNorm", "bn1", "output", 0, bn)
    write_dump(paths["af_close_data"], "MatMul", "mm", "output", 0, mm)
    write_dump(paths["af_close_data"], "Relu", "relu", "output", 0, np.maximum(mm, 0))
    return paths


def _chain_desc(n: int, origin: str | None = None) -> dict:
    attrs = [{"key": "origin_format", "value": {"s": "ND"}}]
    if origin:
        attrs += [
            {"key": "_datadump_origin_name", "value": {"s": origin}},
            {"key": "_datadump_origin_output_index", "value": {"i": 0}},
        ]
    return {"dtype": "DT_FLOAT16", "shape": {"dim": [n]}, "layout": "ND", "attr": attrs}


def chain_run(root: str | Path, ops: int, n: int) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A run of ``ops`` fused ops ``autofuse_{i}`` (AscBackend, fed by ``x``), each replacing one
    ``Mul`` ``Op_{i}``, float16 outputs of ``n`` elements, with few fields (compact JSON, for
    many ops): writes ``root/open.json`` and ``root/close.json`` and makes the empty data folders
    ``root/open`` and ``root/close``. Returns ``compare``'s four paths (``open_graph``,
    ``close_graph``, ``open_data``, ``close_data``) and, per op, the paths its fusion-on and
    fusion-off output dumps must have: the caller writes them."""
    root = Path(root)
    on = [{"name": "x", "type": "Data", "output_desc": [_chain_desc(n)]}]
    off = [{"name": "x", "type": "Data", "output_desc": [_chain_desc(n)]}]
    for i in range(ops):
        names = {"list": {"s": [f"Op_{i}"], "val_type": "VT_LIST_STRING"}}
        on.append(
            {
                "name": f"autofuse_{i}",
                "type": "AscBackend",
                "input": ["x:0"],
                "output_desc": [_chain_desc(n, f"Op_{i}")],
                "attr": [{"key": "_datadump_original_op_names", "value": names}],
            }
        )
        off.append({"name": f"Op_{i}", "type": "Mul", "input": ["x:0"], "output_desc": [_chain_desc(n)]})
    for side, graph in (("open", on), ("close", off)):
        (root / side).mkdir(parents=True, exist_ok=True)
        (root / f"{side}.json").write_text(
            json.dumps({"name": "chain", "graph": [{"name": side, "op": graph}]})
        )
    paths = {
        "open_graph": str(root / "open.json"),
        "close_graph": str(root / "close.json"),
        "open_data": str(root / "open"),
        "close_data": str(root / "close"),
    }
    dumps = [
        (
            str(root / "open" / f"AscBackend.autofuse_{i}.3.44.{DEFAULT_TIMESTAMP + i}.output.0.npy"),
            str(root / "close" / f"Mul.Op_{i}.3.44.{DEFAULT_TIMESTAMP + i}.output.0.npy"),
        )
        for i in range(ops)
    ]
    return paths, dumps


def chain_comparison_paths(root, ops: int, n: int) -> dict[str, str]:
    """A :func:`chain_run` whose dumps are written: each fusion-on output 1.001 times its
    fusion-off output (random, seeded), so every pair is compared and none is identical; enough
    small pairs for many batches of ``compare --jobs N`` or a cluster (64 pairs a batch).
    Returns ``DumpComparison``'s four paths by their ``af_*`` names."""
    import numpy as np

    paths, dumps = chain_run(root, ops, n)
    rng = np.random.default_rng(0)
    for on, off in dumps:
        base = rng.standard_normal(n).astype(np.float16)
        np.save(off, base)
        np.save(on, (base.astype(np.float32) * np.float32(1.001)).astype(np.float16))
    return {f"af_{key}": path for key, path in paths.items()}


def big_run(root, ops: int, n: int) -> list[str]:
    """``compare`` flags of a run of ``ops`` fused ops with float16 outputs of ``n`` elements
    (sparse files of zeros: no disk used, seconds of work per pair)."""
    import numpy as np

    paths, dumps = chain_run(root, ops, n)
    for files in dumps:
        for path in files:
            np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=(n,)).flush()
    return [arg for key, path in paths.items() for arg in (f"--af-{key.replace('_', '-')}", path)]


def alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie, dead but not reaped yet, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children(pid: int) -> list[int]:
    """The processes ``pid`` started, from any of its threads (Dask's nanny forks from its own)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def stop_compare_with_workers(root: Path, pool: list[str], *, ops: int, settle: float, sig=None) -> None:
    """``compare`` of a big run with ``pool`` (``--jobs 2``, ``--scheduler local:2``) stopped by
    ``sig`` (default ctrl+c's) once its two workers run and ``settle`` seconds more: it ends with
    its one line and status (:func:`interrupt.interrupt_fpinspect`), no worker outlives it, and no
    partial report is left."""
    import os
    import signal
    import time

    from interrupt import interrupt_fpinspect

    workers: list[int] = []

    def two_workers(pid: int) -> bool:
        workers[:] = children(pid)
        return len(workers) >= 2

    flags = [*big_run(root, ops, 1 << 27), "--format", "json", "-o", str(Path(root) / "report.json")]
    try:
        interrupt_fpinspect(
            ["compare", *flags, *pool, "--replay", "none"],
            two_workers,
            "the workers",
            settle,
            sig or signal.SIGINT,
        )
        time.sleep(0.5)  # a worker ended with its caller is reaped by init: gone shortly after
        assert not [pid for pid in workers if alive(pid)], "a worker outlived compare"
    finally:
        for pid in workers:  # none left behind the test, whatever happened
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert not list(Path(root).glob("*report.json*")), "a partial report was left"
