"""The fusion-on run: each region compiled by ``torch.compile`` and run as fused kernels.

Each region becomes a small ``fx.GraphModule`` (its members, reading the region inputs as
placeholders, returning the region outputs) compiled with Inductor, so its numerics are
those of a real fused kernel: half-precision loads upcast to fp32, fp32 maths throughout,
one rounding at the store. Plain ops between regions run eagerly, exactly as in the
fusion-off run. The region's GE name follows autofuse's fusion decider,
``autofuse_{counter}_{Type1}_{Type2}...``; a region Inductor emits as several kernels is a
``FusedAscBackend`` named ``autofuse_fused_{counter}_...``, as GE names one whose subgraphs
are separate AscGraphs.
"""

from __future__ import annotations

import operator
import re
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from unittest import mock

import torch
from torch import fx

from .eager import Progress, call_kernel, source_values
from .errors import CaptureError, first_line
from .inject import Injection
from .partition import Region, Unit
from .trace import TracedGraph, ValueRef

#: GE truncates fused op names to this many characters (``max_op_name_len``).
MAX_NAME = 140


@dataclass
class CompiledRegion:
    """A region, its compiled callable, and the GE op it becomes."""

    region: Region
    fn: Callable
    kernels: int  #: kernels Inductor generated for it

    @property
    def type(self) -> str:
        return "FusedAscBackend" if self.kernels > 1 else "AscBackend"

    @property
    def name(self) -> str:
        prefix = "autofuse_fused" if self.kernels > 1 else "autofuse"
        return "_".join([f"{prefix}_{self.region.index}", *self.region.member_types])[:MAX_NAME]


def region_module(graph: TracedGraph, region: Region) -> fx.GraphModule:
    """The region as a graph module: ``forward(*region.inputs) -> tuple(region.outputs)``.

    An input that is no tensor of the program (a number :mod:`.geops` made a ``Const``)
    is a placeholder nothing reads: the members' own arguments hold that number.
    """
    g = fx.Graph()
    mapping: dict[fx.Node, fx.Node] = {}
    for k, ref in enumerate(region.inputs):
        placeholder = g.placeholder(f"in_{k}")
        if ref in graph.value_nodes:
            mapping[graph.value_nodes[ref]] = placeholder
    for op in region.members:
        copy = g.node_copy(op.node, lambda n: mapping[n])
        mapping[op.node] = copy
        for user in op.node.users:
            if user.target is operator.getitem:
                mapping[user] = g.call_function(operator.getitem, (copy, user.args[1]))
    g.output(tuple(mapping[graph.value_nodes[ref]] for ref in region.outputs))
    return fx.GraphModule(torch.nn.Module(), g)


#: A kernel definition in Inductor's output code: C++ (CPU) or Triton (CUDA).
_KERNEL_DEF = re.compile(r"\basync_compile\.(?:cpp_pybinding|cpp|triton)\(")


@contextmanager
def _output_code(sink: list[str]):
    """Collect the output code of every graph Inductor compiles or loads from its cache.

    ``GraphLowering.save_output_code`` is the hook ``torch._inductor.utils.run_and_get_code``
    uses; called directly, it does not reset dynamo, so earlier regions stay compiled.
    """
    from torch._inductor.graph import GraphLowering

    with mock.patch.object(GraphLowering, "save_output_code", sink.append):
        yield


class FusedRunner:
    """Compiles every region on its first run, then runs the fusion-on graph on demand."""

    def __init__(self, graph: TracedGraph, units: list[Unit]):
        self.graph = graph
        self.units = units
        self.compiled: dict[Region, CompiledRegion] = {}
        #: the planted faults that changed no value of their region in the last :meth:`run` (a
        #: scale applied to zeros): nothing for a comparison to find
        self.inert: list[Injection] = []

    @property
    def regions(self) -> list[CompiledRegion]:
        """Compiled regions in execution order (all of them after the first :meth:`run`)."""
        return [self.compiled[u] for u in self.units if isinstance(u, Region) and u in self.compiled]

    def _compiled(self, region: Region, inputs: list[torch.Tensor]) -> CompiledRegion:
        if region in self.compiled:
            return self.compiled[region]
        fn = torch.compile(region_module(self.graph, region), fullgraph=True, dynamic=False)
        code: list[str] = []
        try:
            with _output_code(code), warnings.catch_warnings():
                # torch.compile touches torch.jit, which warns about its own deprecation
                warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.")
                fn(*inputs)
        except Exception as exc:  # Inductor and its C++/Triton compilers raise many types
            names = ", ".join(op.name for op in region.members)
            raise CaptureError(f"torch.compile failed on the region of {names}: {first_line(exc)}") from None
        kernels = sum(len(_KERNEL_DEF.findall(c)) for c in code)
        self.compiled[region] = CompiledRegion(region, fn, kernels)
        return self.compiled[region]

    def run(
        self,
        injections: Sequence[Injection] = (),
        progress: Progress | None = None,
        *,
        unfused: Collection[int] = (),
        pinned: Mapping[ValueRef, torch.Tensor] | None = None,
    ) -> dict[ValueRef, torch.Tensor]:
        """Every tensor of the fusion-on run (region outputs as the fused kernels wrote them, each
        faulty as the first of ``injections`` that names it). The regions numbered in ``unfused``
        run op by op instead, as the fusion-off run does: fusion left out there alone. A tensor in
        ``pinned`` takes that value wherever it is computed (the ablation pins eager's discrete
        decisions: top-k indices, masks)."""
        env = source_values(self.graph)
        self.inert = []
        with torch.no_grad():
            for done, unit in enumerate(self.units, 1):
                if isinstance(unit, Region) and unit.index not in unfused:
                    self._run_region(unit, env, injections)
                    made = unit.outputs
                elif isinstance(unit, Region):
                    for op in unit.members:
                        call_kernel(self.graph, op, env)
                        _pin(env, op.refs(), pinned)
                    made = unit.outputs
                else:
                    call_kernel(self.graph, unit, env)
                    made = unit.refs()
                _pin(env, made, pinned)
                if progress:
                    progress("fusion on: compiled regions", done, len(self.units))
        return env

    def _run_region(self, region: Region, env: dict, injections: Sequence[Injection]) -> None:
        """Run ``region``'s compiled kernel on ``env``, faulty as the first of ``injections`` naming it."""
        inputs = [env[ref] for ref in region.inputs]
        compiled = self._compiled(region, inputs)
        hit = next((i for i in injections if i.matches(region.index, compiled.name)), None)
        if hit is None:
            env.update(zip(region.outputs, compiled.fn(*inputs)))
            return
        clean = list(compiled.fn(*inputs))
        faulty = hit.after(list(compiled.fn(*hit.before(inputs))))
        if all(torch.equal(a, b) for a, b in zip(faulty, clean)):
            self.inert.append(hit)
        env.update(zip(region.outputs, faulty))


def _pin(env: dict, refs, pinned: Mapping[ValueRef, torch.Tensor] | None) -> None:
    """The tensors of ``refs`` that ``pinned`` holds take its values."""
    if pinned:
        for ref in refs:
            if ref in pinned:
                env[ref] = pinned[ref]
