"""Trace a PyTorch module to an operator graph: one :class:`Op` per eager kernel call.

Why ``torch.export`` rather than ``torch.fx.symbolic_trace`` or ``make_fx``:

* ``symbolic_trace`` records Python-level calls (``nn.LayerNorm``, ``F.gelu``), not the
  ATen operators that run, and silently mis-traces data-dependent code;
* ``make_fx`` records ATen operators but bakes parameters in as anonymous constants
  (``_param_constant0``) and, by default, splits composite ops (``linear`` -> ``t`` + ``addmm``);
* ``torch.export`` lifts parameters and buffers as named inputs (they become GE ``Const``
  ops named after the weight, ``fc1.weight``), keeps each node's module path (GE-style
  scoped names: ``mlp.fc1/linear``), and fails loudly instead of specialising silently.
  ``run_decompositions`` then functionalises the graph (in-place ops become out-of-place, so
  a dumped tensor is never overwritten later) while keeping every operator of
  :data:`.optable.OPS` whole: the fusion-off run calls exactly one eager kernel per node.
"""

from __future__ import annotations

import contextlib
import io
import logging
import operator
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import fx

from .errors import CaptureError, first_line
from .geops import Scalar, ge_form
from .optable import OPS, check_supported, packet_name, spec_for

DATA, CONST = "data", "const"


@dataclass(frozen=True)
class ValueRef:
    """Output ``index`` of op ``op``: one tensor of the graph (``"op:index"`` in GE JSON)."""

    op: str
    index: int


@dataclass(frozen=True)
class TensorMeta:
    shape: tuple[int, ...]
    dtype: torch.dtype


@dataclass(eq=False)
class Op:
    """One operator: a model input (``data``), a weight or constant (``const``), or a kernel.

    ``inputs`` are the tensors it reads in GE's operand order; ``outputs`` what it produces;
    ``attrs`` its GE attributes (:mod:`.geops`). ``node`` is the exported FX node (``None``
    for data and const ops). Ops compare and hash by identity.
    """

    name: str
    type: str
    kind: str
    inputs: list[ValueRef]
    outputs: list[TensorMeta]
    node: fx.Node | None = None
    cube: bool = False
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def is_source(self) -> bool:
        return self.kind in (DATA, CONST)

    def refs(self) -> list[ValueRef]:
        return [ValueRef(self.name, i) for i in range(len(self.outputs))]


@dataclass
class TracedGraph:
    """The operator graph of one model, sources first, then kernels in execution order."""

    ops: list[Op]
    outputs: list[ValueRef]  #: the model's outputs
    sources: dict[str, torch.Tensor]  #: data / const op name -> its value
    node_values: dict[fx.Node, ValueRef] = field(repr=False)  #: FX node -> the tensor it holds

    def __post_init__(self) -> None:
        self.by_name = {op.name: op for op in self.ops}
        self.value_nodes = {ref: node for node, ref in self.node_values.items()}

    def meta(self, ref: ValueRef) -> TensorMeta:
        return self.by_name[ref.op].outputs[ref.index]

    def consumers(self) -> dict[ValueRef, list[Op]]:
        """Every tensor -> the ops reading it (in graph order)."""
        users: dict[ValueRef, list[Op]] = {}
        for op in self.ops:
            for ref in op.inputs:
                users.setdefault(ref, []).append(op)
        return users

    def call(self, op: Op, env: Mapping[ValueRef, torch.Tensor]) -> list[torch.Tensor]:
        """Run ``op``'s eager kernel on the tensors ``env`` holds for its inputs."""
        args, kwargs = fx.node.map_arg((op.node.args, op.node.kwargs), lambda n: env[self.node_values[n]])
        out = op.node.target(*args, **kwargs)
        return list(out) if isinstance(out, (tuple, list)) else [out]


def _decompositions():
    """Export's default table minus the operators we keep whole (one eager kernel each)."""
    table = torch.export.default_decompositions()
    for op in list(table.keys()):
        if op.namespace == "aten" and packet_name(op) in OPS:
            table.pop(op)
    return table


@contextlib.contextmanager
def _quiet_failure():
    """Hold back what torch.export prints while it traces: on failure it dumps the partial
    graph to stderr and logs warnings, which would bury the one sentence capture reports.
    On success, anything the model itself printed to stderr is passed on."""
    held = io.StringIO()
    torch_log = logging.getLogger("torch")
    level = torch_log.level
    torch_log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(held):
            # torch's own deprecation notices about its pytree internals; nothing a user can act on
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        torch_log.setLevel(level)
    sys.stderr.write(held.getvalue())


