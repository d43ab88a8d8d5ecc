"""A comparison as node data for Google's Model Explorer: each compared op of the fusion-on graph
with its worst output error as the node's value, coloured by its verdict, so the verdicts are seen
on the graph itself.

The shape is Model Explorer's *model node data* (its ``node_data_builder``): ``{graph_id:
{"results": {node_id: {"value": .., "bgColor": .., "textColor": ..}}, "thresholds": [{"value":
.., "bgColor": ..}]}}``. A node is keyed by its op name, the node id Model Explorer's GE/ONNX
graphs use. The value is the severity the verdict was decided on: the relative L2 error in eps of
the measured format (``red``). Thresholds are per format; the legend lists float16's (the
default), and each node's own colour is its verdict's, which wins over the legend's.
"""

from __future__ import annotations

import math

from .outcomes import BACKGROUND, INTRODUCED_TEXT, VERDICTS, tone, worst_verdict
from .report import Report
from .verdict import ThresholdTable

#: Background colour of a node by its worst output verdict (None: no output compared).
COLOURS = {v: BACKGROUND[tone(v)] for v in (*VERDICTS, None)}
#: The value written for a special-value mismatch (JSON has no infinity): above every threshold.
SPECIAL_VALUE = 1e30


def node_data(report: Report, graph_of: dict[str, str], thresholds: ThresholdTable) -> dict:
    """Model Explorer node data of ``report``: ``graph_of`` names each compared op's graph."""
    introduced = {o.name for o in report.localisation.introduced}
    worst: dict[str, list] = {}
    for rec in report.records:
        if rec.plan.kind != "output":
            continue
        entry = worst.setdefault(rec.plan.fused_op, [None, []])
        if rec.score is not None:
            score = SPECIAL_VALUE if math.isinf(rec.score) or math.isnan(rec.score) else rec.score
            entry[0] = score if entry[0] is None else max(entry[0], score)
        entry[1].append(rec.verdict)
    limits = thresholds.for_format("float16")
    legend = [
        {"value": limits.red_warn, "bgColor": COLOURS["pass"]},
        {"value": limits.red_fail, "bgColor": COLOURS["warn"]},
        {"value": SPECIAL_VALUE, "bgColor": COLOURS["fail"]},
    ]
    out: dict[str, dict] = {}
    for op, (score, verdicts) in worst.items():
        if score is None:
            continue  # nothing compared: Model Explorer needs a number
        result = {"value": score, "bgColor": COLOURS[worst_verdict(verdicts)]}
        if op in introduced:
            result["textColor"] = INTRODUCED_TEXT
        graph = out.setdefault(graph_of.get(op, "graph"), {"results": {}, "thresholds": legend})
        graph["results"][op] = result
    return out
