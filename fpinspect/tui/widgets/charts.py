"""Charts of experiment runs: a report's histograms (the drill-down's log-scale bars) and
line charts that grow point by point (loss curves, CDFs)."""

from __future__ import annotations

import math
import re

from rich.segment import Segment
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ...experiments.results import Histogram
from .histogram import LogBars, compact

_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e-?\d+)?")  # bins are non-negative: "4-7" is 4 to 7


def bin_kind(label: str) -> str:
    """The colour class of a ULP bin from its label: ``exact`` for 0, ``near`` for bins that
    end at or below one ULP, ``off`` for the rest (and NaN)."""
    if label.strip().startswith(">") or "nan" in label.lower():
        return "off"
    numbers = _NUMBER.findall(label)
    if not numbers:
        return "near"
    upper = float(numbers[-1])
    return "exact" if upper == 0 else "near" if upper <= 1 else "off"


class TaskHistogram(LogBars):
    """One :class:`~fpinspect.experiments.results.Histogram`, partial or final."""

    MAX_BAR = 8
    histogram: reactive[Histogram | None] = reactive(None)

    def bar_counts(self) -> list[float] | None:
        return None if self.histogram is None else [float(c) for c in self.histogram.counts]

    def bar_label(self, i: int) -> str:
        return self.histogram.bins[i]

    def bar_kind(self, i: int) -> str:
        if "ulp" not in self.histogram.xlabel.lower():
            return "near"
        return bin_kind(self.histogram.bins[i])

    def unit(self) -> str:
        return f"  {self.histogram.xlabel}"


#: Marks of successive series, each also in its own colour.
MARKS = "•×+o"


class LineChart(Widget):
    """Lines ``label -> (xs, ys)`` on shared axes, one mark and colour per line, with the
    y range on the left and the x range below."""

    COMPONENT_CLASSES = {
        "line-chart--axis",
        "line-chart--s0",
        "line-chart--s1",
        "line-chart--s2",
        "line-chart--s3",
    }
    DEFAULT_CSS = """
    LineChart {
        height: 1fr;
        min-height: 7;
        padding: 0 1;
        & > .line-chart--axis { color: $foreground-muted; }
        & > .line-chart--s0 { color: $text-accent; }
        & > .line-chart--s1 { color: $text-warning; }
        & > .line-chart--s2 { color: $text-success; }
        & > .line-chart--s3 { color: $text-error; }
    }
    """

    lines: reactive[dict[str, tuple[tuple[float, ...], tuple[float, ...]]]] = reactive(
        dict, always_update=True
    )
    xlabel: reactive[str] = reactive("")
    #: Logarithmic x axis (positive x only; others are left out).
    xlog: reactive[bool] = reactive(False)

    def _x(self, x: float) -> float:
        return (math.log10(x) if x > 0 else math.nan) if self.xlog else x

    def _grid(self, width: int, rows: int) -> tuple[dict[tuple[int, int], int], float, float, float, float]:
        points = [
            (self._x(x), y)
            for xs, ys in self.lines.values()
            for x, y in zip(xs, ys)
            if math.isfinite(self._x(x)) and math.isfinite(y)
        ]
        if not points:
            return {}, 0.0, 1.0, 0.0, 1.0
        x0, x1 = min(p[0] for p in points), max(p[0] for p in points)
        y0, y1 = min(p[1] for p in points), max(p[1] for p in points)
        if x1 == x0:
            x1 = x0 + 1
        if y1 == y0:
            y1 = y0 + 1
        cells: dict[tuple[int, int], int] = {}
        for s, (xs, ys) in enumerate(self.lines.values()):
            for x, y in zip(map(self._x, xs), ys):
                if math.isfinite(x) and math.isfinite(y):
                    col = round((x - x0) / (x1 - x0) * (width - 1))
                    row = rows - 1 - round((y - y0) / (y1 - y0) * (rows - 1))
                    cells.setdefault((row, col), s)
        return cells, x0, x1, y0, y1

    def render_line(self, y: int) -> Strip:
        width, height = self.content_size.width, self.content_size.height
        base = self.rich_style
        axis = self.get_component_rich_style("line-chart--axis")
        rows = max(1, height - 3)
        label_w = 8
        plot_w = max(1, width - label_w - 2)
        cells, x0, x1, y0, y1 = self._grid(plot_w, rows)
        if y < rows:
            label = compact(y1) if y == 0 else compact(y0) if y == rows - 1 else ""
            if y1 < 100 and y in (0, rows - 1):
                label = f"{y1 if y == 0 else y0:.4g}"
            segments = [Segment(label.rjust(label_w) + " ┤", axis)]
            for col in range(plot_w):
                s = cells.get((y, col))
                segments.append(
                    Segment(" ")
                    if s is None
                    else Segment(
                        MARKS[s % len(MARKS)], self.get_component_rich_style(f"line-chart--s{s % 4}")
                    )
                )
            return Strip(segments).crop_extend(0, width, base)
        if y == rows:
            return Strip([Segment(" " * label_w + " └" + "─" * plot_w, axis)]).crop_extend(0, width, base)
        if y == rows + 1:
            left, right = (f"{10**x0:.4g}", f"{10**x1:.4g}") if self.xlog else (f"{x0:.4g}", f"{x1:.4g}")
            line = " " * (label_w + 2) + left + right.rjust(max(0, plot_w - len(left))) + f"  {self.xlabel}"
            return Strip([Segment(line, axis)]).crop_extend(0, width, base)
        if y == rows + 2:
            segments = [Segment(" " * (label_w + 2))]
            for s, label in enumerate(self.lines):
                segments.append(
                    Segment(
                        f"{MARKS[s % len(MARKS)]} {label}   ",
                        self.get_component_rich_style(f"line-chart--s{s % 4}"),
                    )
                )
            return Strip(segments).crop_extend(0, width, base)
        return Strip.blank(width, base)