def export(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> torch.export.ExportedProgram:
    """``torch.export`` the module at operator granularity; failures become one sentence."""
    try:
        with _quiet_failure():
            program = torch.export.export(module, tuple(inputs))
            return program.run_decompositions(_decompositions())
    except Exception as exc:  # export raises many unrelated types; all mean "cannot trace"
        raise CaptureError(f"torch.export could not trace the model: {first_line(exc)}") from None


def _metas(node: fx.Node) -> list[TensorMeta] | None:
    val = node.meta.get("val")
    vals = list(val) if isinstance(val, (tuple, list)) else [val]
    if not vals or not all(isinstance(v, torch.Tensor) for v in vals):
        return None
    return [TensorMeta(tuple(int(d) for d in v.shape), v.dtype) for v in vals]


def _scoped_name(node: fx.Node) -> str:
    """``mlp.fc1/linear``: the innermost module path, as GE scopes names, then the node name."""
    stack = node.meta.get("nn_module_stack") or {}
    path = list(stack.values())[-1][0] if stack else ""
    return f"{path}/{node.name}" if path else node.name


def build_graph(program: torch.export.ExportedProgram, inputs: Sequence[torch.Tensor]) -> TracedGraph:
    """The :class:`TracedGraph` of an exported program called with ``inputs``."""
    builder = _Builder()
    user = iter(inputs)
    weights = {**program.state_dict, **program.constants}
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    for node, spec in zip(placeholders, program.graph_signature.input_specs):
        is_data = spec.kind == torch.export.graph_signature.InputKind.USER_INPUT
        name, value = (node.name, next(user)) if is_data else (spec.target, weights[spec.target])
        if node.users:
            builder.add_source(node, name, value, DATA if is_data else CONST)
    outputs: list[ValueRef] = []
    for node in program.graph.nodes:
        if node.op == "call_function":
            builder.add_call(node)
        elif node.op == "output":
            found: list[fx.Node] = []
            fx.node.map_arg(node.args[0], found.append)
            outputs = [builder.values[n] for n in found if n in builder.values]
    return TracedGraph(
        builder.data + builder.consts + builder.kernels, outputs, builder.sources, builder.values
    )


class _Builder:
    """Collects ops while walking the exported graph in order."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.values: dict[fx.Node, ValueRef] = {}  # node -> the tensor it holds
        self.multi: dict[fx.Node, str] = {}  # node returning several tensors -> its op
        self.data: list[Op] = []
        self.consts: list[Op] = []
        self.kernels: list[Op] = []
        self.sources: dict[str, torch.Tensor] = {}

    def unique(self, name: str) -> str:
        """``name``, or ``name_N`` if a weight and a node would otherwise share it."""
        candidate, n = name, 0
        while candidate in self.names:
            n += 1
            candidate = f"{name}_{n}"
        self.names.add(candidate)
        return candidate

    def add_source(self, node: fx.Node, name: str, value, kind: str) -> None:
        name = self.unique(name)
        if not isinstance(value, torch.Tensor):
            raise CaptureError(f"model input {name} is a {type(value).__name__}; capture needs tensors")
        op = Op(
            name, "Data" if kind == DATA else "Const", kind, [], [TensorMeta(tuple(value.shape), value.dtype)]
        )
        (self.data if kind == DATA else self.consts).append(op)
        self.sources[name] = value
        self.values[node] = ValueRef(name, 0)

    def scalar(self, op_name: str, scalar: Scalar) -> ValueRef:
        """A constant operand of ``op_name`` that is no tensor of the program: a ``Const``."""
        name = self.unique(f"{op_name}/{scalar.role}")
        op = Op(name, "Const", CONST, [], [TensorMeta(tuple(scalar.value.shape), scalar.value.dtype)])
        self.consts.append(op)
        self.sources[name] = scalar.value
        return ValueRef(name, 0)

    def add_call(self, node: fx.Node) -> None:
        """Turn one ``call_function`` node into an op (or, for getitem, name a tensor of one)."""
        if node.target is operator.getitem:
            if node.args[0] in self.multi:
                self.values[node] = ValueRef(self.multi[node.args[0]], int(node.args[1]))
            return
        metas = _metas(node)
        if metas is None:
            if node.users:
                raise CaptureError(
                    f"operator {node.target} returns something other than tensors, which capture cannot dump"
                )
            return  # a runtime assertion (aten._assert_tensor_metadata): nothing to run or dump
        check_supported(node.target, node.args, node.kwargs)
        name = _scoped_name(node)
        readers: list[fx.Node] = []
        fx.node.map_arg((node.args, node.kwargs), readers.append)
        unknown = [n for n in readers if n not in self.values]
        if unknown:
            raise CaptureError(
                f"operator {node.target} reads {unknown[0].name}, which is not a tensor capture can follow"
            )
        if not readers:
            # A factory (aten.full, aten.arange): its value is fixed, so GE folds it into a Const.
            self.add_source(node, name, node.target(*node.args, **node.kwargs), CONST)
            return
        spec = spec_for(node.target)
        name = self.unique(name)
        form = ge_form(node, metas)
        inputs = [
            self.scalar(name, operand) if isinstance(operand, Scalar) else self.values[operand]
            for operand in form.operands
        ]
        self.kernels.append(Op(name, form.type, spec.kind, inputs, metas, node, spec.cube, form.attrs))
        if isinstance(node.meta.get("val"), (tuple, list)):
            self.multi[node] = name
        else:
            self.values[node] = ValueRef(name, 0)
