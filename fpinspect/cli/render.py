"""Terminal rendering of comparison results (rich). No numeric logic lives here."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:  # the CLI's help and `run` import this module without the numerics
    from ..dumps.pair import PairResult

BAD_STATUSES = {
    "FILE_NOT_FOUND",
    "NPY_LOAD_ERROR",
    "FORMAT_UNSUPPORTED",
    "FORMAT_CONVERSION_ERROR",
    "SHAPE_MISMATCH",
    "NO_MAPPING",
    "COMPUTE_ERROR",
    "ORIGIN_NOT_FOUND",
    "NAN_MISMATCH",
    "INF_MISMATCH",
}


#: The columns of a worst-elements table (``diff`` and the inspector's drill-down).
WORST_COLUMNS = ("index", "A", "B", "abs", "rel", "ULP", "A bits", "B bits")


def worst_row(e: dict) -> tuple[str, ...]:
    """One worst element (an entry of ``PairResult.worst``) as the cells of :data:`WORST_COLUMNS`."""
    return (
        str(e["index"]),
        fmt_num(e["a"]),
        fmt_num(e["b"]),
        fmt_num(e["abs"], "e3"),
        fmt_num(e["rel"], "e3"),
        fmt_num(e["ulp"]),
        e["a_bits"],
        e["b_bits"],
    )


def fmt_num(v, kind: str = "g") -> str:
    """Compact, aligned-friendly number text; ``-`` for missing, NaN / inf spelled out."""
    if v is None:
        return "-"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if kind == "cos":
        return f"{v:.8f}"
    if kind == "pct":
        return f"{100 * v:.2f}%"
    if kind == "e":
        return f"{v:.4e}"
    if kind == "e3":
        return f"{v:.3e}"
    if kind == "e2":
        return f"{v:.2e}"
    return f"{v:.6g}"


def status_text(status: list[str]) -> Text:
    t = Text()
    for i, code in enumerate(status):
        if i:
            t.append(" ")
        style = "bold red" if code in BAD_STATUSES else ("green" if code == "OK" else "yellow")
        t.append(code, style=style)
    return t


def _kv_table(title: str, rows: list[tuple[str, str]]) -> Table:
    t = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
    t.add_column(style="bold")
    t.add_column(justify="right")
    for k, v in rows:
        t.add_row(k, v)
    return t


def pair_report(res: PairResult, name_a: str, name_b: str) -> Group:
    """The `fpinspect diff` table: status, reference trio, ULP, errors, specials, worst."""
    parts = []
    head = Table.grid(padding=(0, 1))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("A", f"{name_a}  {res.dtype_a or ''} {list(res.shape_a) if res.shape_a is not None else ''}")
    head.add_row("B", f"{name_b}  {res.dtype_b or ''} {list(res.shape_b) if res.shape_b is not None else ''}")
    head.add_row("status", status_text(res.status))
    if res.message:
        head.add_row("", Text(res.message, style="yellow"))
    parts.append(head)
    if not res.compared:
        return Group(*parts)
    m = res.metrics
    parts.append(
        _kv_table(
            "Reference trio (fusion_precision_analyzer)",
            [
                ("cosine similarity", fmt_num(res.cosine, "cos")),
                ("max absolute error", fmt_num(res.max_abs, "e")),
                ("max relative error", fmt_num(res.max_rel, "e")),
            ],
        )
    )
    u = m["ulp"]
    kind = "integer distance" if u["kind"] == "diff" else "error vs B as reference"
    share = u["share"]
    approx = "" if u["exact"] else " (approx.)"
    parts.append(
        _kv_table(
            f"ULP ({u['dtype']}, {kind})",
            [
                (
                    "P50 / P99 / max" + approx,
                    f"{fmt_num(u['p50'])} / {fmt_num(u['p99'])} / {fmt_num(u['max'])}",
                ),
                ("mean", fmt_num(u["mean"])),
                ("share at 0 / 1 / >=2 ULP", " / ".join(fmt_num(share[k], "pct") for k in ("0", "1", ">=2"))),
                ("worst at index", str(u["argmax"])),
            ],
        )
    )
    err_rows = []
    for key, label in (("abs", "absolute"), ("rel", "relative")):
        b = m[key]
        err_rows.append((f"{label} max / mean", f"{fmt_num(b['max'], 'e')} / {fmt_num(b['mean'], 'e')}"))
        err_rows.append((f"{label} P50 / P99", f"{fmt_num(b['p50'], 'e')} / {fmt_num(b['p99'], 'e')}"))
    err_rows += [
        ("RMSE", fmt_num(m["rmse"], "e")),
        ("relative Euclidean distance", fmt_num(m["red"], "e")),
        ("mean relative (msaccucmp)", fmt_num(m["mean_rel"], "e")),
        ("accumulated relative (msaccucmp)", fmt_num(m["accumulated_rel"], "e")),
        ("KL divergence", fmt_num(m.get("kl"), "e")),
        ("mean / std of A", f"{fmt_num(m['mean_x'])} / {fmt_num(m['std_x'])}"),
        ("mean / std of B", f"{fmt_num(m['mean_y'])} / {fmt_num(m['std_y'])}"),
        (
            "rel. error < 0.1% / < 0.5% (msprobe)",
            f"{fmt_num(m['one_thousandth'], 'pct')} / {fmt_num(m['five_thousandth'], 'pct')}",
        ),
    ]
    parts.append(_kv_table("Errors (elements finite on both sides)", err_rows))
    n = m["count"]
    bit_eq = m["bit_equal"]
    parts.append(
        _kv_table(
            "Special values",
            [
                ("elements / finite on both sides", f"{fmt_num(n)} / {fmt_num(m['finite'])}"),
                (
                    "bit-identical",
                    "-" if bit_eq is None else f"{fmt_num(bit_eq)} ({fmt_num(bit_eq / n, 'pct')})",
                ),
                ("NaN on one side", fmt_num(m["nan_mismatch"])),
                ("NaN on both sides", fmt_num(m["both_nan"])),
                ("inf mismatch / same inf", f"{fmt_num(m['inf_mismatch'])} / {fmt_num(m['both_inf'])}"),
                ("+0 vs -0", fmt_num(m["signed_zero"])),
            ],
        )
    )
    if res.worst:
        w = Table(title="Worst elements", title_justify="left", box=box.SIMPLE_HEAD)
        for col in WORST_COLUMNS:
            w.add_column(col, justify="right" if col != "index" else "left", no_wrap=True)
        for e in res.worst:
            w.add_row(*worst_row(e))
        parts.append(w)
    return Group(*parts)


def console(stderr: bool = False) -> Console:
    # Pipes and files get 120 columns rather than rich's 80, so tables are not cut.
    return Console(stderr=stderr, highlight=False, width=None if sys.stdout.isatty() else 120)


def plain_console(file) -> Console:
    """A console writing a report to ``file``, 120 columns wide."""
    return Console(file=file, width=120, highlight=False)


def stage_bars(console: Console):
    """A transient rich progress display for a command's stages (one bar per stage: its name,
    the bar, done/total, elapsed), drawn on ``console`` only when it is a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


