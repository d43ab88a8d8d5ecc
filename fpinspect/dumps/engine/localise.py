"""Which fused op *introduced* an error, and which merely inherited one.

Fused ops are walked in topological order. An op fails when one of its outputs fails its
comparison with the original output. A failing op is

* **introduced** — its compared inputs all match their originals within threshold (no
  input verdict is ``fail``; inputs fed by data or constants count as matching), or its
  output error exceeds ``amplification`` times the worst error on its inputs (a second
  regression on top of an inherited one);
* **inherited** — an input already fails, and the output error is within
  ``amplification`` times that input error;
* **unverified** — no input fails, but some could not be compared (no dump, no mapping),
  so the op cannot be cleared or blamed.

Errors are compared as ``red`` in eps of each tensor's format (see :mod:`.verdict`).
Evidence from beyond the two dumps (the replay's) may then change a failing op's role:
see :class:`Evidence`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from ...numerics import float_format
from ..formats.fusion import FusedOp
from .records import Record
from .verdict import ThresholdTable, format_score, worst_verdict

#: An output error this many times the worst input error is not explained by the inputs.
AMPLIFICATION = 10.0


@dataclass(slots=True)
class OpFinding:
    """What the comparison says about one fused op."""

    name: str
    type: str
    verdict: str | None  #: worst verdict over the op's outputs (None: no output compared)
    #: for failing ops, one of :data:`.outcomes.ROLES`: "introduced" / "inherited" / "unverified", or what
    #: evidence says ("more_accurate")
    role: str | None
    reason: str  #: one clause saying why, naming the deciding pair and its error
    score: float | None  #: worst output severity (red in eps)
    input_score: float | None  #: worst input severity
    originals: list[str] = field(default_factory=list)  #: the original ops it replaced


@dataclass(frozen=True, slots=True)
class OpRecords:
    """One fused op with the records of its outputs and of its inputs (by number)."""

    op: FusedOp
    outputs: list[Record]
    inputs: list[Record]


class Evidence(Protocol):
    """More evidence on one fused op than its dumps hold (e.g. a replay of its inputs):
    :meth:`revise` may change the finding's ``role`` and ``reason`` once the dumps have
    classified it."""

    def revise(self, finding: OpFinding, records: OpRecords) -> None: ...


@dataclass
class Localisation:
    """Every fused op's finding, in the fusion-on graph's topological order.

    Immutable once built (:func:`localise` revises the findings before building it): the
    lookups below are computed on first use and kept, where rebuilding them on each access
    cost a scan of every finding (100 000 of them in a large run)."""

    ops: list[OpFinding]

    @cached_property
    def _by_role(self) -> dict[str | None, list[OpFinding]]:
        roles: dict[str | None, list[OpFinding]] = {}
        for o in self.ops:
            if o.role is not None:
                roles.setdefault(o.role, []).append(o)
        return roles

    def with_role(self, role: str) -> list[OpFinding]:
        """The findings of ``role``, in order (a new list)."""
        return list(self._by_role.get(role, ()))

    @cached_property
    def introduced(self) -> list[OpFinding]:
        return self.with_role("introduced")

    @cached_property
    def inherited(self) -> list[OpFinding]:
        return self.with_role("inherited")

    @cached_property
    def unverified(self) -> list[OpFinding]:
        return self.with_role("unverified")

    @cached_property
    def by_name(self) -> dict[str, OpFinding]:
        """``{op name: finding}``."""
        return {o.name: o for o in self.ops}

    def first(self) -> dict | None:
        """The first op that introduces an error (``op``, ``type``, ``reason``, ``originals``), or None."""
        if not self.introduced:
            return None
        o = self.introduced[0]
        return {"op": o.name, "type": o.type, "reason": o.reason, "originals": o.originals}

    @cached_property
    def more_accurate(self) -> list[OpFinding]:
        """Failing ops that evidence shows closer to the float64 truth than eager (role ``more_accurate``)."""
        return self.with_role("more_accurate")

    def advice(self) -> str:
        """One sentence: which op to look at first, and why."""
        intro, ahead = self.introduced, self.more_accurate
        failing = [o for o in self.ops if o.verdict == "fail"]
        down = len(self.inherited)
        inherit = f"{down} other failing op{'s' if down != 1 else ''} only inherit errors" if down else ""
        better = (
            (
                f"{len(ahead)} failing op{'s are' if len(ahead) != 1 else ' is'} more accurate than eager "
                f"(first {ahead[0].name})"
            )
            if ahead
            else ""
        )
        if intro:
            o = intro[0]
            more = f" ({len(intro) - 1} more introduced later)" if len(intro) > 1 else ""
            tail = "".join(f"; {t}" for t in (inherit, better) if t)
            return f"Look first at {o.name} ({o.type}): {o.reason}{more}{tail}."
        if ahead:
            o = ahead[0]
            tail = f"; {inherit}" if inherit else ""
            return (
                f"No fused op introduces an error: {o.name} ({o.type}) fails against eager but is more accurate, "
                f"{o.reason}{tail}."
            )
        if self.unverified:
            o = self.unverified[0]
            return (
                f"No fused op is confirmed as the source: {len(failing)} ops fail but their inputs "
                f"could not all be compared; start with the first failing op, {o.name}: {o.reason}."
            )
        if failing:
            o = failing[0]
            return f"No fused op introduces an error: {inherit}; the first is {o.name}: {o.reason}."
        warned = [o for o in self.ops if o.verdict == "warn"]
        if warned:
            return f"No fused output fails; {len(warned)} ops are close to the threshold, the first is {warned[0].name}."
        if not self.ops:
            return "Nothing was compared: the fusion-on graph has no fused op."
        uncompared = sum(1 for o in self.ops if o.verdict is None)
        if uncompared == len(self.ops):
            return (
                f"Nothing was compared: none of the {len(self.ops)} fused ops has an output with two readable "
                "tensors (see the statuses)."
            )
        if uncompared:
            return (
                f"All compared fused outputs are within thresholds; {uncompared} of {len(self.ops)} fused ops "
                "could not be compared (see the statuses)."
            )
        return "All compared fused outputs are within thresholds."


def _worst(records):
    """The first record of the highest score (``max`` by score, as a loop: it runs per op)."""
    worst = None
    for r in records:
        if r.score is not None and (worst is None or r.score > worst.score):
            worst = r
    return worst


def localise(
    ops: Iterable[OpRecords],
    amplification: float = AMPLIFICATION,
    evidence: Mapping[str, Evidence] | None = None,
    on_item: Callable[[], object] | None = None,
    thresholds: ThresholdTable | None = None,
) -> Localisation:
    """Classify every fused op of ``ops`` (in topological order) from its records; then
    ``evidence[name]``, where given, revises that op's finding. ``on_item()``, if given, is
    called before each op; what it raises ends the call. ``thresholds`` (the comparison's) tell
    when an input's error, read in its op's output unit, is beyond what that output allows."""
    findings = []
    for rec in ops:
        if on_item is not None:
            on_item()
        op, outs, ins = rec.op, rec.outputs, rec.inputs
        verdict = worst_verdict(r.verdict for r in outs)
        w_out, w_in = _worst(outs), _worst(ins)
        f = OpFinding(
            op.name,
            op.type,
            verdict,
            None,
            "",
            w_out.score if w_out else None,
            w_in.score if w_in else None,
            list(op.original_op_names),
        )
        if verdict == "fail":
            _classify(f, outs, ins, amplification, thresholds)
        elif verdict is not None:
            f.reason = (
                "outputs within thresholds"
                if verdict == "pass"
                else "; ".join({t for r in outs for t in r.reasons})
            )
        if evidence is not None and op.name in evidence:
            evidence[op.name].revise(f, rec)
        findings.append(f)
    return Localisation(findings)


def in_unit(record: Record, unit: str | None) -> float | None:
    """``record``'s error as ``red`` in eps of the format ``unit`` (its own score when ``unit`` is
    ``None`` or its own unit): how an input's error reads in the unit its op's output is judged in."""
    if unit is None or record.result is None or record.score is None or math.isinf(record.score):
        return record.score
    red = record.result.metrics.red
    return record.score if red is None else red / float_format(unit).eps


def unit_of(record: Record) -> str | None:
    """The format whose eps ``record``'s score counts (its budget, else the measured format)."""
    if record.budget:
        return record.budget
    res = record.result
    return res.metrics.errors.ulp.dtype if res is not None and res.compared else None


