"""Proof at the level of the model's outputs: leave fused regions out, one at a time or as a
smallest set, and see what happens to the final outputs.

A capture (:mod:`.pipeline`) can run its model again with any set of regions *unfused*: their
original ops run one by one, rounding after each, as the fusion-off run does, while every other
region stays fused (faults planted at capture time included). The final outputs are measured
against the all-eager run (the comparison's own verdict and ``red``, in eps of the model's
dtype) and against a float64 run of the same graph.

Each region is measured on its own: the model runs with that region **the only one fused**
(every other op eager), so the rounding differences of the other regions (a float32 softmax, an
RMSNorm kept in float32: fusion noise, often the more accurate side) cannot hide or mimic its
effect; every discrete decision (top-k indices, masks) is pinned to eager's there and in the
float64 run, so that a near-tie flipped (a router choosing another expert) is not taken for an
error. The final outputs are judged against eager in the narrowest format they pass through (a
bfloat16 model's float32 logits in bfloat16's eps). A region is **confirmed** when its fusion
alone makes the final outputs fail and moves them :data:`CLOSER_RATIO` times further from float64
than eager is; **fusion helps** when its fusion alone makes them fail but :data:`CLOSER_RATIO`
times closer to float64 than eager; else **not confirmed**. Unfusing it alone (every other region
fused, as a switch would) is measured too: ``removed`` is the share of the fused model's
deviation from eager that this removes. ``bisect`` finds, by delta debugging
(Zeller's ddmin), a smallest set of regions whose unfusing brings the outputs within thresholds:
the case where no region explains the deviation alone, such as two that fail only together; its
model runs grow as O(k log n) for k culprits among n regions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import numpy as np
import torch

from ..dumps.engine.outcomes import worst_verdict
from ..dumps.engine.pair import compare_arrays
from ..dumps.engine.report import Report
from ..dumps.engine.report_types import ConfirmDisagreement, ConfirmSummary
from ..dumps.engine.verdict import ThresholdTable, judge
from ..replay.evidence import CLOSER_RATIO, red_against
from .eager import KERNEL_ERRORS, source_values
from .errors import CaptureError, first_line
from .inject import Injection
from .pipeline import Capture
from .trace import ValueRef


@dataclass(frozen=True)
class Outcome:
    """The final outputs of one run against eager (``vs_eager``: ``red`` in eps, the worst
    output's, and the comparison's verdict) and against float64 (``vs_fp64``, in eps)."""

    vs_eager: float
    vs_fp64: float
    verdict: str

    def to_json(self) -> dict:
        return {"final_vs_eager": self.vs_eager, "final_vs_fp64": self.vs_fp64, "verdict": self.verdict}


@dataclass
class RegionResult:
    index: int
    name: str
    alone: Outcome
    verdict: str  #: "confirmed" | "fusion helps" | "not confirmed"
    removed: float | None  #: the share of the deviation from eager that unfusing it removes
    only: Outcome  #: the final outputs with this region the only one fused

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "index": self.index,
            "alone": self.alone.to_json(),
            "only": self.only.to_json(),
            "removed": self.removed,
            "verdict": self.verdict,
        }


@dataclass
class Confirmation:
    """What ``fpinspect confirm`` reports (``to_json`` is its ``--format json``)."""

    baseline: Outcome
    regions: list[RegionResult] = field(default_factory=list)
    minimal_set: list[str] | None = None
    steps: list[dict] = field(default_factory=list)  #: the bisection's log: regions unfused, outcome
    runs: int = 0
    seconds: float = 0.0
    #: ops of the float64 run that have no float64 kernel, and the format each ran in instead
    narrower: dict[str, str] = field(default_factory=dict)
    #: the all-eager run's distance from float64 (eps): the yardstick of "further from float64"
    eager_vs_fp64: float | None = None

    def to_json(self) -> dict:
        return {
            "baseline": self.baseline.to_json(),
            "regions": [r.to_json() for r in self.regions],
            "minimal_set": self.minimal_set,
            "bisect": self.steps,
            "runs": self.runs,
            "seconds": round(self.seconds, 3),
            "float64_run_narrower": dict(self.narrower),
            "eager_vs_fp64": self.eager_vs_fp64,
        }

    def truth_note(self) -> str | None:
        """One sentence on the ops the float64 run could not run in float64, or ``None``."""
        if not self.narrower:
            return None
        by_format: dict[str, list[str]] = {}
        for op, fmt in self.narrower.items():
            by_format.setdefault(fmt, []).append(op)
        parts = [
            f"{len(ops)} op{'s' if len(ops) != 1 else ''} in {fmt} ({', '.join(ops[:3])}{', ...' if len(ops) > 3 else ''})"
            for fmt, ops in by_format.items()
        ]
        return "the float64 reference ran " + "; ".join(parts) + ": they have no float64 kernel"


@dataclass(frozen=True)
class Disagreement:
    """A fused op on which the comparison's localisation and the ablation disagree."""

    op: str
    report: str  #: what the comparison says: "introduced", "more_accurate", "inherited", "pass", ...
    ablation: str  #: the region's ablation verdict: "confirmed", "not confirmed", "fusion helps"

    only: Outcome | None = None  #: the final outputs with this region the only one fused
    eager_vs_fp64: float | None = None  #: the all-eager run's distance from float64 (eps)

    def sentence(self) -> str:
        said = self.report.replace("_", " ")
        effect = ""
        if self.only is not None:
            effect = f" (fused alone it moves the final outputs {self.only.vs_eager:.3g} eps from eager, {self.only.verdict})"
        if self.report == "introduced":
            why = ""
            if self.only is not None and self.only.verdict != "fail":
                why = (
                    ": its effect on the model's outputs stays within thresholds: later ops absorb most of it"
                )
            elif (
                self.only is not None and self.eager_vs_fp64 is not None and self.ablation == "not confirmed"
            ):
                why = (
                    f": no further from float64 ({self.only.vs_fp64:.3g} eps) than eager's own rounding puts "
                    f"them ({self.eager_vs_fp64:.3g} eps)"
                )
            return f"{self.op}: the comparison says introduced, the ablation {self.ablation}{effect}{why}"
        return f"{self.op}: the ablation says {self.ablation}{effect}, but the comparison says {said}"

    def to_json(self) -> dict:
        return {"op": self.op, "report": self.report, "ablation": self.ablation}


