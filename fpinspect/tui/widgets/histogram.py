"""A bar plot of ULP errors in log2 bins, counts on a log scale (counts span decades: most
elements are a few ULPs off, a handful are far off)."""

from __future__ import annotations

import math

from rich.segment import Segment
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from ...dumps.engine.drilldown import UlpBins

_EIGHTHS = " ▁▂▃▄▅▆▇█"


def compact(n: float) -> str:
    """``16127`` -> ``16k``, ``2**20`` -> ``1M``: short labels for axes."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            v = n / div
            return f"{v:.0f}{suffix}" if v >= 10 else f"{v:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{n:g}"


def bin_label(bins: UlpBins, i: int) -> str:
    """The lower edge of bin ``i``: ``<1`` for real-valued errors below one ULP, the power of
    two itself up to 65536, then ``2^k``."""
    if i == 1 and not bins.integer:
        return "<1"
    edge = bins.lower[i]
    return f"{edge:.0f}" if edge <= 65536 else f"2^{int(edge).bit_length() - 1}"


class LogBars(Widget):
    """Vertical bars with counts on a log scale, an axis and a label under each bar. Subclasses
    say what the bars are (:meth:`bar_counts`, :meth:`bar_label`, :meth:`bar_kind`: ``exact``,
    ``near`` or ``off``, each in its own colour) and what the axis counts (:meth:`unit`)."""

    COMPONENT_CLASSES = {
        "ulp-histogram--axis",
        "ulp-histogram--exact",
        "ulp-histogram--near",
        "ulp-histogram--off",
    }
    DEFAULT_CSS = """
    LogBars {
        height: 1fr;
        min-height: 7;
        padding: 0 1;
        & > .ulp-histogram--axis { color: $foreground-muted; }
        & > .ulp-histogram--exact { color: $text-success; }
        & > .ulp-histogram--near { color: $text-accent; }
        & > .ulp-histogram--off { color: $text-error; }
    }
    """
    #: Widest bar, in cells.
    MAX_BAR = 5

    note: reactive[str] = reactive("")

    # The three hooks every subclass defines (UlpHistogram, TaskHistogram); LogBars alone is
    # never mounted. (Not abc.abstractmethod: Widget's metaclass is not ABCMeta.)
    def bar_counts(self) -> list[float] | None:
        """The bars' heights, or None while there is nothing to draw."""
        raise NotImplementedError

    def bar_label(self, i: int) -> str:
        """The label under bar ``i``."""
        raise NotImplementedError

    def bar_kind(self, i: int) -> str:
        """``exact``, ``near`` or ``off``: bar ``i``'s colour."""
        raise NotImplementedError

    def unit(self) -> str:
        return ""

    def _labels(self, counts: list[float], label_w: int, bar: int, gap: int) -> str:
        """Each bin's label under its bar, skipped where the previous label is still running."""
        line, free = " " * (label_w + 2), 0
        for i in range(len(counts)):
            x, text = label_w + 2 + i * (bar + gap), self.bar_label(i)
            if x >= free:
                line = line.ljust(x) + text
                free = x + len(text) + 1
        return line

    def render_line(self, y: int) -> Strip:
        width, height = self.content_size.width, self.content_size.height
        base = self.rich_style
        axis = self.get_component_rich_style("ulp-histogram--axis")
        counts = self.bar_counts()
        if counts is None:
            return Strip([Segment(self.note if y == 0 else "", axis)]).crop_extend(0, width, base)
        top = int(max(counts)) if counts else 0
        label_w = max(len(compact(top)), 1)
        n = max(len(counts), 1)
        room = max(1, width - label_w - 2)
        bar = max(1, min(self.MAX_BAR, room // n - 1)) if room >= 2 * n else 1
        gap = 1 if room >= n * (bar + 1) else 0
        labels, unit = self._labels(counts, label_w, bar, gap), self.unit()
        # the unit follows the bins' labels; where that would cut it, it takes a line of its own
        own_line = len(labels) + len(unit) > width and height >= 5
        plot_rows = max(1, height - 2 - own_line)
        if y < plot_rows:
            level = plot_rows - y  # 1 at the bottom row
            label = compact(top) if y == 0 else ("0" if level == 1 else "")
            segments = [Segment(label.rjust(label_w) + " ┤", axis)]
            scale = math.log10(top + 1) if top else 1.0
            styles = {
                k: self.get_component_rich_style(f"ulp-histogram--{k}") for k in ("exact", "near", "off")
            }
            for i, c in enumerate(counts):
                eighths = round(math.log10(int(c) + 1) / scale * plot_rows * 8) if c else 0
                # any non-empty bin shows at least a sliver
                eighths = max(eighths, 1) if c else 0
                fill = min(8, max(0, eighths - (level - 1) * 8))
                segments.append(Segment(_EIGHTHS[fill] * bar, styles[self.bar_kind(i)]))
                segments.append(Segment(" " * gap, base))
            return Strip(segments).crop_extend(0, width, base)
        if y == plot_rows:
            rule = " " * label_w + " └" + "─" * (n * (bar + gap))
            return Strip([Segment(rule, axis)]).crop_extend(0, width, base)
        if y == plot_rows + 1:
            line = labels if own_line else labels + unit
            return Strip([Segment(line, axis)]).crop_extend(0, width, base)
        if y == plot_rows + 2 and own_line:
            return Strip([Segment(unit.strip().rjust(width), axis)]).crop_extend(0, width, base)
        return Strip.blank(width, base)


class UlpHistogram(LogBars):
    """Bars of :class:`~fpinspect.dumps.engine.drilldown.UlpBins`: exact matches, errors of up to
    one ULP and larger errors each in their own colour."""

    bins: reactive[UlpBins | None] = reactive(None)

    def bar_counts(self) -> list[float] | None:
        return None if self.bins is None else self.bins.counts.tolist()

    def bar_label(self, i: int) -> str:
        return bin_label(self.bins, i)

    def bar_kind(self, i: int) -> str:
        return "exact" if i == 0 else "near" if self.bins.lower[i] < 2 else "off"

    def unit(self) -> str:
        return " ULP" if self.bins.integer else " ULP (vs wider)"
