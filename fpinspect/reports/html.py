"""A comparison as one self-contained HTML page: no network, no external asset, any browser.

The page is made from the ``--format json`` report of ``compare`` (a plain dict), so a report
saved last week renders as well as a run compared now; a run compared now also gives each
output's ULP histogram in log2 bins (``bins``), where a saved report has only the shares at 0,
1 and 2+ ULP. Sections: the summary and the localisation's sentence; a table of every record,
sortable by any column and filtered by a text box; a card per fused op with each output's
metrics, the replay's three-way view, its histogram (inline SVG) and its worst elements. A link
may carry the filter: ``report.html#q=autofuse_2 fail``.

This module gathers what the page shows; ``templates/comparison.html`` lays it out (and holds the
page's script), escaping every value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

from .. import __version__
from ..dumps.outcomes import ROLES, worst_verdict
from ..dumps.runtree import Leaf, LeafOutcome, cross_run_summary, sorted_labels
from .format import REL_REFERENCE
from .markup import Chart, chart, number, page

#: Record key -> (counts, lower edges, integer distances): a histogram of ULP errors in log2 bins.
Bins = Mapping[tuple[str, str, int], tuple[list[int], list[float], bool]]


def _cause(summary: dict) -> dict[str, str]:
    out = {}
    for role in ROLES:
        for name in summary.get(role) or []:
            out.setdefault(name, role.replace("_", " "))
    return out


def _bin_labels(lower: list[float], integer: bool) -> list[str]:
    labels = []
    for i, lo in enumerate(lower):
        hi = lower[i + 1] if i + 1 < len(lower) else None
        if lo == 0 and i == 0:
            labels.append("0")
        elif integer:
            labels.append(f"{lo:g}" if hi is None or hi - lo <= 1 else f"{lo:g}-{hi - 1:g}")
        else:
            labels.append(f"<{hi:g}" if lo == 0 else f"{lo:g}+")
    return labels


def _histogram(record: dict, bins: Bins | None) -> Chart | None | Literal[False]:
    """The record's ULP histogram: from ``bins`` (log2 bins), else from the shares at 0, 1 and
    2+ ULP a saved report has; False when it has neither."""
    key = (record["fused_op"], record["kind"], record["fused_index"])
    if bins and key in bins:
        counts, lower, integer = bins[key]
        return chart(list(counts), _bin_labels(list(lower), integer))
    share = (record.get("metrics") or {}).get("ulp", {}).get("share")
    count = (record.get("metrics") or {}).get("finite")
    if not share or not count:
        return False
    labels = list(share)
    return chart([round(share[k] * count) for k in labels], labels)


@dataclass(frozen=True)
class _Block:
    """One record in its op's card."""

    record: dict
    kind: str
    index: int
    origin: str
    #: Why the record was not compared; None when it was.
    why: str | None
    metrics: dict
    chart: Chart | None | Literal[False]


def _block(record: dict, bins: Bins | None) -> _Block:
    origin = f"{record.get('origin_op')}:{record.get('origin_index')}" if record.get("origin_op") else "-"
    why = None
    if record.get("verdict") is None:
        why = ", ".join(record.get("status") or []) + (
            f": {record['message']}" if record.get("message") else ""
        )
    metrics = record.get("metrics") or {}
    hist = _histogram(record, bins) if why is None else False
    return _Block(record, record["kind"], record["fused_index"], origin, why, metrics, hist)


def _made(when: datetime | None) -> str:
    """When the page was made and by which fpinspect."""
    when = when or datetime.now(timezone.utc)
    return f"Made {when.strftime('%Y-%m-%d %H:%M %Z').strip()} by fpinspect {__version__}"


def _row(record: dict, cause: dict[str, str]) -> tuple[str, list[tuple[object, object]]]:
    """A row of the records' table: its class (the verdict) and its cells, each (text, the
    value it sorts by, None for text)."""
    r = record
    m = r.get("metrics") or {}
    u = m.get("ulp") or {}
    return r.get("verdict") or "none", [
        (r.get("fused_op"), None),
        (r.get("kind"), None),
        (r.get("fused_index"), r.get("fused_index")),
        (r.get("origin_op") or "-", None),
        (r.get("verdict") or "-", None),
        (cause.get(r.get("fused_op"), "") if r.get("kind") == "output" else "", None),
        (number(m.get("red_eps")), m.get("red_eps")),
        (number(u.get("max")), u.get("max")),
        (number(u.get("p99")), u.get("p99")),
        (number(r.get("cosine"), 8), r.get("cosine")),
        (", ".join(r.get("status") or []), None),
    ]