def report_role(finding) -> str:
    """A fused op's finding (:class:`~fpinspect.dumps.engine.localise.OpFinding`) in one word: its role
    where it fails, else its verdict (``pass``, ``warn``), ``not compared`` without one."""
    return finding.role or finding.verdict or "not compared"


def annotate(report, confirmation: Confirmation) -> tuple[Report, list[Disagreement]]:
    """The ablation as evidence in a comparison's ``report`` of the same capture (``compare
    --confirm``): the report whose output records of an ablated region each carry ``confirm`` (its
    verdict and the final outputs' distances), and whose summary carries ``confirm`` (the regions'
    verdicts, where the two disagree, what the float64 run could not run in float64); and the
    disagreements."""
    disagreements = cross_check(report.localisation, confirmation)
    by_name = {r.name: r for r in confirmation.regions}
    report = report.with_annotation(
        "confirm",
        {
            rec.plan.key: {
                "verdict": by_name[rec.plan.fused_op].verdict,
                "only": by_name[rec.plan.fused_op].only.to_json(),
            }
            for rec in report.records
            if rec.plan.kind == "output" and rec.plan.fused_op in by_name
        },
    )
    confirm = ConfirmSummary(
        regions={r.name: r.verdict for r in confirmation.regions},
        disagreements=[ConfirmDisagreement(**d.to_json()) for d in disagreements],
        float64_run_narrower=dict(confirmation.narrower),
    )
    return report.with_confirm(confirm), disagreements


