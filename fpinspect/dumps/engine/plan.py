"""Planning: which tensors a comparison puts side by side, decided from the graphs and the dump
file indices alone (no tensor is read).

Every fused-op output is paired with the original op output it stands for
(``_datadump_origin_name`` / ``_datadump_origin_output_index``), and every fused-op input with
the original output of its producer. A fused input without a dump of its own takes its
producer's output dump, which holds the same data. Without a fusion-off side (browsing one
graph) the plans name the fusion-on side only and carry no status codes: there is nothing to
compare, so nothing is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...numerics import float_format, is_supported
from ..formats.datadump import DumpFile, DumpIndex, name_clashes
from ..formats.fusion import FusedOp, origin_problem
from ..formats.ge_decode import TensorDesc
from ..formats.ge_types import is_data_source, numpy_dtype_name
from ..formats.graph import GeModel

#: Plan statuses that leave nothing to compare.
_NOT_COMPARABLE = frozenset(
    (
        "NO_MAPPING",
        "SKIPPED_CONST_DATA",
        "FILE_NOT_FOUND",
        "ORIGIN_NOT_FOUND",
        "AMBIGUOUS_DUMP",
        "TYPE_MISMATCH",
    )
)


@dataclass(slots=True)
class PairPlan:
    """One pair to compare: output or input ``fused_index`` of ``fused_op`` against output
    ``origin_index`` of ``origin_op`` in the fusion-off run, with their dump files and tensor
    descriptions, and the status codes known before any data is read."""

    kind: str  #: "output" or "input"
    fused_op: str
    fused_type: str
    fused_index: int
    origin_op: str | None
    origin_index: int | None
    status: list[str] = field(default_factory=list)  #: codes known before reading data
    message: str | None = None
    fused_file: DumpFile | None = None
    origin_file: DumpFile | None = None
    fused_desc: TensorDesc | None = None
    origin_desc: TensorDesc | None = None
    src_op: str | None = None  #: for inputs: the producer in the fusion-on graph
    #: for outputs: the narrowest floating format eager rounds to on the way to this output inside
    #: the fused op's original subgraph, where it is narrower than the output's own (see
    #: :func:`budget_format`); ``None`` otherwise
    budget: str | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.fused_op, self.kind, self.fused_index)

    @property
    def comparable(self) -> bool:
        """Both dump files are known and no planning status rules the pair out."""
        return (
            self.fused_file is not None
            and self.origin_file is not None
            and _NOT_COMPARABLE.isdisjoint(self.status)
        )


@dataclass
class PairPlans:
    """The plans of every fused op, in the fusion-on graph's topological order."""

    fused: list[FusedOp]
    outputs: dict[str, list[PairPlan]]  #: by fused op name, by output number
    inputs: dict[str, list[PairPlan]]  #: by fused op name, by input number

    @property
    def all(self) -> list[PairPlan]:
        """Every plan: op by op, the outputs before the inputs of the same op."""
        return [p for op in self.fused for p in self.outputs[op.name] + self.inputs[op.name]]

    def of(self, name: str) -> list[PairPlan]:
        """The output plans, then the input plans of fused op ``name``."""
        return self.outputs[name] + self.inputs[name]


def plan_pairs(
    fused: list[FusedOp],
    open_index: DumpIndex | None,
    close_model: GeModel | None = None,
    close_index: DumpIndex | None = None,
    *,
    open_model: GeModel | None = None,
) -> PairPlans:
    """Plan every pair of ``fused`` (the fusion-on graph's fused ops, :func:`~.fusion.fused_ops`).

    ``open_index`` indexes the fusion-on dumps (``None``: no data folder). With the fusion-off
    graph and dump index the plans are complete; without them (browsing) they name the fusion-on
    side only. Given ``open_model`` (the fusion-on graph), a dump whose file name several ops of
    one graph share is ``AMBIGUOUS_DUMP``, never silently taken for one of them.
    """
    planner = _Planner(open_index, close_model, close_index)
    planner.clashes = (
        name_clashes(open_model.ops) if open_model is not None else {},
        name_clashes(close_model.ops) if close_model is not None else {},
    )
    outputs = {op.name: [planner.output(op, o) for o in op.outputs] for op in fused}
    inputs = {op.name: [planner.input(op, i) for i in op.inputs] for op in fused}
    return PairPlans(fused, outputs, inputs)


