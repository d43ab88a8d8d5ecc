"""The plan's §6.1 list: per chain that task B (or training run E) found worse fused than eager,
the evidence and the AutoFuse switch that would turn that fusion off.

B's counter-examples are the rows its rule calls worse *beyond noise* (the bootstrap over its
inputs); rows worse only within noise are named apart, never as counter-examples. The switches
come from :mod:`fpinspect.dumps.switches`, given the GE op types of the chain's operators (each
chain of task B records them). E measures a whole model: a divergence has no op to switch, so
its entry says how to find one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..dumps.formats.fusion import FusedOp
from ..dumps.switches import OpSwitches, Switch, autofuse_switches
from ..experiments.results import TaskReport


class DataError(ValueError):
    """A task's own data (beside the common keys, which are checked on load) cannot be read."""


@dataclass(frozen=True)
class PlanSwitch:
    """One entry of the list: ``subject`` (a chain of B, or E's model), its operators, the
    measurements that make it a counter-example, and the switches with what they touch."""

    task: str
    subject: str
    operators: str
    evidence: list[str]
    switches: list[Switch]
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "subject": self.subject,
            "operators": self.operators,
            "evidence": list(self.evidence),
            "switches": [s.to_json() for s in self.switches],
            "notes": list(self.notes),
        }