def cross_check(localisation, confirmation: Confirmation) -> list[Disagreement]:
    """Where the comparison's localisation and the ablation of the same capture disagree: a
    region confirmed whose op is not introduced, or an introduced op whose region (among those
    the ablation ran) is not confirmed. Ops the ablation did not run are not judged."""
    found = localisation.by_name
    out = []
    for r in confirmation.regions:
        finding = found.get(r.name)
        role = report_role(finding) if finding is not None else "not compared"
        if (role == "introduced") != (r.verdict == "confirmed"):
            out.append(Disagreement(r.name, role, r.verdict, r.only, confirmation.eager_vs_fp64))
    return out


class Ablation:
    """A capture's model, run again with chosen regions unfused (besides the regions ``unfused``
    that the capture itself leaves unfused). Each run is counted."""

    def __init__(
        self,
        capture: Capture,
        injections: list[Injection],
        thresholds: ThresholdTable | None = None,
        *,
        unfused: Collection[int] = (),
    ):
        self.capture, self.injections, self.unfused = capture, injections, frozenset(unfused)
        self.thresholds = thresholds or ThresholdTable()
        graph = capture.graph
        self.outputs: list[ValueRef] = list(graph.outputs)
        self.eager = [_array(capture.eager[ref]) for ref in self.outputs]
        #: eager's discrete tensors (integer and boolean outputs of kernels), which the one-region
        #: runs and the float64 run take as they are
        self.decisions = {
            ref: value
            for ref, value in capture.eager.items()
            if isinstance(value, torch.Tensor)
            and not value.is_floating_point()
            and ref.op in graph.by_name
            and not graph.by_name[ref.op].is_source
        }
        truth, self.narrower = _float64_run(capture, self.decisions)
        self.fp64 = [_array(v) for v in truth]
        self.budgets = [_budget(graph, ref) for ref in self.outputs]
        #: the all-eager run's distance from float64 (eps): how far rounding alone puts it
        self.eager_vs_fp64 = max(
            (x if x is not None else float("inf") for x in map(red_against, self.eager, self.fp64)),
            default=0.0,
        )
        self.runs = 0
        self._cache: dict[frozenset[int], Outcome] = {}

    @property
    def regions(self):
        return self.capture.regions

    def outcome(self, unfused: Collection[int], *, pinned: bool = False) -> Outcome:
        """The final outputs with the regions numbered ``unfused`` left unfused (cached by set);
        ``pinned``: with eager's discrete decisions (:attr:`decisions`)."""
        key = (frozenset(unfused), pinned)
        if key not in self._cache:
            env = self.capture.fused.run(
                self.injections, unfused=key[0] | self.unfused, pinned=self.decisions if pinned else None
            )
            self.runs += 1
            self._cache[key] = self._measure([_array(env[ref]) for ref in self.outputs])
        return self._cache[key]

    def only(self, index: int) -> Outcome:
        """The final outputs with region ``index`` the only one fused, every discrete decision
        (top-k indices, masks) as eager took it: what its numerics alone do. Without the pins, a
        region more accurate than eager can flip a near-tie (a mixture's router choosing another
        expert for one token) and move the outputs by whole eps, which says nothing of its
        accuracy: float64, eager or fusion may each take either side of a tie."""
        every = {r.region.index for r in self.regions}
        return self.outcome(every - {index}, pinned=True)

    def _measure(self, finals: list[np.ndarray]) -> Outcome:
        worst_red, worst_fp64, verdicts = 0.0, 0.0, []
        for final, eager, truth, budget in zip(finals, self.eager, self.fp64, self.budgets):
            j = judge(compare_arrays(final, eager, worst=0, kl=False), self.thresholds, budget)
            verdicts.append(j.verdict)
            worst_red = max(worst_red, j.score if j.score is not None else float("inf"))
            fp64 = red_against(final, truth)
            worst_fp64 = max(worst_fp64, fp64 if fp64 is not None else float("inf"))
        return Outcome(worst_red, worst_fp64, worst_verdict(verdicts) or "fail")


