"""A radio button whose state reads without colour: ``●`` and a bold label when chosen,
``○`` when not (Textual's own draws ``●`` either way and tells them apart by colour alone)."""

from __future__ import annotations

from textual.widgets import RadioButton

#: The inner mark of a chosen and of an unchosen button.
CHOSEN, UNCHOSEN = "●", "○"


class Choice(RadioButton):
    DEFAULT_CSS = """
    Choice.-on > .toggle--label { text-style: bold; }
    """

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 (the name ToggleButton reads)
        return CHOSEN if self.value else UNCHOSEN
