"""The report of one compared pair (``fpinspect diff``'s table, the inspector's pair screen)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from .format import REL_REFERENCE, REL_TO_B, WORST_COLUMNS, fmt_num, status_text, worst_row

if TYPE_CHECKING:  # the CLI's help imports this module without the numerics
    from ..dumps.engine.pair import PairResult


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
                (f"max relative error, {REL_REFERENCE}", fmt_num(res.max_rel, "e")),
            ],
        )
    )
    e = m.errors
    u = e.ulp
    kind = "integer distance" if u.kind == "diff" else "error vs B as reference"
    share = u.share
    approx = "" if u.exact else " (approx.)"
    parts.append(
        _kv_table(
            f"ULP ({u.dtype}, {kind})",
            [
                (
                    "P50 / P99 / max" + approx,
                    f"{fmt_num(u.p50)} / {fmt_num(u.p99)} / {fmt_num(u.max)}",
                ),
                ("mean", fmt_num(u.mean)),
                (
                    "share at 0 / 1 / >=2 ULP",
                    " / ".join(fmt_num(v, "pct") for v in (share.zero, share.one, share.two_or_more)),
                ),
                ("worst at index", str(u.argmax)),
            ],
        )
    )
    err_rows = []
    for b, label in ((e.abs, "absolute"), (e.rel, f"relative, {REL_TO_B}")):
        err_rows.append((f"{label} max / mean", f"{fmt_num(b.max, 'e')} / {fmt_num(b.mean, 'e')}"))
        err_rows.append((f"{label} P50 / P99", f"{fmt_num(b.p50, 'e')} / {fmt_num(b.p99, 'e')}"))
    if e.rel.excluded:
        err_rows.append((f"  left out of {REL_TO_B}", f"{fmt_num(e.rel.excluded)} with |B| below normal"))
    err_rows += [
        ("RMSE", fmt_num(m.rmse, "e")),
        ("relative Euclidean distance", fmt_num(m.red, "e")),
        ("mean relative (msaccucmp)", fmt_num(m.mean_rel, "e")),
        ("accumulated relative (msaccucmp)", fmt_num(m.accumulated_rel, "e")),
        ("KL divergence", fmt_num(None if m.kl is msgspec.UNSET else m.kl, "e")),
        ("mean / std of A", f"{fmt_num(m.mean_x)} / {fmt_num(m.std_x)}"),
        ("mean / std of B", f"{fmt_num(m.mean_y)} / {fmt_num(m.std_y)}"),
        (
            "rel. error < 0.1% / < 0.5% (msprobe)",
            f"{fmt_num(m.one_thousandth, 'pct')} / {fmt_num(m.five_thousandth, 'pct')}",
        ),
    ]
    parts.append(_kv_table("Errors (elements finite on both sides)", err_rows))
    n = e.count
    bit_eq = e.bit_equal
    parts.append(
        _kv_table(
            "Special values",
            [
                ("elements / finite on both sides", f"{fmt_num(n)} / {fmt_num(e.finite)}"),
                (
                    "bit-identical",
                    "-" if bit_eq is None else f"{fmt_num(bit_eq)} ({fmt_num(bit_eq / n, 'pct')})",
                ),
                ("NaN on one side", fmt_num(e.nan_mismatch)),
                ("NaN on both sides", fmt_num(e.both_nan)),
                ("inf mismatch / same inf", f"{fmt_num(e.inf_mismatch)} / {fmt_num(e.both_inf)}"),
                ("+0 vs -0", fmt_num(e.signed_zero)),
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