def _budget(graph, ref: ValueRef) -> str | None:
    """The narrowest floating format of the tensors eager computes on the way to output ``ref``
    (the model's inputs and weights left out: both runs read the same). A float32 output of a
    bfloat16 model (logits upcast at the end) carries bfloat16's rounding, and is judged in
    bfloat16's eps (:func:`~fpinspect.dumps.engine.verdict.judge`)."""
    narrowest: torch.dtype | None = None
    seen, todo = set(), [ref]
    while todo:
        r = todo.pop()
        if r in seen or r.op not in graph.by_name:
            continue
        seen.add(r)
        op = graph.by_name[r.op]
        if op.is_source:
            continue
        dtype = graph.meta(r).dtype
        if dtype.is_floating_point and (
            narrowest is None or torch.finfo(dtype).eps > torch.finfo(narrowest).eps
        ):
            narrowest = dtype
        todo.extend(op.inputs)
    return None if narrowest is None else str(narrowest).removeprefix("torch.")


def _array(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


#: The formats an op of the float64 run is tried in, widest first: an op with no float64
#: kernel (``aten._grouped_mm``, some quantised or fused kernels) runs in the widest it has.
TRUTH_FORMATS = (torch.float64, torch.float32, torch.bfloat16, torch.float16)


def _in_format(value, fmt: torch.dtype):
    """``value`` (an op argument) as the float64 run passes it in ``fmt``: floating tensors
    converted, a floating ``dtype`` argument (a cast's target) replaced, the rest as it is."""
    if isinstance(value, torch.Tensor):
        return value.to(fmt) if value.is_floating_point() else value
    if isinstance(value, torch.dtype):
        return fmt if value.is_floating_point else value
    return value


def _float64_run(capture: Capture, pinned=None) -> tuple[list[torch.Tensor], dict[str, str]]:
    """The graph's outputs computed op by op in float64 from the same inputs and weights, and the
    ops that ran narrower (op name -> format). Casts to a narrower format are kept in float64:
    the truth rounds nowhere. An op with no float64 kernel runs in the widest format of
    :data:`TRUTH_FORMATS` it accepts, its outputs widened again. A tensor in ``pinned`` (eager's
    discrete decisions) takes that value: the truth of the same routing."""
    graph = capture.graph
    env = {k: (v.double() if v.is_floating_point() else v) for k, v in source_values(graph).items()}
    narrower: dict[str, str] = {}
    with torch.no_grad():
        for op in graph.ops:
            if op.is_source:
                continue
            problem = None
            for fmt in TRUTH_FORMATS:
                args, kwargs = torch.fx.node.map_arg(
                    (op.node.args, op.node.kwargs), lambda n: env[graph.node_values[n]]
                )
                args, kwargs = torch.utils._pytree.tree_map(
                    lambda v, fmt=fmt: _in_format(v, fmt), (args, kwargs)
                )
                try:
                    out = op.node.target(*args, **kwargs)
                    break
                except KERNEL_ERRORS as exc:
                    problem = problem or exc
            else:
                raise CaptureError(
                    f"the float64 run cannot run operator {op.node.target} ({op.name}) in any floating "
                    f"format: {first_line(problem)}"
                )
            if fmt is not torch.float64:
                narrower[op.name] = str(fmt).removeprefix("torch.")
            outputs = list(out) if isinstance(out, (tuple, list)) else [out]
            env.update(
                (ref, pinned[ref] if pinned and ref in pinned else value)
                for ref, value in zip(
                    op.refs(),
                    (
                        o.double() if isinstance(o, torch.Tensor) and o.is_floating_point() else o
                        for o in outputs
                    ),
                )
            )
    return [env[ref] for ref in graph.outputs], narrower


def judge_region(
    index: int, name: str, alone: Outcome, baseline: Outcome, only: Outcome, eager_vs_fp64: float
) -> RegionResult:
    """The verdict on one region (see the module docstring) from ``only``, the final outputs with
    it the only region fused: what its fusion does on its own, every other region's rounding
    differences left out. ``alone`` (it alone unfused) and ``baseline`` give the share of the
    deviation unfusing it removes."""
    removed = None
    if baseline.vs_eager > 0 and baseline.verdict != "pass":  # a passing model has nothing to remove
        removed = 1.0 - alone.vs_eager / baseline.vs_eager
    if only.verdict != "fail":
        verdict = "not confirmed"
    elif CLOSER_RATIO * only.vs_fp64 < eager_vs_fp64:
        verdict = "fusion helps"
    elif only.vs_fp64 > CLOSER_RATIO * eager_vs_fp64:
        verdict = "confirmed"
    else:
        verdict = "not confirmed"
    return RegionResult(index, name, alone, verdict, removed, only)


def confirm(
    ablation: Ablation,
    regions: list[int],
    *,
    bisect: bool = False,
    log: Callable[[str], None] | None = None,
) -> Confirmation:
    """Unfuse each of ``regions`` alone; with ``bisect``, also find a smallest set among them."""
    start = time.perf_counter()
    names = {r.region.index: r.name for r in ablation.regions}
    baseline = ablation.outcome(())
    out = Confirmation(baseline)
    for index in regions:
        result = judge_region(
            index,
            names[index],
            ablation.outcome([index]),
            baseline,
            ablation.only(index),
            ablation.eager_vs_fp64,
        )
        out.regions.append(result)
        if log:
            log(
                f"region {index} ({names[index]}): fused alone {result.only.vs_eager:.3g} eps from eager, "
                f"unfused alone {result.alone.vs_eager:.3g} -> {result.verdict}"
            )
    if bisect:
        found = ddmin(
            regions, lambda s: ablation.outcome(s).verdict == "pass", out.steps, names, ablation, log
        )
        out.minimal_set = None if found is None else [names[i] for i in found]
    out.runs, out.seconds = ablation.runs, time.perf_counter() - start
    out.narrower = dict(ablation.narrower)
    out.eager_vs_fp64 = ablation.eager_vs_fp64
    return out


def ddmin(
    regions: list[int],
    fixes: Callable[[list[int]], bool],
    steps: list[dict],
    names: dict[int, str],
    ablation: Ablation,
    log: Callable[[str], None] | None = None,
) -> list[int] | None:
    """A 1-minimal subset of ``regions`` whose unfusing ``fixes`` the outputs (Zeller's ddmin:
    split into n parts, keep a part or a complement that still fixes, else split finer); ``[]``
    when the outputs need no fixing, ``None`` when unfusing all of them does not fix them."""

    def test(subset: list[int]) -> bool:
        ok = fixes(subset)
        o = ablation.outcome(subset)
        steps.append({"unfused": [names[i] for i in subset], "final_vs_eager": o.vs_eager, "fixes": ok})
        if log:
            log(
                f"bisect: unfused {len(subset)} region(s) {subset}: {o.vs_eager:.3g} eps from eager, {'fixed' if ok else 'not fixed'}"
            )
        return ok

    if fixes([]):
        return []
    current = list(regions)
    if not current or not test(current):
        return None
    n = 2
    while len(current) >= 2:
        size = len(current) / n
        parts = [current[round(i * size) : round((i + 1) * size)] for i in range(n)]
        parts = [p for p in parts if p]
        for part in parts:
            if test(part):
                current, n = part, 2
                break
        else:
            for part in parts:
                rest = [i for i in current if i not in part]
                if n > 2 and test(rest):
                    current, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(current):
                    break
                n = min(2 * n, len(current))
    return current
