"""The overview of a whole run: ``fpinspect open`` on two dump trees of several leaves (ranks ×
graphs × steps, :mod:`fpinspect.dumps.runtree`). One row per compared leaf pair, filled in as a
worker compares the leaves one after the other (:func:`~fpinspect.replay.tree.compare_leaves`),
then one per leaf left out, with the reason. ``enter`` opens a compared leaf in the inspector's
main screen; ``escape`` or ``backspace`` there comes back."""

from __future__ import annotations

import os

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from ...dumps.errors import InputError
from ...dumps.runtree import Leaf, Scope, pair_trees, scan_tree
from ...dumps.sources import Sources
from ...dumps.verdict import worst_verdict
from ...replay.tree import GraphChooser, compare_leaves
from ..widgets import styled
from ..widgets.footer import KeysFooter
from .main import MainScreen, _between_items, _Cancelled

COMPARING = "comparing…"
_VERDICT_TONE = {"pass": "green", "warn": "yellow", "fail": "bold red"}


def run_scope(sources: Sources) -> Scope | None:
    """The leaf pairs of the data folders of ``sources`` where those are dump trees with more
    than one compared leaf pair; ``None`` otherwise (one leaf pair, a side missing, a folder that
    cannot be read), where the inspector opens the data folders as they are."""
    if not sources.complete:
        return None
    try:
        scope = pair_trees(scan_tree(sources.open_data), scan_tree(sources.close_data))
    except (InputError, ValueError):
        return None
    return scope if len(scope.compared) > 1 else None


def leaf_folder(leaf: Leaf) -> str:
    return os.path.normpath(os.path.join(leaf.folder, leaf.rel))


