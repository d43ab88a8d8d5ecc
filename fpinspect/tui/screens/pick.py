"""``d``: choose two ``.npy`` files, A (under test) then B (the reference), from a folder
tree or by typing a path. Raw device dumps are listed too, with what makes ``.npy`` files of them."""

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

from ...dumps.errors import InputError
from ...dumps.formats.datadump import read_mapping, resolve_raw_name
from ..widgets import styled


def _raw_dump(path: Path, mapping: dict[str, str]) -> bool:
    """Whether ``path`` is named as a raw device dump (its own name, or its original one in
    ``mapping``, the folder's ``mapping.csv``)."""
    return path.suffix != ".npy" and resolve_raw_name(path.name, mapping) is not None


def _mapping(folder: Path) -> dict[str, str]:
    try:
        return read_mapping(str(folder))
    except InputError:
        return {}


class NpyTree(DirectoryTree):
    """Folders, ``.npy`` files and raw device dumps (hidden entries left out): a folder of raw
    dumps does not look empty."""

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        mappings: dict[Path, dict[str, str]] = {}
        out = []
        for p in paths:
            if p.name.startswith("."):
                continue
            if p.is_dir() or p.suffix == ".npy":
                out.append(p)
            elif _raw_dump(p, mappings.setdefault(p.parent, _mapping(p.parent))):
                out.append(p)
        return out


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
        if path.is_file() and _raw_dump(path, _mapping(path.parent)):
            self.notify(
                f"{path.name} is a raw device dump, which holds every tensor of its op: "
                f"fpinspect convert {path.parent} OUT_DIR makes a .npy file of each; pick those.",
                severity="warning",
                timeout=10,
            )
            return
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
