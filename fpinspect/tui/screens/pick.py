"""``d``: choose two ``.npy`` files, A (under test) then B (the reference), from a folder
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


class NpyTree(DirectoryTree):
    """Folders and ``.npy`` files only (hidden entries left out)."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [p for p in paths if not p.name.startswith(".") and (p.is_dir() or p.suffix == ".npy")]


class PickFilesScreen(ModalScreen[tuple[str, str] | None]):
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Cancel", id="pick.cancel"),
        Binding("backspace", "up", "Parent folder", id="pick.parent"),
    ]

    def __init__(self, start: str) -> None:
        super().__init__()
        self.start = start
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(id="picker-title")
            yield NpyTree(self.start, id="picker-tree")
            yield Input(placeholder="or type a path to a .npy file and press enter", id="picker-path")

    def on_mount(self) -> None:
        self._prompt()

    def _prompt(self) -> None:
        which = "A, the file under test" if not self.chosen else "B, the reference"
        title = Content.assemble(
            ("Diff two .npy files: ", "bold"),
            f"choose {which}",
            (
                "\nenter opens a folder or picks a file · backspace: parent folder · "
                "tab: type a path · escape: cancel",
                styled.MUTED,
            ),
        )
        if self.chosen:
            title += Content.styled(f"\nA = {self.chosen[0]}", styled.MUTED)
        self.query_one("#picker-title", Static).update(title)

    def choose(self, path: Path) -> None:
        if path.suffix != ".npy" or not path.is_file():
            self.notify(f"{path} is not a .npy file.", severity="warning")
            return
        self.chosen.append(str(path))
        if len(self.chosen) == 2:
            self.dismiss((self.chosen[0], self.chosen[1]))
            return
        self.query_one("#picker-path", Input).clear()
        self._prompt()

    def action_up(self) -> None:
        tree = self.query_one(NpyTree)
        tree.path = Path(tree.path).resolve().parent

    @on(DirectoryTree.FileSelected)
    def _file(self, event: DirectoryTree.FileSelected) -> None:
        self.choose(event.path)

    @on(Input.Submitted, "#picker-path")
    def _typed(self, event: Input.Submitted) -> None:
        typed = Path(event.value.strip()).expanduser()
        self.choose(typed if typed.is_absolute() else Path(self.start) / typed)
