"""Terminal rendering of comparison results (rich): consoles, progress bars, the compare table.
The pieces the inspector shares live in :mod:`fpinspect.reports`. No numeric logic lives here."""

from __future__ import annotations

import sys

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..dumps.engine import outcomes
from ..dumps.engine.outcomes import VERDICTS
from ..reports.format import fmt_num, printable, short_name, status_text


class _Console(Console):
    """rich's console, but a closed pipe is left to the command (one sentence and status 2,
    :func:`~fpinspect.cli.output.stdout_closed`), where rich would exit 1 without a word."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def console(stderr: bool = False) -> Console:
    # Pipes and files get 120 columns rather than rich's 80, so tables are not cut.
    return _Console(stderr=stderr, highlight=False, width=None if sys.stdout.isatty() else 120)


def plain_console(file) -> Console:
    """A console writing a report to ``file``, 120 columns wide."""
    return _Console(file=file, width=120, highlight=False)


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


#: The palette's tones as rich's colours.
_RICH: dict[outcomes.Tone, str] = {"success": "green", "warning": "yellow", "error": "red", "muted": "dim"}
VERDICT_STYLE = {v: outcomes.styled(v, _RICH) for v in (*VERDICTS, None)}


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
        ("status", 13, "left"),
    ):
        t.add_column(col, no_wrap=True, overflow="ellipsis", width=width, justify=justify)
    loc = report.localisation.by_name
    for rec in report.records:
        p, r = rec.plan, rec.result
        u = r.metrics.errors.ulp.max if r and r.compared else None
        finding = loc.get(p.fused_op)
        cause = (
            finding.role if rec.verdict == "fail" and p.kind == "output" and finding and finding.role else ""
        )
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
            Text(cause.replace("_", " "), style=outcomes.styled(cause, _RICH) if cause else ""),
            status_text(rec.status),
            style="on #3a0000" if rec.verdict == "fail" else None,
        )
    s = report.summary()
    v = s.verdicts
    line = Text()
    types = printable(", ".join(f"{t} {n}" for t, n in s.compared_types.items()))
    unfused = f" and {s.unfused_ops} unfused ops" if s.unfused_ops else ""
    line.append(f"{s.records} records of {s.fused_ops} fused ops{f' ({types})' if types else ''}{unfused}: ")
    line.append_text(Text(", ").join(Text(f"{v[k]} {k}", style=VERDICT_STYLE[k]) for k in VERDICTS))
    line.append(f", {v['none']} not compared")
    for key, ops in (("introduced", s.introduced), ("more_accurate", s.more_accurate)):
        if ops:
            names = f"{', '.join(ops[:3])}{' …' if len(ops) > 3 else ''}"
            line.append(f" · {key.replace('_', ' ')}: {printable(names)}", style=outcomes.styled(key, _RICH))
    on, off = (".", ".") if s.iteration is None else (s.iteration.fusion_on, s.iteration.fusion_off)
    read = Text(
        "dumps read from the dump folders themselves"
        if on == off == "."
        else f"iteration: fusion-on {'its dump folder itself' if on == '.' else on}, "
        f"fusion-off {'its dump folder itself' if off == '.' else off}",
        style="dim",
    )
    nothing = not s.compared
    look_first = Text(printable(s.look_first), style="bold" if s.introduced or nothing else "")
    return Group(t, line, read, look_first)
