"""``w``: every warning about the run's inputs, as ``fpinspect compare`` reports them under
``sources.warnings`` (graph oddities that were tolerated; folders, files and mapping rows the
dump folders ignored)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets import styled


class WarningsScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,w", "dismiss", "Close", id="warnings.close")]

    def __init__(self, name: str, warnings: list[str]) -> None:
        super().__init__()
        self.run_name = name
        self.warnings = warnings

    def compose(self) -> ComposeResult:
        n = len(self.warnings)
        head = Content.styled(
            f"{n} warning{'s' if n != 1 else ''} about the inputs of {self.run_name}", "bold"
        )
        with VerticalScroll(id="warnings-body"):
            yield Static(head)
            yield Static(
                Content("\n").join(Content.assemble(("• ", "$text-warning"), w) for w in self.warnings),
                id="warnings-list",
            )
            yield Static(Content.styled("escape: close", styled.MUTED))