class _Planner:
    def __init__(
        self, open_index: DumpIndex | None, close_model: GeModel | None, close_index: DumpIndex | None
    ):
        self.open_index, self.close_model, self.close_index = open_index, close_model, close_index
        self.comparing = close_model is not None and close_index is not None
        self.clashes: tuple[dict, dict] = ({}, {})  # fusion-on, fusion-off: file-name form -> op names

    def _fused_dump(self, op_name: str, io: str, index: int) -> DumpFile | None:
        return self.open_index.lookup(op_name, io, index) if self.open_index is not None else None

    def output(self, op: FusedOp, out) -> PairPlan:
        plan = PairPlan(
            "output", op.name, op.type, out.index, out.origin_op, out.origin_index, fused_desc=out.desc
        )
        if not self.comparing:
            plan.fused_file = self._fused_dump(op.name, "output", out.index)
            return plan
        fused_file = self._fused_dump(op.name, "output", out.index)
        if (out.origin_op is None or out.origin_index is None) and fused_file is not None and fused_file.raw:
            # the device wrote the mapping into the raw dump's header too (OpOutput.original_op)
            plan.origin_op, plan.origin_index = fused_file.raw.original_op or (None, None)
        if plan.origin_op is None or plan.origin_index is None:
            return _skip(plan, "NO_MAPPING", f"output {out.index} {origin_problem(out.desc)}")
        self._locate(plan, fused_file, f"output {out.index}", op.type if op.same_name else None)
        if not op.same_name and self.close_model.has_op(plan.origin_op):
            plan.budget = budget_format(
                self.close_model, op.original_op_names, plan.origin_op, plan.origin_index
            )
        return plan

    def input(self, op: FusedOp, inp) -> PairPlan:
        plan = PairPlan(
            "input",
            op.name,
            op.type,
            inp.index,
            inp.origin_op,
            inp.origin_index,
            fused_desc=inp.desc,
            src_op=inp.src_op,
        )
        # The fused op's own input dump; without one, its producer's output dump holds the same data.
        fused_file = self._fused_dump(op.name, "input", inp.index) or self._fused_dump(
            inp.src_op, "output", inp.src_index
        )
        if not self.comparing:
            plan.fused_file = fused_file
            return plan
        if is_data_source(inp.src_type):
            return _skip(plan, "SKIPPED_CONST_DATA", f"fed by {inp.src_type} {inp.src_op}")
        if inp.origin_op is None or inp.origin_index is None:
            return _skip(
                plan, "NO_MAPPING", f"producer {inp.src_op} output {inp.src_index} has no origin mapping"
            )
        namesake = inp.src_type if inp.origin_op == inp.src_op else None  # a plain producer stands for itself
        return self._locate(plan, fused_file, f"input {inp.index}", namesake)

    def _locate(
        self, plan: PairPlan, fused_file: DumpFile | None, what: str, namesake: str | None = None
    ) -> PairPlan:
        """Attach both dump files to ``plan`` and note what is missing, duplicated or ambiguous.
        ``namesake``: the fusion-on type of the op that stands for its namesake in the fusion-off
        graph (``None`` when the pair maps a fused op to its origin)."""
        plan.fused_file = fused_file
        self._lookup_origin(plan)
        if namesake is not None and "ORIGIN_NOT_FOUND" not in plan.status:
            off_type = self.close_model.ops[plan.origin_op].type
            if off_type != namesake:
                return _skip(
                    plan,
                    "TYPE_MISMATCH",
                    f"{plan.origin_op} is a {namesake} in the fusion-on graph but a {off_type} in the "
                    "fusion-off graph: namesakes of different types are not the same op",
                )
        if any(self.clashes) and self._ambiguous(plan):  # most graphs have no clashing names
            return plan
        if fused_file is None:
            plan.status.append("FILE_NOT_FOUND")
            plan.message = f"no fusion-on dump of {plan.fused_op} {what}"
        for f in (plan.fused_file, plan.origin_file):
            if f is not None and f.candidates > 1 and "MULTIPLE_DUMPS" not in plan.status:
                plan.status.append("MULTIPLE_DUMPS")
        return plan

    def _ambiguous(self, plan: PairPlan) -> bool:
        """Mark ``plan`` ``AMBIGUOUS_DUMP`` if a dump file of it is named for several ops of one graph."""
        for side, dump, clashes in (
            ("fusion-on", plan.fused_file, self.clashes[0]),
            ("fusion-off", plan.origin_file, self.clashes[1]),
        ):
            group = clashes.get(dump.op_name) if dump is not None else None
            if group:
                names = ", ".join(repr(n) for n in group)
                _skip(
                    plan,
                    "AMBIGUOUS_DUMP",
                    f"{side} ops {names} are all written as {dump.op_name!r} "
                    "in dump file names: their dumps cannot be told apart",
                )
                return True
        return False

    def _lookup_origin(self, plan: PairPlan) -> None:
        if not self.close_model.has_op(plan.origin_op):
            plan.status.append("ORIGIN_NOT_FOUND")
            plan.message = f"original op {plan.origin_op} is not in the fusion-off graph"
        else:
            descs = self.close_model.ops[plan.origin_op].output_desc
            plan.origin_desc = descs[plan.origin_index] if 0 <= plan.origin_index < len(descs) else None
            if descs and plan.origin_desc is None:
                plan.status.append("ORIGIN_NOT_FOUND")
                plan.message = (
                    f"original op {plan.origin_op} has no output {plan.origin_index} "
                    f"(it has {len(descs)} in the fusion-off graph)"
                )
        plan.origin_file = self.close_index.lookup(plan.origin_op, "output", plan.origin_index)
        if plan.origin_file is None and "ORIGIN_NOT_FOUND" not in plan.status:
            plan.status.append("FILE_NOT_FOUND")
            plan.message = f"no fusion-off dump of {plan.origin_op} output {plan.origin_index}"


