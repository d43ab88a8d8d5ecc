"""A yes/no question in a modal (cancelling a run)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets import styled


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True on ``y`` / ``enter``, False on ``n`` / ``escape``."""

    BINDINGS = [
        Binding("y,enter", "dismiss(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "dismiss(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(
                Content.assemble(
                    (self.question, "bold"), Content.styled("\ny: yes · n / escape: no", styled.MUTED)
                )
            )
