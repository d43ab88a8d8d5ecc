"""Replay evidence on one fused op: what fusion itself did to its own inputs.

For each compared output of a fused op, the subgraph of its originals is evaluated four
times — eagerly (:data:`~.evaluate.EAGER`) and in float64 (:data:`~.evaluate.FP64`), on the
fused op's dumped inputs and on the fusion-off run's — and compared:

* ``fidelity`` — eager replay on the fusion-off inputs against the fusion-off output dump:
  does the replay reproduce the device's eager op? Beyond 1 ULP on more than
  :data:`FIDELITY_SHARE` of the elements (or any NaN / infinity on one side only) the replay
  is *approximate*: still evidence when the deviation it must explain (the fused output against
  the fusion-off one) is :data:`DECISIVE_RATIO` times its own distance, with that distance carried
  as the uncertainty of ``closer_to_truth`` and named in the reason; else ``unfaithful`` and
  not used. Without the fusion-off inputs it cannot be checked, and the replay is
  ``unverified`` (not used as evidence either).
* ``fused_vs_replay`` — the fused output against the eager replay on the same inputs: the
  difference fusion itself made, judged with the comparison's thresholds.
* ``fused_vs_fp64`` / ``eager_vs_fp64`` — each side's ``red`` (in eps of the compared format)
  against the float64 truth for its own inputs; the smaller one, by at least
  :data:`CLOSER_RATIO`, is ``closer_to_truth`` (else ``tie``);
* ``standard`` — msprobe's benchmark standard on the same four tensors (:mod:`.standard`).

A failing op is then *introduced* when it fails against its own eager replay and is not the
closer side, *more accurate* when it fails against eager but is the closer side, and
*inherited* when it matches its eager replay (a failing op's difference then came in through
its inputs; an op fed only by data or constants has none that could carry one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dumps.engine.localise import OpFinding, OpRecords
from ..dumps.engine.pair import PairResult, compare_arrays, json_number
from ..dumps.engine.sides import SIDE_ERRORS, load_sides
from ..dumps.engine.verdict import ThresholdTable, format_score, judge
from ..numerics import accumulate, float_format, is_supported, metrics_from_stats
from .bind import array_of, bind
from .evaluate import EAGER, FP64, evaluate
from .ops import OPS, Unsupported
from .standard import Standard, benchmark_standard
from .subgraph import extract

#: Replay statuses (the ``replay.status`` of the JSON contract).
STATUSES = ("ok", "unsupported", "unfaithful", "unverified", "missing_inputs")

#: A faithful replay is more than 1 ULP from the device's eager output on at most this share.
FIDELITY_SHARE = 1e-3
#: One side is closer to the float64 truth when its error is this many times smaller.
CLOSER_RATIO = 1.5
#: A replay farther than faithful from the device's eager output is still evidence when the
#: deviation it must explain is this many times its distance (its uncertainty is carried).
DECISIVE_RATIO = 10.0


def red_eps(res: PairResult | None) -> float | None:
    """``red`` of a comparison in eps of its measured format (``None`` if nothing compared)."""
    if res is None or not res.compared or res.metrics.red is None:
        return None
    name = res.metrics.errors.ulp.dtype
    return res.metrics.red / float_format(name).eps if is_supported(name) else None


def red_against(a, truth) -> float | None:
    """``red`` of ``a`` against the float64 ``truth``, in eps of ``a``'s format: one pass of
    the toolkit's statistics, without the error statistics a full comparison adds."""
    try:
        st = accumulate(a, truth)
    except (ValueError, TypeError, MemoryError):
        return None
    red = metrics_from_stats(st)["red"]
    return None if red is None or not is_supported(st.fmt.name) else red / st.fmt.eps


def max_ulp(res: PairResult | None):
    return res.metrics.errors.ulp.max if res is not None and res.compared else None


def faithful(res: PairResult) -> bool:
    """The replay reproduces the eager output: no one-sided NaN / infinity and at most
    :data:`FIDELITY_SHARE` of the elements 2 or more ULPs apart."""
    if not res.compared or res.stats.nan_mismatch or res.stats.inf_mismatch:
        return False
    return res.metrics.errors.ulp.share.two_or_more <= FIDELITY_SHARE