def _leaf_parts(report: dict, bins: Bins | None) -> dict:
    """What the page draws of one leaf's report (``records`` and ``summary``): the template
    ``leaf.html``'s ``leaf_parts``."""
    records, summary = report.get("records") or [], report.get("summary") or {}
    cause = _cause(summary)
    verdicts = summary.get("verdicts") or {}
    counts = ", ".join(f"{n} {'not compared' if v == 'none' else v}" for v, n in verdicts.items() if n)
    by_op: dict[str, list[dict]] = {}
    for r in records:
        by_op.setdefault(r.get("fused_op"), []).append(r)
    cards = [
        {
            "op": op,
            "type": recs[0].get("fused_type"),
            "worst": worst_verdict(r.get("verdict") for r in recs if r.get("kind") == "output"),
            "cause": cause.get(op, ""),
            "blocks": [_block(r, bins) for r in recs],
        }
        for op, recs in by_op.items()
    ]
    table = summary.get("thresholds")
    table = table if isinstance(table, dict) else {}
    return {
        "summary": summary,
        "records": records,
        "counts": counts or "nothing compared",
        "roles": [(role.replace("_", " "), ", ".join(summary.get(role) or []) or "-") for role in ROLES],
        "warnings": summary.get("warnings") or [],
        "rows": [_row(r, cause) for r in records],
        "threshold_keys": list(
            dict.fromkeys(k for row in table.values() if isinstance(row, dict) for k in row)
        ),
        "threshold_rows": list(table.items()),
        "cards": cards,
    }


def render(
    report: dict,
    bins: Bins | None = None,
    title: str = "fpinspect comparison",
    *,
    command: str | None = None,
    when: datetime | None = None,
) -> str:
    """The HTML page of ``report`` (``compare --format json``'s object), saying when it was made
    (``when``, now by default), by which fpinspect and, given, with which ``command``, and the
    thresholds the report's verdicts were judged by."""
    return page(
        "comparison.html",
        title=title,
        made=_made(when),
        command=command,
        c=_leaf_parts(report, bins),
        REL_REFERENCE=REL_REFERENCE,
    )


def _mapping(value) -> dict:
    """``value`` where a saved report has an object there, else ``{}``."""
    return value if isinstance(value, dict) else {}


def _listed(value) -> list:
    """``value`` where a saved report has a list there, else ``[]``."""
    return value if isinstance(value, list) else []


def _leaf_verdict(leaf: dict) -> str | None:
    """The worst verdict of ``leaf``'s outputs (None: nothing judged)."""
    return worst_verdict(
        r.get("verdict")
        for r in leaf.get("records") or []
        if isinstance(r, dict) and r.get("kind") == "output"
    )


def _label(value) -> str | None:
    return None if value is None else str(value)


def _where_fields(what: str) -> dict[str, str]:
    """The rank, graph and step a scope's skipped entry names (``rank 0, graph m/1, step 3``,
    ``(fusion-off)`` after it where only that tree has it); ``{}`` for any other (a folder)."""
    out = {}
    for part in what.removesuffix(" (fusion-off)").split(", "):
        key, _, value = part.partition(" ")
        if key not in ("rank", "graph", "step") or not value:
            return {}
        out[key] = value
    return out


def _grid(runs: list[dict], skipped: list[dict]) -> dict:
    """The whole run's rank × graph grid: ``ranks`` (rows) and ``graphs`` (columns), those of the
    leaves and of what was left out, and ``cells``, per (rank, graph) its leaves in step order
    (each its step, worst verdict, introduced ops, error and anchor) and ``why`` what of it was
    left out (the scope's skipped entries naming its rank, its graph or one of its steps)."""
    left_out = [(_where_fields(str(e.get("what", ""))), f"{e.get('what')}: {e.get('why')}") for e in skipped]
    left_out = [(f, why) for f, why in left_out if f]
    ranks = sorted_labels(
        {_label(r.get("rank")) for r in runs} | {f["rank"] for f, _ in left_out if "rank" in f}
    )
    graphs = sorted_labels(
        {_label(r.get("graph")) for r in runs} | {f["graph"] for f, _ in left_out if "graph" in f}
    )
    cells: dict[tuple, dict] = {}
    for rank in ranks:
        for graph in graphs:
            why = [w for f, w in left_out if f.get("rank", rank) == rank and f.get("graph", graph) == graph]
            cells[(rank, graph)] = {"leaves": [], "why": why}
    for i, r in enumerate(runs):
        cells[(_label(r.get("rank")), _label(r.get("graph")))]["leaves"].append(
            {
                "step": _label(r.get("step")),
                "verdict": _leaf_verdict(r),
                "introduced": [str(op) for op in _listed(_mapping(r.get("summary")).get("introduced"))],
                "error": r.get("error"),
                "anchor": f"leaf-{i}",
            }
        )
    return {"ranks": ranks, "graphs": graphs, "cells": cells}