@dataclass
class SwitchList:
    """The entries, and ``notes``: what is not listed and why (no counter-example, rows worse
    only within noise, a task that did not run, data that could not be read)."""

    entries: list[PlanSwitch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The tasks (B, E) whose results were read; without any, "no counter-example" means nothing.
    read: list[str] = field(default_factory=list)

    def empty_sentence(self) -> str:
        """What an empty list means: no counter-example in the results read, or no results."""
        if self.read:
            return f"No counter-example in the results of {' and '.join(self.read)}: nothing to switch off."
        return "B and E have no results: no counter-example can be listed."

    def to_json(self) -> dict[str, Any]:
        return {"entries": [e.to_json() for e in self.entries], "notes": list(self.notes)}


def _ulp(value: Any) -> str:
    return "-" if value is None else f"{value:.6g}" if isinstance(value, (int, float)) else str(value)


def _get(d: Any, key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(d, dict) or not isinstance(d.get(key), kinds) or isinstance(d.get(key), bool):
        raise DataError(f"{where}.{key} is missing or malformed")
    return d[key]


def _row_evidence(row: dict[str, Any], where: str) -> str:
    """One counter-example row of B as a sentence."""
    fused, eager = _get(row, "fused", dict, where), _get(row, "eager", dict, where)
    stats = {
        f"{name} {side}": _get(d, key, (int, float, type(None)), f"{where}.{side}")
        for name, key in (("P99", "p99_ulp"), ("max", "max_ulp"))
        for side, d in (("fused", fused), ("eager", eager))
    }
    text = (
        f"{_get(row, 'dtype', str, where)}, {_get(row, 'distribution', str, where)} inputs: "
        f"P99 {_ulp(stats['P99 fused'])} fused vs {_ulp(stats['P99 eager'])} eager, "
        f"max {_ulp(stats['max fused'])} vs {_ulp(stats['max eager'])} ULP against float64"
    )
    worse = row.get("worse_in")
    if isinstance(worse, list) and worse:
        text += f" (worse in {', '.join(str(w) for w in worse)})"
    if isinstance(row.get("inputs_fused_worse"), int):
        text += f"; fused's largest error is the larger on {row['inputs_fused_worse']} inputs"
    if isinstance(row.get("input_index"), int):
        text += (
            f"; worst at input {row['input_index']} (seed {_ulp(row.get('seed'))}), element "
            f"{row.get('location')}: fused {_ulp(row.get('fused_ulp_error'))} ULP, "
            f"eager {_ulp(row.get('eager_ulp_error'))} ULP there"
        )
    return text


def _chain_op(name: str) -> FusedOp | None:
    """Chain ``name`` of task B as a fused op of its GE op types (None for a chain this
    version does not know)."""
    from ..experiments.tasks.accumulated_error import CHAINS

    chain = CHAINS.get(name)
    if chain is None or not chain.ge_types:
        return None
    return FusedOp(name, "AscBackend", "", [], [], list(chain.ge_types), [])


def _from_b(report: TaskReport, out: SwitchList) -> None:
    data = report.data
    rows = data.get("counter_examples")
    within = data.get("worse_within_noise", [])
    if not isinstance(rows, list) or not isinstance(within, list):
        raise DataError("counter_examples or worse_within_noise is not a list")
    evidence: dict[str, list[str]] = {}
    for i, row in enumerate(rows):
        where = f"counter_examples[{i}]"
        evidence.setdefault(_get(row, "chain", str, where), []).append(_row_evidence(row, where))
    apart = [
        f"{_get(r, 'chain', str, f'worse_within_noise[{i}]')} {r.get('dtype')} {r.get('distribution')}"
        for i, r in enumerate(within)
    ]
    expressions = data.get("expressions") if isinstance(data.get("expressions"), dict) else {}
    every = [op for op in map(_chain_op, expressions or evidence) if op is not None]
    for chain, sentences in evidence.items():
        op = _chain_op(chain)
        found = autofuse_switches(op, every) if op else OpSwitches(chain, "", [])
        notes = list(found.notes)
        if op is None:
            notes.append(f"this version does not know chain {chain}'s op types: no switch can be named")
        operators = str(expressions.get(chain) or "")
        out.entries.append(PlanSwitch("B", chain, operators, sentences, list(found.switches), notes))
    if apart:
        out.notes.append(
            f"B: {len(apart)} row(s) worse by the plan's rule but only within noise, so not "
            f"counter-examples: {'; '.join(apart)}"
        )
    if not rows:
        out.notes.append(
            f"B: no counter-example; fused was no worse than eager beyond noise in every chain "
            f"({', '.join(expressions) or 'none recorded'}) on {report.device}, profile {report.profile}"
        )


def _from_e(report: TaskReport, out: SwitchList) -> None:
    divergence = report.data.get("divergence")
    if divergence is None:
        out.notes.append(
            f"E: the fused training curves stayed within the noise band on {report.device} "
            f"(profile {report.profile}): no counter-example"
        )
        return
    metric = _get(divergence, "metric", str, "divergence")
    step = _get(divergence, "step", int, "divergence")
    size = _get(divergence, "size", (int, float), "divergence")
    band = divergence.get("band")
    out.entries.append(
        PlanSwitch(
            "E",
            "training (the whole model)",
            "every fused region of the model",
            [
                f"fused {metric} leaves the noise band at step {step}: gap {size:.3g} against a band of "
                f"{_ulp(band)}"
            ],
            [
                Switch(
                    "enable_autofuse",
                    "--enable_autofuse=false",
                    "turns AutoFuse off for the whole model (the eager run's setting)",
                )
            ],
            [
                "a training curve does not say which fused op diverged: capture the model's dumps with "
                "fusion on and off (fpinspect capture) and compare them to find it, then switch only that"
            ],
        )
    )


def switch_list(reports: dict[str, TaskReport]) -> SwitchList:
    """The §6.1 list from the reports of tasks B and E among ``reports`` (by task id)."""
    out = SwitchList()
    for task, read in (("B", _from_b), ("E", _from_e)):
        report = reports.get(task)
        if report is None:
            out.notes.append(f"{task}: no result, so none of its counter-examples are listed")
            continue
        try:
            read(report, out)
        except DataError as exc:
            out.notes.append(f"{task}: its result's data cannot be read ({exc}), so nothing of it is listed")
            continue
        out.read.append(task)
    if out.entries and any(r.device != "npu" for t, r in reports.items() if t in ("B", "E")):
        out.notes.append(
            "measured with Inductor (not on an NPU): the AutoFuse switches are those for the same operators "
            "under AutoFuse; confirm on the device before turning them on"
        )
    return out