def decisive(fidelity: PairResult, deviation: PairResult | None) -> float | None:
    """How many times the deviation a replay must explain (the fused output against the fusion-off
    output, ``deviation``) exceeds the replay's own distance from the fusion-off output
    (``fidelity``), where that is at least :data:`DECISIVE_RATIO`; else ``None``. Both are relative
    L2 errors, so the ratio needs no unit. A replay 0.5 eps from the device's eager output cannot
    be trusted on a 0.8 eps question, and settles a 5 000 eps one."""
    if not fidelity.compared or fidelity.stats.nan_mismatch or fidelity.stats.inf_mismatch:
        return None
    if deviation is None or not deviation.compared:
        return None
    off, dev = fidelity.metrics.red, deviation.metrics.red
    if off is None or dev is None or not dev > 0:
        return None
    ratio = dev / off if off > 0 else float("inf")
    return ratio if ratio >= DECISIVE_RATIO else None


def closer(fused: float | None, eager: float | None, margin: float | None = None) -> str | None:
    """``fused`` / ``eager``: whose error against float64 is :data:`CLOSER_RATIO` times smaller
    (and, for an approximate replay, apart by more than twice its ``margin``, in the same eps)."""
    if fused is None or eager is None:
        return None
    if margin is not None and abs(eager - fused) <= 2 * margin:
        return "tie"
    if eager > CLOSER_RATIO * fused:
        return "fused"
    if fused > CLOSER_RATIO * eager:
        return "eager"
    return "tie"


@dataclass
class ReplayEvidence:
    """The replay of one fused output (the ``replay`` object of the JSON contract).

    ``results`` keeps the two comparisons with the eager side (``fidelity``,
    ``fused_vs_replay``) for views that show their histograms; ``truth`` the ``red`` (eps) of
    each side against float64 (``fused_vs_fp64``, ``eager_vs_fp64``), which need no more.
    """

    status: str
    reason: str | None = None
    unsupported: list[str] = field(default_factory=list)
    results: dict[str, PairResult] = field(default_factory=dict)
    truth: dict[str, float | None] = field(default_factory=dict)
    verdict: str | None = None  #: fused_vs_replay judged with the comparison's thresholds
    standard: Standard | None = None  #: msprobe's benchmark standard, for a usable replay
    #: an approximate replay's distance from the device's eager output (eps), carried into
    #: :attr:`closer_to_truth`; ``None`` for a faithful one
    uncertainty: float | None = None

    @property
    def usable(self) -> bool:
        return self.status == "ok"

    def red(self, which: str) -> float | None:
        """``red`` in eps of one of the four comparisons."""
        return self.truth[which] if which in self.truth else red_eps(self.results.get(which))

    @property
    def closer_to_truth(self) -> str | None:
        return closer(self.red("fused_vs_fp64"), self.red("eager_vs_fp64"), self.uncertainty)

    @property
    def role(self) -> str | None:
        """``introduced`` / ``more_accurate`` / ``inherited`` for a usable replay, else None."""
        if not self.usable:
            return None
        if self.verdict != "fail":
            return "inherited"
        return "more_accurate" if self.closer_to_truth == "fused" else "introduced"

    def conclusion(self) -> str:
        """The replay's finding in words, e.g. "fusion kept fp32 inside: 40x closer to fp64 than eager"."""
        said = self._conclusion()
        if self.usable and self.uncertainty is not None:
            said += (
                f" (an approximate replay, {format_score(self.uncertainty)} from the device's eager output)"
            )
        return said

    def _conclusion(self) -> str:
        if not self.usable:
            return f"no usable replay ({self.status}): {self.reason}"
        fused, eager = self.red("fused_vs_fp64"), self.red("eager_vs_fp64")
        vs = self.red("fused_vs_replay")
        role = self.role
        if role == "more_accurate" or (role == "inherited" and self.closer_to_truth == "fused"):
            ratio = (eager / fused) if fused else float("inf")
            times = "infinitely" if ratio == float("inf") else f"{ratio:.0f}x"
            head = (
                "fusion kept fp32 inside"
                if role == "more_accurate"
                else "fusion is close to its eager replay"
            )
            return (
                f"{head}: {times} closer to fp64 than eager ({format_score(fused)} vs {format_score(eager)})"
            )
        if role == "introduced":
            return (
                f"fusion itself changed the result: {format_score(vs)} from its own eager replay, "
                f"{format_score(fused)} from fp64 where eager is {format_score(eager)}"
            )
        # no word on where a difference came from: a passing op has none (see OpReplay.revise)
        return (
            f"fusion reproduces eager on its own inputs ({format_score(vs)}, "
            f"max {max_ulp(self.results.get('fused_vs_replay'))} ULP)"
        )

    def to_json(self) -> dict:
        r = self.results
        fid, vs = r.get("fidelity"), r.get("fused_vs_replay")
        return {
            "status": self.status,
            "reason": self.reason,
            "unsupported": list(self.unsupported),
            "fidelity": None
            if fid is None
            else {"red": json_number(red_eps(fid)), "max_ulp": json_number(max_ulp(fid))},
            "fused_vs_replay": None
            if vs is None
            else {
                "red": json_number(red_eps(vs)),
                "max_ulp": json_number(max_ulp(vs)),
                "verdict": self.verdict,
            },
            "fused_vs_fp64": None
            if "fused_vs_fp64" not in self.truth
            else {"red": json_number(self.red("fused_vs_fp64"))},
            "eager_vs_fp64": None
            if "eager_vs_fp64" not in self.truth
            else {"red": json_number(self.red("eager_vs_fp64"))},
            "closer_to_truth": self.closer_to_truth if self.usable else None,
            "standard": None if self.standard is None else self.standard.to_json(),
        }


