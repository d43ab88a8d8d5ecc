"""Capture a fusion-on / fusion-off dump pair from a PyTorch model.

:class:`Capture` traces the model, runs it op by op (fusion off), partitions it and runs
the regions through ``torch.compile`` (fusion on); :meth:`Capture.write` then writes one
dump pair in the folder layout ``fpinspect compare`` and ``fpinspect open`` expect::

    DIR/dumpgraph_af_open/Build.json    DIR/datadump_af_open/
    DIR/dumpgraph_af_close/Build.json   DIR/datadump_af_close/

Compiling is the slow part, so one capture can write several pairs (another storage
layout, another injected fault) without compiling again.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from .choices import DEMO_NAMES, DEVICES, DTYPE_NAMES, LAYOUT_MODES
from .dumpwriter import DumpWriter
from .eager import Progress, run_eager
from .errors import CaptureError
from .fused import CompiledRegion, FusedRunner
from .gejson import NET_OUTPUT, GraphWriter
from .inject import Injection
from .partition import Region, partition
from .storage import Desc, describe, store
from .trace import DATA, TracedGraph, ValueRef, build_graph, export

DTYPES = {name: getattr(torch, name) for name in DTYPE_NAMES}


@dataclass(frozen=True)
class DumpPair:
    """The four paths of one capture, named as ``fpinspect compare``'s flags."""

    open_graph: Path
    close_graph: Path
    open_data: Path
    close_data: Path

    @classmethod
    def under(cls, out: Path) -> DumpPair:
        out = Path(out)
        return cls(
            out / "dumpgraph_af_open" / "Build.json",
            out / "dumpgraph_af_close" / "Build.json",
            out / "datadump_af_open",
            out / "datadump_af_close",
        )

    def compare_args(self) -> list[str]:
        return [
            "--af-open-graph",
            str(self.open_graph),
            "--af-close-graph",
            str(self.close_graph),
            "--af-open-data",
            str(self.open_data),
            "--af-close-data",
            str(self.close_data),
        ]

    def clear(self) -> None:
        """Remove earlier captures from the four folders, so no stale dump is compared."""
        for folder in (self.open_graph.parent, self.close_graph.parent, self.open_data, self.close_data):
            shutil.rmtree(folder, ignore_errors=True)


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def traced(
    module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], *, dtype: str, device: str
) -> TracedGraph:
    """``module`` in eval mode, converted with its floating example ``inputs`` to ``dtype`` on
    ``device``, and traced. Raises :class:`CaptureError` for anything the user must fix."""
    if dtype not in DTYPES:
        raise CaptureError(f"--dtype {dtype} is not supported; use one of {', '.join(DTYPES)}")
    if device not in DEVICES:
        raise CaptureError(f"--device {device} is not supported; use one of {', '.join(DEVICES)}")
    if device == "cuda" and not torch.cuda.is_available():
        raise CaptureError("--device cuda needs a CUDA GPU, and PyTorch sees none")
    module = module.eval().to(device=device, dtype=DTYPES[dtype])
    inputs = tuple(
        x.to(device=device, dtype=DTYPES[dtype]) if x.is_floating_point() else x.to(device) for x in inputs
    )
    return build_graph(export(module, inputs), inputs)