def _classify(f: OpFinding, outs, ins, amplification: float, thresholds: ThresholdTable | None) -> None:
    bad_out = max(
        (r for r in outs if r.verdict == "fail"), key=lambda r: r.score if r.score is not None else -1
    )
    what = f"output {bad_out.plan.fused_index} vs {bad_out.plan.origin_op}: {bad_out.reasons[0] if bad_out.reasons else 'fails'}"
    # inputs and output in one unit: the failing output's. An input within its own thresholds
    # can still carry more error than the output's format allows (a bfloat16 input 0.4 eps off
    # is 13 000 eps of a float32 output), and then explains the output.
    unit = unit_of(bad_out)
    limit = thresholds.for_format(unit).red_fail if thresholds is not None and unit else None
    scored = [(r, in_unit(r, unit)) for r in ins]
    failing_in = [
        (r, score)
        for r, score in scored
        if r.verdict == "fail" or (limit is not None and score is not None and score > limit)
    ]
    unknown_in = [r for r in ins if r.verdict is None and "SKIPPED_CONST_DATA" not in r.status]
    if failing_in:
        w, w_score = max(failing_in, key=lambda rs: rs[1] if rs[1] is not None else -1)
        src = f"input {w.plan.fused_index} (from {w.plan.src_op})"
        own = "" if unit_of(w) == unit or w_score is None else f" = {format_score(w_score)} {unit}"
        ratio = None
        out_score = bad_out.score  # in ``unit``, as ``w_score`` is
        if out_score is not None and w_score not in (None, 0) and not math.isinf(out_score):
            ratio = out_score / w_score
        if ratio is not None and ratio > amplification:
            f.role = "introduced"
            f.reason = (
                f"{what}; its output error {format_score(out_score)} is {ratio:.0f}x the worst input error "
                f"{format_score(w.score)}{own} ({src}), more than inputs explain"
            )
        else:
            f.role = "inherited"
            f.reason = f"{src} already differs ({format_score(w.score)}{own}); output {format_score(f.score)}"
    elif unknown_in:
        f.role = "unverified"
        names = ", ".join(f"input {r.plan.fused_index} ({r.status[0]})" for r in unknown_in[:3])
        f.reason = f"{what}; cannot tell whether inputs already differ: {names}"
    else:
        f.role = "introduced"
        n = sum(1 for r in ins if r.verdict is not None)
        f.reason = (
            (
                f"{what} while its {'input matches' if n == 1 else f'{n} compared inputs match'} "
                f"(worst input {format_score(f.input_score)})"
            )
            if n
            else f"{what}; its inputs are data or constants"
        )