@dataclass
class OpReplay:
    """The replay of one fused op: evidence per output number. It revises the op's finding
    (the :class:`~fpinspect.dumps.engine.localise.Evidence` seam of the localisation)."""

    name: str
    outputs: dict[int, ReplayEvidence]

    def revise(self, finding: OpFinding, records: OpRecords) -> None:
        if finding.verdict != "fail":
            return
        failing = [r for r in records.outputs if r.verdict == "fail"]
        evidence = [(r, self.outputs.get(r.plan.fused_index)) for r in failing]
        unusable = [(r, e) for r, e in evidence if e is None or not e.usable]
        if unusable:
            r, e = unusable[0]
            why = "not replayed" if e is None else f"{e.status}: {e.reason}"
            finding.reason = (
                f"{finding.reason} (threshold rule: no usable replay of output {r.plan.fused_index}, {why})"
            )
            return
        roles = {
            role: [(r, e) for r, e in evidence if e.role == role]
            for role in ("introduced", "more_accurate", "inherited")
        }
        role = next(name for name in roles if roles[name])
        r, e = roles[role][0]
        finding.role = role
        what = f"output {r.plan.fused_index} vs {r.plan.origin_op}"
        finding.reason = f"{what}: {e.conclusion()}"
        if role == "inherited":
            fed = any("SKIPPED_CONST_DATA" not in r.status for r in records.inputs)
            finding.reason += (
                ": the difference came in through its inputs"
                if fed
                else ", yet none of its inputs can carry a difference (each is data or a constant)"
            )


