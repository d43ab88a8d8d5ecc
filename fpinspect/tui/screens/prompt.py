"""A one-line question in a modal: a path to export to, a baseline's name."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class PathPrompt(ModalScreen[str | None]):
    """Asks for a path or a name (prefilled); dismisses with it, or None on escape."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="prompt.cancel")]

    def __init__(self, question: str, default: str) -> None:
        super().__init__()
        self.question, self.default = question, default

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Label(self.question)
            yield Input(self.default, id="prompt-input")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())
