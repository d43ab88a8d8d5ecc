"""A Static shown anew in place (:func:`~fpinspect.tui.widgets.in_place.update_in_place`): the
screen is laid out again only when the widget's height changes, and the new text shows either way."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from fpinspect.tui.widgets.in_place import update_in_place


class _Two(App):
    def compose(self):
        yield Static(Content("one\ntwo"), id="top")
        yield Static(Content("below"), id="below")


def _text(widget: Static) -> list[str]:
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


def test_new_text_of_the_same_height_shows_without_a_layout_and_a_taller_one_lays_out(monkeypatch):
    layouts = [0]
    laid_out = Screen._refresh_layout

    def counted(self, *args, **kwargs):
        layouts[0] += 1
        return laid_out(self, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", counted)

    async def main() -> None:
        app = _Two()
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            top, below = app.query_one("#top", Static), app.query_one("#below", Static)
            assert _text(top) == ["one", "two"] and below.region.y == 2

            before = layouts[0]
            update_in_place(top, Content("uno\ndos"))
            await pilot.pause()
            assert _text(top) == ["uno", "dos"]
            assert layouts[0] == before, "the same height laid the screen out again"

            update_in_place(top, Content("a\nb\nc"))
            await pilot.pause()
            assert layouts[0] > before
            assert _text(top) == ["a", "b", "c"] and below.region.y == 3  # what follows moved down

            update_in_place(top, Content("x"))  # shorter: laid out too
            await pilot.pause()
            assert _text(top) == ["x"] and below.region.y == 1

    asyncio.run(main())