def replay_op(comparison, name: str, thresholds: ThresholdTable | None = None, cancelled=None) -> OpReplay:
    """Replay fused op ``name`` of ``comparison`` (a :class:`~fpinspect.dumps.engine.compare.DumpComparison`)
    for each of its comparable outputs. Never raises for bad data: problems are statuses."""
    thresholds = thresholds or comparison.thresholds
    fused = comparison.fused_op(name)
    plans = [p for p in comparison.outputs[name] if p.comparable]
    sub = extract(comparison.close_model, fused, comparison.close_positions)

    def every(status: str, reason: str, unsupported=()) -> OpReplay:
        return OpReplay(
            name, {p.fused_index: ReplayEvidence(status, reason, list(unsupported)) for p in plans}
        )

    if sub.missing:
        return every("unsupported", f"original ops not in the fusion-off graph: {', '.join(sub.missing)}")
    if not sub.ops:
        return every("unsupported", "the fused op names no original ops")
    unknown = [t for t in sub.types if t not in OPS]
    if unknown:
        return every("unsupported", f"no replay semantic for {', '.join(unknown)}", unknown)
    bound = bind(comparison, sub)
    if bound.missing_on:
        return every("missing_inputs", "; ".join(bound.missing_on[:3]))
    # without every fusion-off input, the fused side alone is replayed: fidelity is unchecked
    sides = ("on", "off") if not bound.missing_off else ("on",)
    shared = "; ".join(bound.shared)
    names = {op.name for op in sub.ops}
    wanted = [(p.origin_op, p.origin_index) for p in plans if p.origin_op in names]
    try:
        runs = {
            (side, mode): evaluate(sub, getattr(bound, side), mode, wanted, cancelled).outputs
            for side in sides
            for mode in (EAGER, FP64)
        }
    except Unsupported as exc:
        failing_type = next((op.type for op in sub.ops if str(exc).startswith(f"{op.type} {op.name}")), None)
        return every("unsupported", str(exc), [failing_type] if failing_type else [])
    out: dict[int, ReplayEvidence] = {}
    for p in plans:
        key = (p.origin_op, p.origin_index)
        if key not in runs[("on", EAGER)]:
            out[p.fused_index] = ReplayEvidence(
                "unsupported", f"{p.origin_op} is not one of the fused op's originals"
            )
            continue
        try:
            loaded = load_sides(p)
        except SIDE_ERRORS as exc:
            out[p.fused_index] = ReplayEvidence("missing_inputs", str(exc))
            continue
        fused, eager = array_of(loaded.fused), array_of(loaded.original)
        vs = compare_arrays(fused, runs[("on", EAGER)][key], worst=0, kl=False)
        if bound.missing_off:
            out[p.fused_index] = ReplayEvidence(
                "unverified",
                f"fidelity cannot be checked: {'; '.join(bound.missing_off[:3])}",
                results={"fused_vs_replay": vs},
                truth={"fused_vs_fp64": red_against(fused, runs[("on", FP64)][key])},
                verdict=judge(vs, thresholds, p.budget).verdict,
            )
            continue
        results = {
            "fidelity": compare_arrays(runs[("off", EAGER)][key], eager, worst=0, kl=False),
            "fused_vs_replay": vs,
        }
        truth = {
            "fused_vs_fp64": red_against(fused, runs[("on", FP64)][key]),
            "eager_vs_fp64": red_against(eager, runs[("off", FP64)][key]),
        }
        fid = results["fidelity"]
        usable, explains = faithful(fid), decisive(fid, comparison.compute(p).result)
        if not usable and explains is None:
            ev = ReplayEvidence(
                "unfaithful",
                f"the eager replay is {format_score(red_eps(fid))} (max {max_ulp(fid)} ULP) "
                f"from the fusion-off output: replay semantics differ from the device's",
                results=results,
                truth=truth,
            )
        else:
            approximate = None
            if not usable:
                approximate = (
                    f"approximate replay: {format_score(red_eps(fid))} (max {max_ulp(fid)} ULP) from the "
                    f"fusion-off output, {explains:.0f}x less than the deviation it explains"
                )
            ev = ReplayEvidence(
                "ok",
                "; ".join(x for x in (approximate, shared) if x) or None,
                results=results,
                truth=truth,
                verdict=judge(results["fused_vs_replay"], thresholds, p.budget).verdict,
                standard=benchmark_standard(
                    fused, runs[("on", FP64)][key], eager, runs[("off", FP64)][key], sub.types
                ),
                uncertainty=None if usable else red_eps(fid),
            )
        out[p.fused_index] = ev
    return OpReplay(name, out)
