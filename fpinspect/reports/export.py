"""The CSV export of a comparison (``fpinspect compare --format csv``, the inspector's export)."""

from __future__ import annotations

import msgspec

from ..dumps.engine.report_types import Metrics, RecordFields, Ulp
from .format import printable

CSV_COLUMNS = (
    "kind",
    "fused_op",
    "fused_type",
    "fused_index",
    "origin_op",
    "origin_index",
    "status",
    "verdict",
    "role",
    "cosine",
    "max_abs",
    "max_rel",
    "red_eps",
    "rmse",
    "ulp_p50",
    "ulp_p99",
    "ulp_max",
    "nan_mismatch",
    "inf_mismatch",
    "reasons",
    "conversion",
    "fused_file",
    "origin_file",
    "replay_status",
    "replay_red_eps",
    "closer_to_truth",
)


_NO_METRICS, _NO_ULP = Metrics(), Ulp()


def compare_csv(report, out) -> None:
    """Write ``report`` (a :class:`~fpinspect.dumps.engine.report.Report`) as CSV to ``out``."""
    import csv

    w = csv.writer(out)
    w.writerow(CSV_COLUMNS)
    loc = report.localisation.by_name
    for rec in report.records:  # one record's JSON at a time, not the whole report's
        r = msgspec.convert(report.record_json(rec), RecordFields)
        m = r.metrics or _NO_METRICS
        u = m.ulp or _NO_ULP
        replay = r.replay
        versus = replay.fused_vs_replay if replay is not None else None
        finding = loc.get(r.fused_op)
        role = finding.role if finding and r.kind == "output" and rec.verdict == "fail" else None
        row = [
            r.kind,
            r.fused_op,
            r.fused_type,
            r.fused_index,
            r.origin_op,
            r.origin_index,
            "|".join(r.status),
            r.verdict,
            role,
            r.cosine,
            r.max_abs,
            r.max_rel,
            m.red_eps,
            m.rmse,
            u.p50,
            u.p99,
            u.max,
            m.nan_mismatch,
            m.inf_mismatch,
            "; ".join(r.reasons),
            r.conversion,
            r.fused_file,
            r.origin_file,
            None if replay is None else replay.status,
            None if versus is None else versus.red,
            None if replay is None else replay.closer_to_truth,
        ]
        # names and paths come from the files: no control character reaches a terminal showing it
        w.writerow([printable(cell) if isinstance(cell, str) else cell for cell in row])
