"""A check's report: Markdown for people (``baseline check``, the Tasks pane), JSON for scripts.

Both name each regressed figure with the baseline's and the run's value, and set the two
environments side by side.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from .check import IMPROVED, CheckResult


def number_text(v: float | None) -> str:
    """Six significant digits, ``-`` for no number."""
    return "-" if v is None else f"{v:.6g}"


def device_class_text(device_class: str) -> str:
    """A stored device class (``backend | device name``) as words: the parts that are known
    (``compare``'s ``dumps | `` is ``dumps``)."""
    return " | ".join(p for p in device_class.split(" | ") if p.strip()) or "unknown"


def _flat(environment: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in environment.items()}


#: Environment facts a check always shows, whether or not they differ.
SHOWN_FACTS = ("torch", "torch_npu", "cann", "cuda", "driver", "device_name", "fpinspect")


def _environments(result: CheckResult) -> list[tuple[str, str, str]]:
    """(fact, baseline's, run's) for the facts of :data:`SHOWN_FACTS` and every one that differs;
    settings outside the compared workload appear as ``setting NAME``."""
    base = _flat(result.baseline_runs[-1].environment)
    now = _flat(result.run.environment)
    for key in sorted({*result.run.settings, *result.baseline_runs[-1].settings}):
        b, n = result.baseline_runs[-1].settings.get(key), result.run.settings.get(key)
        if b != n:
            base[f"setting {key}"], now[f"setting {key}"] = json.dumps(b), json.dumps(n)
    keys = [k for k in dict.fromkeys([*base, *now]) if k in SHOWN_FACTS or base.get(k) != now.get(k)]
    return [(k, base.get(k, "-"), now.get(k, "-")) for k in keys]


def check_markdown(result: CheckResult) -> str:
    """The check for people: counts, a table of the regressed figures, the two environments."""
    run, bases = result.run, result.baseline_runs
    regressed = result.regressed
    improved = sum(f.status == IMPROVED for f in result.figures)
    ids = ", ".join(f"#{r.id}" for r in bases)
    lines = [
        f"# Run {run.id} against baseline {result.baseline_name}",
        "",
        f"Task {run.task}, settings {run.settings_hash}, device class {device_class_text(run.device_class)}; "
        f"baseline run{'s' if len(bases) > 1 else ''} {ids}.",
        "",
        f"**{len(regressed)} of {len(result.figures)} figures regressed**, {improved} improved, "
        "the others unchanged or within noise.",
    ]
    if regressed:
        lines += [
            "",
            "| figure | baseline | run | change | allowed | noise |",
            "|---|---|---|---|---|---|",
            *(
                f"| {f.name} | {number_text(f.baseline)} | {number_text(f.current)} | {number_text(f.change)} | "
                f"{number_text(f.allowed)} | {f.noise} |"
                for f in regressed
            ),
        ]
    lines += [
        "",
        "## Environments",
        "",
        f"| fact | baseline (run {bases[-1].id}) | run {run.id} |",
        "|---|---|---|",
    ]
    lines += [f"| {k} | {b} | {n} |" for k, b, n in _environments(result)]
    return "\n".join(lines) + "\n"


def check_json(result: CheckResult) -> dict[str, Any]:
    """The check for scripts: both runs whole, the regressed figures, then every figure."""

    def figure_json(f) -> dict[str, Any]:
        return {
            "name": f.name,
            "baseline": f.baseline,
            "run": f.current,
            "change": f.change,
            "allowed": f.allowed,
            "noise": f.noise,
            "rule": f.rule.direction,
            "status": f.status,
        }

    return {
        "baseline": result.baseline_name,
        "run": asdict(result.run),
        "baseline_runs": [asdict(r) for r in result.baseline_runs],
        "regressed": [figure_json(f) for f in result.regressed],
        "figures": [figure_json(f) for f in result.figures],
    }
