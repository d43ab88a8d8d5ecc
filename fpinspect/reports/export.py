"""The CSV export of a comparison (``fpinspect compare --format csv``, the inspector's export)."""

from __future__ import annotations

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


def compare_csv(report, out) -> None:
    import csv

    w = csv.writer(out)
    w.writerow(CSV_COLUMNS)
    loc = report.localisation.by_name
    for rec in report.records:  # one record's JSON at a time, not the whole report's
        j = report.record_json(rec)
        m = j["metrics"]
        replay = j.get("replay") or {}
        versus = replay.get("fused_vs_replay") or {}
        u = m.get("ulp", {})
        finding = loc.get(j["fused_op"])
        role = finding.role if finding and j["kind"] == "output" and rec.verdict == "fail" else None
        row = [
            j["kind"],
            j["fused_op"],
            j["fused_type"],
            j["fused_index"],
            j["origin_op"],
            j["origin_index"],
            "|".join(j["status"]),
            j["verdict"],
            role,
            j["cosine"],
            j["max_abs"],
            j["max_rel"],
            m.get("red_eps"),
            m.get("rmse"),
            u.get("p50"),
            u.get("p99"),
            u.get("max"),
            m.get("nan_mismatch"),
            m.get("inf_mismatch"),
            "; ".join(j["reasons"]),
            j["conversion"],
            j["fused_file"],
            j["origin_file"],
            replay.get("status"),
            versus.get("red"),
            replay.get("closer_to_truth"),
        ]
        # names and paths come from the files: no control character reaches a terminal showing it
        w.writerow([printable(cell) if isinstance(cell, str) else cell for cell in row])