class Capture:
    """One model traced, run fusion-off and fusion-on (regions compiled), ready to write.

    ``module`` is put in eval mode and converted, with the floating example ``inputs``, to
    ``dtype`` on ``device``. Raises :class:`CaptureError` for anything the user must fix.
    """

    def __init__(
        self,
        module: torch.nn.Module,
        inputs: tuple[torch.Tensor, ...],
        *,
        dtype: str = "float16",
        device: str = "cpu",
        name: str = "model",
        progress: Progress | None = None,
    ):
        if progress:
            progress("tracing with torch.export", 0, 1)
        self.graph: TracedGraph = traced(module, inputs, dtype=dtype, device=device)
        self.name, self.dtype, self.device = name, DTYPES[dtype], device
        self.eager = run_eager(self.graph, progress)
        self.fused = FusedRunner(self.graph, partition(self.graph))
        self.clean = self.fused.run(progress=progress)
        self.inert: list[Injection] = []  #: planted faults of the last write that changed nothing

    @property
    def regions(self) -> list[CompiledRegion]:
        """The fusion regions in execution order, with their GE names."""
        return self.fused.regions

    def region(self, named: str, option: str) -> CompiledRegion:
        """The region ``named`` (its name or number) by the command-line ``option``;
        :class:`CaptureError` if there is none."""
        for r in self.regions:
            if named in (r.name, str(r.region.index)):
                return r
        listed = ", ".join(r.name for r in self.regions[:6]) + (", ..." if len(self.regions) > 6 else "")
        raise CaptureError(
            f"{option} names region {named!r}, but the regions are numbered 0-{len(self.regions) - 1}: {listed}"
        )

    def target(self, injection: Injection) -> CompiledRegion:
        """The region ``injection`` names; :class:`CaptureError` if there is none, or if the
        fault could not change anything it writes (a planted fault nobody can find)."""
        injection.check_dtype(self.dtype)
        target = self.region(injection.region, "--inject")
        if not injection.changes(self.graph, target.region):
            reachable = [str(r.region.index) for r in self.regions if injection.changes(self.graph, r.region)]
            some = ", ".join(reachable[:8]) + (", ..." if len(reachable) > 8 else "")
            raise CaptureError(
                f"--inject {injection} changes nothing: region {target.region.index} ({target.name}) writes "
                f"only integer or boolean tensors; plant it in a region with floating outputs"
                + (f" ({some})" if reachable else "")
            )
        return target

    def unfused(self, named: Sequence[str]) -> frozenset[int]:
        """The numbers of the regions ``--unfuse`` names; :class:`CaptureError` for one there is not."""
        return frozenset(self.region(n, "--unfuse").region.index for n in named)

    def write(
        self,
        out: Path,
        *,
        storage_layouts: str = "plain",
        injections: Sequence[Injection] = (),
        unfuse: Sequence[str] = (),
        raw: bool = False,
        progress: Progress | None = None,
    ) -> DumpPair:
        """Write the dump pair under ``out`` (its four folders are replaced); ``raw`` writes raw
        dump files, as the device does, instead of msaccucmp's ``.npy`` files. The regions
        ``unfuse`` names run op by op in the fusion-on run too: its graph has their original ops
        where the fused op would be."""
        if storage_layouts not in LAYOUT_MODES:
            raise CaptureError(
                f"--storage-layouts {storage_layouts} is unknown; use one of {', '.join(LAYOUT_MODES)}"
            )
        fused_env = self.clean
        unfused = self.unfused(unfuse)
        if injections or unfused:
            for injection in injections:
                self.target(injection)
            fused_env = self.fused.run(injections, unfused=unfused)
        self.inert = list(self.fused.inert) if injections else []
        pair = DumpPair.under(out)
        pair.clear()
        close = _Side(self.graph, self.eager, storage_layouts, DumpWriter(pair.close_data, raw=raw))
        for op in self.graph.ops:
            if op.is_source:
                close.source(op)
            else:
                close.op(op.name, op.type, op.inputs, op.refs(), cube=op.cube, attrs=op.attrs)
        opened = _Side(self.graph, fused_env, storage_layouts, DumpWriter(pair.open_data, raw=raw))
        for op in self.graph.ops:
            if op.is_source:
                opened.source(op)
        compiled = {r.region: r for r in self.regions}
        for done, unit in enumerate(self.fused.units, 1):
            if isinstance(unit, Region) and unit.index not in unfused:
                r = compiled[unit]
                opened.op(r.name, r.type, unit.inputs, unit.outputs, original=unit)
            else:
                for op in unit.members if isinstance(unit, Region) else [unit]:
                    opened.op(op.name, op.type, op.inputs, op.refs(), cube=op.cube, attrs=op.attrs)
            if progress:
                progress("writing dumps", done, len(self.fused.units))
        attrs = {
            "capture_model": self.name,
            "capture_dtype": _dtype_name(self.dtype),
            "capture_device": self.device,
            "torch_version": torch.__version__,
        }
        close.finish(pair.close_graph, f"{self.name}_af_close", attrs)
        opened.finish(pair.open_graph, f"{self.name}_af_open", attrs)
        return pair


