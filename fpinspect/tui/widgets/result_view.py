"""A finished run, or any ``result.json``: the plan's expectations against the measurement,
the task's tables and histograms, and where its files are. A failed run shows its failure
kind and the last lines of its log instead."""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.table import Table as RichTable
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ...experiments.output import agreement, dtypes_of, format_cell
from ...experiments.results import TaskReport
from ...experiments.runs import shown_path, verdict_summary
from . import styled
from .charts import LineChart, TaskHistogram
from .long_table import LongTable

#: Tables longer than this scroll in a box of their own, drawn row by row as they come into view.
LONG_TABLE = 50

_TONE = {"agrees": "bold $text-success", "disagrees": "bold $text-error", "cannot tell": "bold $text-warning"}


def verdict_table(report: TaskReport) -> RichTable:
    table = RichTable("topic", "expectation", "measured", "agrees", box=box.SIMPLE_HEAD, expand=True)
    for v in report.verdicts:
        style = {True: "green", False: "red", None: "yellow"}[v.agrees]
        table.add_row(v.topic, v.expectation, v.measured, f"[{style}]{agreement(v.agrees)}[/]")
    return table


def report_table(t) -> RichTable:
    table = RichTable(*t.columns, box=box.SIMPLE_HEAD)
    for row in t.rows:
        table.add_row(*(format_cell(c) for c in row))
    return table


class ResultView(VerticalScroll):
    DEFAULT_CSS = """
    ResultView {
        padding: 0 1;
        .result-head { height: auto; margin-bottom: 1; }
        .result-title { height: auto; margin-top: 1; }
        .result-table { height: auto; }
        TaskHistogram, LineChart { height: 12; border: round $panel-lighten-2; border-title-color: $foreground-muted; }
        .result-files { height: auto; margin-top: 1; }
        .failure-log { height: auto; border: round $error; padding: 0 1; }
    }
    """

    def __init__(
        self,
        report: TaskReport | None = None,
        *,
        source: Path | None = None,
        written: list[Path] | None = None,
        failure: tuple[str, str, str] | None = None,
        label: str = "",
        **kwargs,
    ) -> None:
        """``source``: the result.json (or run folder) shown; ``written``: files of a run
        just finished; ``failure``: ``(kind, message, log tail)`` of a failed run."""
        super().__init__(**kwargs)
        self.report, self.source, self.written, self.failure, self.label = (
            report,
            source,
            written,
            failure,
            label,
        )

    def compose(self) -> ComposeResult:
        if self.failure is not None:
            kind, message, tail = self.failure
            yield Static(
                Content.assemble((f"{self.label} failed", "bold $text-error"), f" ({kind}): {message}"),
                classes="result-head",
            )
            yield Static(Content.styled("Last lines of the child's log:", styled.MUTED))
            yield Static(Content(tail or "(the log is empty)"), classes="failure-log")
            if self.source is not None:
                yield Static(
                    Content.styled(f"Run folder: {shown_path(self.source)}", styled.MUTED),
                    classes="result-files",
                )
            return
        r = self.report
        env = r.environment
        verdict = verdict_summary(r)
        yield Static(
            Content.assemble(
                (f"{r.task} — {r.title}", "bold"),
                "   ",
                (verdict, _TONE[verdict]),
                Content.styled(f"\nClaim {r.claim}", styled.MUTED),
                Content.styled(
                    f"\n{r.device} ({env.get('device_name', '?')}), torch {env.get('torch', '?')}, "
                    f"{dtypes_of(r.settings)}, seed {r.settings.get('seed')}, profile {r.profile}",
                    styled.MUTED,
                ),
            ),
            classes="result-head",
        )
        yield Static(Content.styled("Expectation and measurement", "bold"), classes="result-title")
        yield Static(verdict_table(r), classes="result-table")
        for t in sorted(r.tables, key=lambda t: not t.summary):
            yield Static(Content.styled(t.title, "bold"), classes="result-title")
            if len(t.rows) > LONG_TABLE:
                yield LongTable(t.columns, t.rows)
            else:
                yield Static(report_table(t), classes="result-table")
        for h in r.histograms:
            plot = TaskHistogram()
            plot.histogram = h
            plot.border_title = h.title
            yield plot
        for c in getattr(r, "curves", None) or []:
            chart = LineChart()
            chart.lines = {s.label: (tuple(s.x), tuple(s.y)) for s in c.series}
            chart.xlabel = c.xlabel
            chart.xlog = getattr(c, "xscale", "linear") == "log"
            chart.border_title = c.title
            yield chart
        yield Static(Content.styled(self._files(), styled.MUTED), classes="result-files")

    def _files(self) -> str:
        if self.written:
            folder = self.written[0].parent
            names = ", ".join(str(p.relative_to(folder)) for p in self.written)
            return f"Written to {shown_path(folder)}: {names}"
        if self.source is not None:
            return f"Read from {shown_path(self.source)}"
        return ""