def render_run(
    report: dict,
    bins: Mapping[int, Bins] | None = None,
    title: str = "fpinspect comparison",
    *,
    command: str | None = None,
    when: datetime | None = None,
) -> str:
    """The HTML page of a whole run (``compare --format json``'s object of dump trees: its
    ``runs`` and ``summary``): the rank × graph grid of each leaf's worst verdict and introduced
    ops (and why a cell was left out), the run's summary (introduced ops and the ranks they were
    introduced on, warnings), then each leaf as :func:`render` draws it (``bins``: the ULP
    histograms of the leaf at each index of ``runs``)."""
    runs = [r for r in report.get("runs") or [] if isinstance(r, dict)]
    summary = _mapping(report.get("summary"))
    skipped = [e for e in _listed(_mapping(summary.get("scope")).get("skipped")) if isinstance(e, dict)]
    verdicts = _mapping(summary.get("verdicts"))
    counts = ", ".join(f"{n} {'not compared' if v == 'none' else v}" for v, n in verdicts.items() if n)
    leaves = []
    for i, r in enumerate(runs):
        leaf = Leaf(r.get("fusion_on") or "", "", *(_label(r.get(k)) for k in ("rank", "graph", "step")))
        leaves.append(
            {
                "label": leaf.label(),
                "anchor": f"leaf-{i}",
                "error": r.get("error"),
                "verdict": _leaf_verdict(r),
                "c": None if r.get("error") is not None else _leaf_parts(r, (bins or {}).get(i)),
            }
        )
    return page(
        "run.html",
        title=title,
        made=_made(when),
        command=command,
        grid=_grid(runs, skipped),
        counts=counts or "nothing compared",
        summary=summary,
        introduced=[e for e in _listed(summary.get("introduced")) if isinstance(e, dict)],
        warnings=_listed(summary.get("warnings")),
        skipped=skipped,
        leaves=leaves,
        REL_REFERENCE=REL_REFERENCE,
    )


def _bins_of(report) -> dict:
    """The ULP histogram (log2 bins) of each compared record of ``report`` (a
    :class:`~fpinspect.dumps.report.Report`)."""
    from ..dumps.drilldown import ulp_bins

    bins = {}
    for rec in report.records:
        if rec.result is not None and rec.result.compared and rec.result.stats is not None:
            b = ulp_bins(rec.result.stats)
            bins[rec.plan.key] = (b.counts.tolist(), list(b.lower), b.integer)
    return bins


def compared_run_page(scope, runs: Iterable, title: str, command: str | None = None) -> str:
    """The page of a whole run compared now (``fpinspect report RUN`` of dump trees): ``scope``
    the :class:`~fpinspect.dumps.runtree.Scope` and ``runs`` each leaf pair's
    :class:`~fpinspect.inspection.leaves.LeafRun` as :func:`~fpinspect.inspection.leaves.inspect_leaves`
    yields them."""
    from ..dumps.pair import json_clean
    from ..inspection.leaves import leaf_json

    outcomes: list[LeafOutcome] = []
    items: list[dict] = []
    bins: dict[int, Bins] = {}
    for run in runs:
        summary = None if run.report is None else run.report.summary()
        outcomes.append(LeafOutcome(run.on, error=run.error, summary=summary))
        if run.report is not None:
            bins[len(items)] = _bins_of(run.report)
        items.append(leaf_json(run, summary))
    report = {"runs": items, "summary": json_clean(cross_run_summary(scope, outcomes))}
    return render_run(report, bins, title, command=command)


def compared_page(inspection, title: str, command: str | None = None) -> str:
    """The page of ``inspection`` (an :class:`~fpinspect.inspection.pipeline.Inspection`) compared
    now, as ``fpinspect report RUN_DIR`` makes it: every pair, inputs too, the ops its settings
    select replayed, each output with its ULP histogram. Raises the comparison's ``InputError``."""
    report = inspection.report(compare_input=True)
    return render(report.to_json(), _bins_of(report), title, command=command)