def budget_format(off_model: GeModel, originals, origin_op: str, origin_index: int) -> str | None:
    """The narrowest floating format on the way to output ``origin_index`` of ``origin_op`` inside
    the original subgraph ``originals`` (op names of the fusion-off graph ``off_model``), where it
    is narrower than that output's own format; else ``None``.

    Eager rounds every intermediate to its format; a fused kernel may keep it in float32. A
    float32 output computed through a bfloat16 intermediate (a residual add in bfloat16, then a
    cast up and a reduction, as RMSNorm is written) therefore differs between the two by about
    bfloat16's rounding, which is no error of fusion: it can only be judged in bfloat16's eps.
    Only the subgraph's own intermediates count: differences in its inputs are the inputs'
    records' business."""
    inside = set(originals)
    own = _format_of(off_model, origin_op, origin_index)
    narrowest = own
    seen, todo = set(), [origin_op]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for ref in off_model.ops[name].inputs:
            if ref is None or ref.op not in inside or not off_model.has_op(ref.op):
                continue
            fmt = _format_of(off_model, ref.op, ref.index)
            if fmt is not None and (narrowest is None or float_format(fmt).eps > float_format(narrowest).eps):
                narrowest = fmt
            todo.append(ref.op)
    return narrowest if own is not None and narrowest != own else None


def _format_of(model: GeModel, name: str, index: int) -> str | None:
    """The floating format of output ``index`` of op ``name`` (``None``: not floating, or unknown)."""
    descs = model.ops[name].output_desc
    fmt = numpy_dtype_name(descs[index].dtype) if 0 <= index < len(descs) else None
    return fmt if fmt is not None and is_supported(fmt) else None


def _skip(plan: PairPlan, code: str, message: str) -> PairPlan:
    plan.status.append(code)
    plan.message = message
    return plan