def short_name(name: str | None, width: int) -> str:
    """Keep both ends of long op names: the start says the kind, the end says which."""
    if name is None:
        return "-"
    if len(name) <= width:
        return name
    head = (width - 1) * 2 // 3
    return f"{name[:head]}…{name[-(width - 1 - head) :]}"


VERDICT_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", None: "dim"}


def compare_table(report) -> Group:
    """The `fpinspect compare` table (fits 120 columns) and its summary lines."""
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0))
    for col, width, justify in (
        ("fused op:output", 26, "left"),
        ("original:output", 18, "left"),
        ("cosine", 10, "right"),
        ("max abs", 8, "right"),
        ("max rel", 8, "right"),
        ("ULP max", 7, "right"),
        ("verdict", 7, "left"),
        ("cause", 13, "left"),
        ("status", 15, "left"),
    ):
        t.add_column(col, no_wrap=True, overflow="ellipsis", width=width, justify=justify)
    loc = report.localisation.by_name
    for rec in report.records:
        p, r = rec.plan, rec.result
        u = r.metrics["ulp"]["max"] if r and r.compared else None
        finding = loc.get(p.fused_op)
        cause = (
            finding.role if rec.verdict == "fail" and p.kind == "output" and finding and finding.role else ""
        )
        cause = cause.replace("_", " ")
        origin = "-" if p.origin_op is None else f"{short_name(p.origin_op, 16)}:{p.origin_index}"
        # inputs are listed under their op's outputs, by input number
        name = (
            f"{short_name(p.fused_op, 24)}:{p.fused_index}"
            if p.kind == "output"
            else f"  └ input {p.fused_index}"
        )
        t.add_row(
            name,
            origin,
            fmt_num(r.cosine if r else None, "cos"),
            fmt_num(r.max_abs if r else None, "e2"),
            fmt_num(r.max_rel if r else None, "e2"),
            fmt_num(u),
            Text(rec.verdict or "-", style=VERDICT_STYLE[rec.verdict]),
            Text(
                cause,
                style="bold red" if cause == "introduced" else "green" if cause == "more accurate" else "",
            ),
            status_text(rec.status),
            style="on #3a0000" if rec.verdict == "fail" else None,
        )
    s = report.summary()
    v = s["verdicts"]
    line = Text()
    types = ", ".join(f"{t} {n}" for t, n in s.get("compared_types", {}).items())
    unfused = f" and {s['unfused_ops']} unfused ops" if s.get("unfused_ops") else ""
    line.append(
        f"{s['records']} records of {s['fused_ops']} fused ops{f' ({types})' if types else ''}{unfused}: "
    )
    line.append(f"{v['pass']} pass", style="green")
    line.append(", ")
    line.append(f"{v['warn']} warn", style="yellow")
    line.append(", ")
    line.append(f"{v['fail']} fail", style="bold red")
    line.append(f", {v['none']} not compared")
    for key, style in (("introduced", "bold"), ("more_accurate", "green")):
        if s.get(key):
            names = f"{', '.join(s[key][:3])}{' …' if len(s[key]) > 3 else ''}"
            line.append(f" · {key.replace('_', ' ')}: {names}", style=style)
    it = s.get("iteration", {})
    on, off = (it.get(side, ".") for side in ("fusion_on", "fusion_off"))
    read = Text(
        "dumps read from the dump folders themselves"
        if on == off == "."
        else f"iteration: fusion-on {'its dump folder itself' if on == '.' else on}, "
        f"fusion-off {'its dump folder itself' if off == '.' else off}",
        style="dim",
    )
    nothing = not s.get("compared", 1)
    return Group(t, line, read, Text(s["look_first"], style="bold" if s["introduced"] or nothing else ""))


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
        w.writerow(
            [
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
        )
