"""``b`` in the Tasks pane: the check of a task's newest recorded run against its baseline."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown


class BaselineCheckScreen(Screen):
    """The check's Markdown report (``fpinspect baseline check`` prints the same)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="baseline-check.back")]

    def __init__(self, report: str) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Markdown(self.report, id="baseline-check")
        yield Footer()
