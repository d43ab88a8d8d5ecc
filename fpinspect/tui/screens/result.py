"""A run's result (or any result.json, or a failed run's record) on its own screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header

from ..widgets.footer import KeysFooter
from ..widgets.result_view import ResultView


class ResultScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="result.back")]

    def __init__(self, view: ResultView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.view
        yield KeysFooter()

    def on_mount(self) -> None:
        self.view.focus()