def capture_of(spec, progress: Progress | None = None) -> Capture:
    """The :class:`Capture` of ``spec`` (a :class:`~.spec.CaptureSpec`): its model loaded,
    traced, run and compiled, as ``fpinspect capture`` made it."""
    from .models import load_model

    module, inputs = load_model(spec.model, spec.seed)
    name = spec.model if spec.model in DEMO_NAMES else spec.model.rpartition(":")[2]
    return Capture(module, inputs, dtype=spec.dtype, device=spec.device, name=name, progress=progress)


class _Side:
    """The graph JSON and datadump folder of one run, written op by op in execution order."""

    def __init__(self, graph: TracedGraph, env: dict[ValueRef, torch.Tensor], mode: str, dumps: DumpWriter):
        self.graph, self.env, self.mode, self.dumps = graph, env, mode, dumps
        self.writer = GraphWriter("Build")
        self.descs: dict[ValueRef, Desc] = {}
        self.stored: dict[ValueRef, np.ndarray] = {}
        self.where: dict[ValueRef, str] = {}  # tensor -> "producer:index" in this graph
        self.data_index = 0

    def source(self, op) -> None:
        """A model input (``Data``) or weight (``Const``): described, fed, never dumped."""
        ref = ValueRef(op.name, 0)
        array = self.stored[ref] = _numpy(self.env[ref])
        self.descs[ref] = describe(tuple(array.shape), _dtype_name(op.outputs[0].dtype))
        self.where[ref] = f"{op.name}:0"
        attrs = None
        if op.kind == DATA:
            attrs = {"index": self.data_index}
            self.data_index += 1
        self.writer.add(op.name, op.type, [], [], [self.descs[ref]], attrs)

    def op(
        self,
        name: str,
        type: str,
        inputs: list[ValueRef],
        outputs: list[ValueRef],
        *,
        cube: bool = False,
        attrs: dict | None = None,
        original: Region | None = None,
    ) -> None:
        """A kernel with its GE ``attrs`` (or, with ``original``, a fused region) reading
        ``inputs``, writing ``outputs``."""
        descs = []
        for k, ref in enumerate(outputs):
            data, desc = store(
                _numpy(self.env[ref]), _dtype_name(self.graph.meta(ref).dtype), cube=cube, mode=self.mode
            )
            if original is not None:
                desc = replace(desc, origin=(ref.op, ref.index))
            self.stored[ref], self.descs[ref], self.where[ref] = data, desc, f"{name}:{k}"
            descs.append(desc)
        if original is not None:
            attrs = {
                "_datadump_original_op_names": [m.name for m in original.members],
                "_datadump_original_op_types": [m.type for m in original.members],
            }
        in_descs = [replace(self.descs[r], origin=None) for r in inputs]
        self.writer.add(name, type, [self.where[r] for r in inputs], in_descs, descs, attrs)
        self.dumps.write_op(
            type, name, [self.stored[r] for r in inputs], [self.stored[r] for r in outputs], in_descs, descs
        )

    def finish(self, path: Path, graph_name: str, attrs: dict) -> None:
        outs = self.graph.outputs
        in_descs = [replace(self.descs[r], origin=None) for r in outs]
        self.writer.add(NET_OUTPUT, "NetOutput", [self.where[r] for r in outs], in_descs, [])
        self.writer.write(path, graph_name, attrs)
