"""A result table too long to lay out whole (open-result of 150 000 rows): only the rows in view
are formatted and drawn, as the op list draws its ops."""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...experiments.output import format_cell

#: Rows measured for the column widths, at each end of the table (where indices are shortest
#: and longest); a longer cell between them is cut with "…".
_MEASURED = 100


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class LongTable(ScrollView, can_focus=True):
    """``rows`` under a header that stays in view, scrolled with the arrow and page keys."""

    COMPONENT_CLASSES = {"long-table--header"}

    DEFAULT_CSS = """
    LongTable {
        height: 20;
        background: $surface;
        & > .long-table--header { background: $panel; text-style: bold; }
    }
    """

    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence], **kwargs) -> None:
        super().__init__(**kwargs)
        self.columns = list(columns)
        self.rows = rows
        ends = [*rows[:_MEASURED], *rows[_MEASURED:][-_MEASURED:]]
        measured = [[format_cell(c) for c in row] for row in ends]
        self.widths = [
            max([len(title), *(len(row[i]) for row in measured if i < len(row))])
            for i, title in enumerate(self.columns)
        ]
        self.virtual_size = Size(sum(self.widths) + 2 * len(self.widths), len(rows) + 1)

    def _line(self, cells: Sequence[str]) -> str:
        return " " + "  ".join(_fit(c, w).ljust(w) for c, w in zip(cells, self.widths, strict=False))

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        scroll_x, scroll_y = self.scroll_offset
        if y == 0:
            style = self.rich_style + self.get_component_rich_style("long-table--header")
            text = self._line(self.columns)
        else:
            style = self.rich_style
            index = scroll_y + y - 1
            if index >= len(self.rows):
                return Strip.blank(width, style)
            text = self._line([format_cell(c) for c in self.rows[index]])
        return Strip([Segment(text, style)]).crop_extend(scroll_x, scroll_x + width, style)
