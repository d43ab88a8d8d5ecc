"""The fused-op list: a line-API view that renders only the rows on screen, so a graph with
tens of thousands of fused ops lists, filters and re-sorts instantly."""

from __future__ import annotations

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...dumps.engine.verdict import format_score
from ...reports.format import short_name
from ..model import OpRow

#: (key, title, width, right-aligned); ``None`` width: the flexible name column.
_COLUMNS = (
    ("position", "#", 0, True),
    ("name", "fused op", None, False),
    ("type", "type", 0, False),
    ("originals", "orig", 4, True),
    ("verdict", "verdict", 7, False),
    ("worst", "worst", 12, True),
    ("role", "cause", 13, False),
)
#: Columns dropped, in this order, while the name column would be narrower than this.
_MIN_NAME = 18
_OPTIONAL = ("role", "type")


def _fit(text: str, width: int, right: bool) -> str:
    if len(text) > width:
        text = text[: max(0, width - 1)] + "…"
    return text.rjust(width) if right else text.ljust(width)


class OpList(ScrollView, can_focus=True):
    """Rows of :class:`~fpinspect.tui.model.OpRow`, shown in a given order, with a cursor."""

    COMPONENT_CLASSES = {
        "op-list--header",
        "op-list--cursor",
        "op-list--pass",
        "op-list--warn",
        "op-list--fail",
        "op-list--muted",
        "op-list--introduced",
    }

    DEFAULT_CSS = """
    OpList {
        overflow-x: hidden;
        background: $surface;
        & > .op-list--header { background: $panel; color: $foreground; text-style: bold; }
        & > .op-list--cursor { background: $block-cursor-blurred-background; }
        &:focus > .op-list--cursor { background: $block-cursor-background; text-style: bold; }
        & > .op-list--pass { color: $text-success; }
        & > .op-list--warn { color: $text-warning; }
        & > .op-list--fail { color: $text-error; text-style: bold; }
        & > .op-list--muted { color: $foreground-muted; }
        & > .op-list--introduced { color: $text-error; text-style: bold reverse; }
    }
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="list.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="list.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="list.page-up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="list.page-down"),
        Binding("home,g", "jump(0)", "First", show=False, id="list.first"),
        Binding("end,G", "jump(-1)", "Last", show=False, id="list.last"),
        Binding(
            "enter", "choose", "Drill down", tooltip="Open the highlighted pair of this op", id="drill-down"
        ),
        Binding("right_square_bracket", "step_pair(1)", "Next pair", show=False, id="list.next-pair"),
        Binding("left_square_bracket", "step_pair(-1)", "Prev pair", show=False, id="list.previous-pair"),
    ]

    #: always_update: a new set of rows re-announces the highlighted op even at the same index;
    #: no repaint of its own: :meth:`watch_cursor` repaints the two lines the cursor leaves and enters
    cursor: reactive[int] = reactive(0, init=False, always_update=True, repaint=False)

    class Highlighted(Message):
        def __init__(self, name: str | None) -> None:
            super().__init__()
            self.name = name

    class Chosen(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    class PairStepped(Message):
        """``[`` / ``]``: highlight another pair of the op (the one ``enter`` opens)."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._rows: list[OpRow] = []
        self._order: list[int] = []
        self._positions: dict[str, int] | None = None  # op name -> row position, built on first use
        self._type_width = 4
        self._number_width = 1
        self._drawn_cursor = 0  # the list index the cursor line was last drawn at

    # -- data ---------------------------------------------------------------------------
    @property
    def current(self) -> OpRow | None:
        return self._rows[self._order[self.cursor]] if self._order else None

    @property
    def on_last(self) -> bool:
        """Whether the cursor is on the last listed op."""
        return bool(self._order) and self.cursor == len(self._order) - 1

    @property
    def shown(self) -> list[str]:
        """Names of the listed ops, in list order."""
        return [self._rows[i].name for i in self._order]

    def set_rows(self, rows: list[OpRow], order: list[int], keep: str | None = None) -> None:
        """Show ``rows[i] for i in order`` (``rows[i].position == i``); the cursor stays on op
        ``keep`` if it is listed."""
        if rows is not self._rows:  # a new list: what depends on every row is worked out once
            self._type_width = min(16, max((len(r.op.type) for r in rows), default=4))
            self._number_width = len(str(len(rows)))
            self._positions = None
        self._rows, self._order = rows, order
        self.virtual_size = Size(0, len(order) + 1)
        self.refresh()  # every row on screen may have changed (the cursor's move repaints two only)
        self.cursor = self._index(keep) or 0

    def _index(self, name: str | None) -> int | None:
        """Where op ``name`` is listed (``None``: it is not)."""
        if name is None:
            return None
        if self._positions is None:
            self._positions = {r.name: r.position for r in self._rows}
        try:
            return self._order.index(self._positions[name])
        except (KeyError, ValueError):
            return None

    def move_to(self, name: str) -> bool:
        """Put the cursor on op ``name``; False if it is not listed."""
        index = self._index(name)
        if index is None:
            return False
        self.cursor = index
        return True

    def refresh_rows(self, positions: set[int]) -> None:
        """Repaint the rows of these positions that are on screen."""
        top = int(self.scroll_y)
        for i, pos in enumerate(self._order[top : top + self.size.height]):
            if pos in positions:
                self._refresh_index(top + i)

    def _refresh_index(self, index: int) -> None:
        """Repaint the line of list index ``index`` if it is on screen (below the header line)."""
        y = index - int(self.scroll_y) + 1
        if 0 < y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    # -- cursor -------------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self._order) - 1))

    def watch_cursor(self) -> None:
        top = int(self.scroll_y)
        self._follow()
        if int(self.scroll_y) == top:  # the same rows on screen: only the cursor's two lines change
            self._refresh_index(self._drawn_cursor)
            self._refresh_index(self.cursor)
        else:
            self.refresh()
        self._drawn_cursor = self.cursor
        self.post_message(self.Highlighted(self.current.name if self.current else None))

    def _follow(self) -> None:
        """Scroll so that the cursor row is visible below the header line."""
        visible = max(1, self.scrollable_content_region.height - 1)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False, immediate=True)

    def action_cursor(self, step: int) -> None:
        self.cursor += step

    def action_page(self, direction: int) -> None:
        self.cursor += direction * max(1, self.scrollable_content_region.height - 2)

    def action_jump(self, index: int) -> None:
        self.cursor = index if index >= 0 else len(self._order) - 1

    def action_choose(self) -> None:
        if self.current is not None:
            self.post_message(self.Chosen(self.current.name))

    def action_step_pair(self, step: int) -> None:
        self.post_message(self.PairStepped(step))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        index = int(self.scroll_y) + offset.y - 1
        if index >= len(self._order):
            return
        if index == self.cursor:
            self.action_choose()
        self.cursor = index

    def on_resize(self) -> None:
        self._follow()

    # -- rendering ----------------------------------------------------------------------
    def _columns(self, width: int) -> list[tuple[str, str, int, bool]]:
        """The columns that fit ``width``, the name column taking what is left."""
        fixed = {"position": self._number_width, "type": self._type_width}
        cols = [(k, t, fixed.get(k, w) if w is not None else None, r) for k, t, w, r in _COLUMNS]
        for drop in (None, *_OPTIONAL):
            cols = [c for c in cols if c[0] != drop]
            # a space before the first column and after the last: no text touches a border
            rest = width - 2 - sum(w + 1 for _, _, w, _ in cols if w is not None)
            if rest >= _MIN_NAME:
                break
        return [(k, t, w if w is not None else max(4, rest), r) for k, t, w, r in cols]

    def _cells(self, row: OpRow, key: str, width: int) -> tuple[str, str | None]:
        """Text of one cell and the component class that colours it."""
        if key == "position":
            return str(row.position + 1), "op-list--muted"
        if key == "name":
            return short_name(row.name, width), None
        if key == "type":
            return row.op.type, "op-list--muted"
        if key == "originals":
            return str(len(row.op.original_op_names)), None
        if key == "verdict":
            return row.verdict or "-", f"op-list--{row.verdict}" if row.verdict else "op-list--muted"
        if key == "worst":
            return format_score(row.score), None if row.score is not None else "op-list--muted"
        style = {
            "introduced": "op-list--introduced",
            "unverified": "op-list--warn",
            "more_accurate": "op-list--pass",
        }.get(row.role or "")
        return (row.role or "").replace("_", " "), style or "op-list--muted"

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        cols = self._columns(width)
        if y == 0:
            style = base + self.get_component_rich_style("op-list--header")
            text = " " + " ".join(_fit(t, w, r) for _, t, w, r in cols)
            return Strip([Segment(text, style)]).crop_extend(0, width, style)
        index = int(self.scroll_y) + y - 1
        if index >= len(self._order):
            return Strip.blank(width, base)
        row = self._rows[self._order[index]]
        line = (
            base + self.get_component_rich_style("op-list--cursor", partial=True)
            if index == self.cursor
            else base
        )
        segments = [Segment(" ", line)]
        for i, (key, _, w, right) in enumerate(cols):
            if i:
                segments.append(Segment(" ", line))
            text, component = self._cells(row, key, w)
            style = line + self.get_component_rich_style(component, partial=True) if component else line
            segments.append(Segment(_fit(text, w, right), style))
        return Strip(segments).crop_extend(0, width, line)
