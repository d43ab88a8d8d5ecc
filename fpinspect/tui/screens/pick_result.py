"""``o``: choose a ``result.json`` (any, also one copied from another machine) from a folder
tree or by typing a path."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Static

from ..widgets import styled


class JsonTree(DirectoryTree):
    """Folders and ``.json`` files only (hidden entries left out)."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [p for p in paths if not p.name.startswith(".") and (p.is_dir() or p.suffix == ".json")]


class PickResultScreen(ModalScreen[Path | None]):
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Cancel", id="pick-result.cancel"),
        Binding("backspace", "up", "Parent folder", id="pick-result.parent"),
    ]

    def __init__(self, start: Path) -> None:
        super().__init__()
        self.start = start if start.is_dir() else Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(
                Content.assemble(
                    ("Open a result.json", "bold"),
                    Content.styled(
                        "\nenter opens a folder or picks a file · backspace: parent folder · tab: type a path · "
                        "escape: cancel",
                        styled.MUTED,
                    ),
                ),
                id="picker-title",
            )
            yield JsonTree(str(self.start), id="picker-tree")
            yield Input(
                placeholder="or type a path to a result.json (or its run folder) and press enter",
                id="picker-path",
            )

    def action_up(self) -> None:
        tree = self.query_one(JsonTree)
        tree.path = Path(tree.path).resolve().parent

    @on(DirectoryTree.FileSelected)
    def _file(self, event: DirectoryTree.FileSelected) -> None:
        self.dismiss(Path(event.path))

    @on(Input.Submitted, "#picker-path")
    def _typed(self, event: Input.Submitted) -> None:
        typed = Path(event.value.strip()).expanduser()
        if event.value.strip():
            self.dismiss(typed if typed.is_absolute() else self.start / typed)
