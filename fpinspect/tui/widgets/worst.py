"""The worst elements of a pair, as ``fpinspect diff`` lists them."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from ...reports.format import REL_TO_B, worst_row
from ...reports.format import WORST_COLUMNS as COLUMNS
from .footer import COMPACT_WIDTH

_RIGHT = {"A", "B", "abs", REL_TO_B, "ULP"}


class WorstTable(DataTable):
    DEFAULT_CSS = """
    WorstTable { height: auto; max-height: 13; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)

    def show(self, worst: list[dict]) -> None:
        # on a compact screen one space between columns instead of two: the bit patterns fit 80
        compact = self.app.size.width < COMPACT_WIDTH
        self.cell_padding = 0 if compact else 1
        gap = " " if compact else ""
        rows = [[gap + v for v in worst_row(e)] for e in worst]
        titles = [gap + col for col in COLUMNS]
        self.clear(columns=True)
        # fixed widths, measured here: the table is filled once
        for i, (col, title) in enumerate(zip(COLUMNS, titles)):
            label = Text(title, justify="right") if col in _RIGHT else title
            self.add_column(label, width=max([len(title), *(len(r[i]) for r in rows)]), key=col)
        self.add_rows(
            [Text(v, justify="right") if col in _RIGHT else v for col, v in zip(COLUMNS, r)] for r in rows
        )
