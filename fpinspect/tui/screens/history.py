"""``h`` in the Tasks pane: every kept run under the results directory, newest first;
``enter`` opens one in the result view, ``o`` any result.json by path."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from ...experiments.runs import KeptRun, RunStore, shown_path
from ..widgets import styled
from ..widgets.footer import KeysFooter
from ..widgets.live_run import clock_text


def started_text(run: KeptRun) -> str:
    """``20261201-074512-…`` -> ``2026-12-01 07:45:12``; the folder name otherwise."""
    stamp = run.folder.name[:15]
    if len(stamp) == 15 and stamp[8] == "-" and stamp.replace("-", "").isdigit():
        return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}"
    return run.folder.name


class HistoryScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="history.back"),
        Binding("o", "open_file", "Open result.json", id="history.open-file"),
    ]

    def __init__(self, store: RunStore) -> None:
        super().__init__()
        self.store = store
        self.runs: list[KeptRun] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="history-title")
        yield DataTable(cursor_type="row", id="history-table")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.runs = self.store.history()
        title = self.query_one("#history-title", Static)
        title.update(
            Content.assemble(
                ("Kept runs", "bold"),
                Content.styled(
                    f" in {shown_path(self.store.root)} · enter: open · o: open any result.json · escape: back",
                    styled.MUTED,
                ),
            )
        )
        table = self.query_one(DataTable)
        table.add_columns("started", "task", "device", "profile", "status", "verdict", "took", "folder")
        for run in self.runs:
            r = run.record
            table.add_row(
                started_text(run),
                r.task,
                r.device,
                r.profile,
                r.status,
                r.verdict or "-",
                clock_text(r.seconds),
                run.folder.name,
            )
        if not self.runs:
            title.update(
                Content.assemble(
                    ("No kept runs yet", "bold"),
                    Content.styled(f" in {shown_path(self.store.root)}.", styled.MUTED),
                )
            )
        table.focus()

    @on(DataTable.RowSelected, "#history-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        self.open_kept(self.runs[event.cursor_row])

    def open_kept(self, run: KeptRun) -> None:
        from .open_result import open_kept_run

        open_kept_run(self.app, run)

    def action_open_file(self) -> None:
        from .open_result import pick_result

        pick_result(self.app, self.store.root)
