"""Text whose wrapped lines keep their indent: a card's line that wraps goes on under its own
first word, not at the card's left edge (Textual wraps a line to column 0)."""

from __future__ import annotations

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions

#: Columns a wrapped line keeps for its text at least: past that, it wraps at the left edge.
_ROOM = 12


class Hanging(Content):
    """A :class:`~textual.content.Content` shown with hanging indents: each line that wraps
    continues at the column where its text began (after its leading spaces)."""

    @classmethod
    def of(cls, content: Content) -> Hanging:
        return cls(content.plain, list(content.spans), content.cell_length)

    def _hung(self, width: int) -> Content:
        """The lines wrapped at ``width``, each continuation indented as its line."""
        cached = getattr(self, "_hung_cache", None)
        if cached is not None and cached[0] == width:
            return cached[1]
        lines = []
        for line in self.split(allow_blank=True):
            text = line.plain
            indent = len(text) - len(text.lstrip(" "))
            if line.cell_length <= width or indent == 0 or width - indent < _ROOM:
                lines.append(line)
                continue
            lines += [line[:indent] + piece for piece in line[indent:].wrap(width - indent)]
        hung = Content("\n").join(lines)
        self._hung_cache = (width, hung)
        return hung

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        if not width:
            return []
        return self._hung(width).render_strips(width, height, style, options)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self._hung(width).get_height(rules, width)