class LeafCompared(Message):
    """One leaf pair compared (``index`` in the scope's ``compared``): its worst verdict and the
    number of ops it introduces, and the graph files chosen for it; or why it was not compared."""

    def __init__(
        self,
        index: int,
        *,
        worst: str | None = None,
        introduced: int = 0,
        graphs: tuple[str, str] | None = None,
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.index, self.worst, self.introduced, self.graphs, self.error = (
            index,
            worst,
            introduced,
            graphs,
            error,
        )


class LeafScreen(MainScreen):
    """The main screen of one leaf opened from the overview: ``escape`` (once no filter is shown)
    and ``backspace`` go back to the overview."""

    BINDINGS = [
        Binding(
            "escape,backspace",
            "overview",
            "Overview",
            tooltip="Back to the run's overview (escape clears a filter first)",
            id="overview",
        )
    ]

    def action_overview(self) -> None:
        if self.query_one("#filter").has_class("-shown"):
            self.action_clear_filter()
        else:
            self.dismiss()


class RunsTable(DataTable):
    """The overview's table: ``enter`` opens the leaf pair of the row (its ``RowSelected``)."""

    BINDINGS = [
        Binding(
            "enter",
            "select_cursor",
            "Open leaf",
            tooltip="Open the leaf pair in the inspector",
            id="open-leaf",
        )
    ]


class RunsScreen(Screen):
    def __init__(
        self,
        sources: Sources,
        scope: Scope,
        *,
        fused_types: list[str] | None = None,
        compare_unfused: bool = False,
    ) -> None:
        super().__init__()
        self.sources, self.scope = sources, scope
        self.walk = {"fused_types": fused_types, "compare_unfused": compare_unfused}
        #: the graph files of each compared leaf pair, once it is compared
        self.graphs: dict[int, tuple[str, str]] = {}
        #: why a compared leaf pair could not be read
        self.errors: dict[int, str] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="runs-title")
        yield RunsTable(cursor_type="row", id="runs-table")
        yield KeysFooter()

    def on_mount(self) -> None:
        compared, skipped = len(self.scope.compared), len(self.scope.skipped)
        self.query_one("#runs-title", Static).update(
            Content.assemble(
                (f"{compared} leaf pairs compared", "bold"),
                Content.styled(
                    f", {skipped} left out · enter: open a leaf · escape there: back here", styled.MUTED
                ),
            )
        )
        table = self.query_one(DataTable)
        for label, key in (
            ("rank", "rank"),
            ("graph", "graph"),
            ("step", "step"),
            ("worst", "worst"),
            ("introduced", "introduced"),
            ("status", "status"),
        ):
            table.add_column(label, key=key)
        for index, (on_leaf, _) in enumerate(self.scope.compared):
            table.add_row(
                on_leaf.rank or "-",
                on_leaf.graph or "-",
                on_leaf.step or "-",
                "",
                "",
                Text(COMPARING, "dim"),
                key=str(index),
            )
        for index, left_out in enumerate(self.scope.skipped):
            table.add_row(
                "",
                "",
                "",
                "",
                "",
                Text(f"skipped {left_out['what']}: {left_out['why']}", "dim"),
                key=f"skipped-{index}",
            )
        table.focus()
        self.compare()

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False, description="comparing the leaves")
    def compare(self) -> None:
        worker = get_current_worker()
        between = _between_items(worker, self.app.answering)
        try:
            choosers = (
                GraphChooser(self.sources.open_graph, "fusion-on"),
                GraphChooser(self.sources.close_graph, "fusion-off"),
            )
            runs = compare_leaves(
                self.scope, choosers, comparison_options={**self.walk, "on_item": between}, jobs=1
            )
            for index, run in enumerate(runs):
                if run.report is None:
                    self.post_message(LeafCompared(index, error=run.error))
                else:
                    self.post_message(
                        LeafCompared(
                            index,
                            worst=worst_verdict(r.verdict for r in run.report.records),
                            introduced=len(run.report.summary()["introduced"]),
                            graphs=run.graphs,
                        )
                    )
                if worker.is_cancelled:
                    return
        except _Cancelled:
            return
        except InputError as exc:
            self.post_message(LeafCompared(-1, error=str(exc)))

    def on_leaf_compared(self, message: LeafCompared) -> None:
        table = self.query_one(DataTable)
        indices = [message.index] if message.index >= 0 else self._pending()
        for index in indices:
            if message.error is not None:
                self.errors[index] = message.error
                cells = {
                    "worst": Text("not compared", "dim"),
                    "status": Text(f"not compared: {message.error}", "red"),
                }
            else:
                self.graphs[index] = message.graphs
                cells = {
                    "worst": Text(message.worst or "not compared", _VERDICT_TONE.get(message.worst, "dim")),
                    "introduced": Text(str(message.introduced), "bold red" if message.introduced else ""),
                    "status": Text("compared"),
                }
            for column, cell in cells.items():
                table.update_cell(str(index), column, cell, update_width=True)

    def _pending(self) -> list[int]:
        return [i for i in range(len(self.scope.compared)) if i not in self.graphs and i not in self.errors]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "runs" and event.state == WorkerState.ERROR:
            error = event.worker.error
            self.post_message(LeafCompared(-1, error=f"{type(error).__name__}: {error}"))

    @on(DataTable.RowSelected, "#runs-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.open_row(event.row_key.value)

    def open_row(self, key: str) -> None:
        if key.startswith("skipped-"):
            left_out = self.scope.skipped[int(key.removeprefix("skipped-"))]
            self.notify(f"{left_out['what']} was left out: {left_out['why']}.", timeout=4)
            return
        index = int(key)
        on_leaf, off_leaf = self.scope.compared[index]
        if index in self.errors:
            self.notify(f"{on_leaf.label()} could not be compared: {self.errors[index]}", severity="error")
            return
        if index not in self.graphs:
            self.notify(f"{on_leaf.label()} is still being compared: enter opens it once its row is done.")
            return
        open_graph, close_graph = self.graphs[index]
        sources = Sources(open_graph, leaf_folder(on_leaf), close_graph, leaf_folder(off_leaf))
        self.app.sub_title = on_leaf.label()
        self.app.push_screen(LeafScreen(sources, **self.walk), callback=self._back)

    def _back(self, _result: object) -> None:
        self.app.sub_title = self.sources.name
