"""The overview of a whole run: ``fpinspect open`` on two dump trees of several leaves (ranks ×
graphs × steps, :mod:`fpinspect.dumps.runs.runtree`), every step both trees hold.

A grid of ranks (rows) × graphs (columns) at one step, each cell the leaf pair's worst verdict
and how many ops it introduces, filled in as a worker compares the leaves one after the other
(:func:`~fpinspect.inspection.leaves.inspect_leaves`), the shown step's first. ``s`` / ``S`` show the
next / previous step; ``l`` shows the list instead: one row per compared leaf pair of every step,
then one per leaf left out, with the reason. ``enter`` opens a compared leaf in the inspector's
main screen; ``escape`` or ``backspace`` there comes back."""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import partial

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from ...dumps.engine.verdict import worst_verdict
from ...dumps.errors import InputError
from ...dumps.runs.leafgraphs import GraphChooser
from ...dumps.runs.runtree import Leaf, Scope, pair_trees, scan_tree
from ...dumps.runs.sources import Sources
from ...inspection.leaves import inspect_leaves
from ...inspection.settings import CompareSettings
from ..acting import beside_run, write_run_report
from ..widgets import styled
from ..widgets.footer import KeysFooter
from .main import MainScreen, _between_items, _Cancelled
from .op_actions import act, ask_place, tell_acted

COMPARING = "comparing…"
_VERDICT_TONE = {"pass": "green", "warn": "yellow", "fail": "bold red"}


def run_scope(sources: Sources) -> Scope | None:
    """The leaf pairs of the data folders of ``sources``, at every step both trees hold, where
    those are dump trees with more than one compared leaf pair; ``None`` otherwise (one leaf pair, a side missing, a folder that
    cannot be read), where the inspector opens the data folders as they are."""
    if not sources.complete:
        return None
    try:
        scope = pair_trees(scan_tree(sources.open_data), scan_tree(sources.close_data), steps="all")
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
    """The overview's list: ``enter`` opens the leaf pair of the row (its ``RowSelected``)."""

    BINDINGS = [
        Binding(
            "enter",
            "select_cursor",
            "Open leaf",
            tooltip="Open the leaf pair in the inspector",
            id="open-leaf",
        )
    ]


class GridTable(DataTable):
    """The overview's grid: ``enter`` opens the leaf pair of the cell (its ``CellSelected``)."""

    BINDINGS = [
        Binding(
            "enter",
            "select_cursor",
            "Open leaf",
            tooltip="Open the leaf pair of the cell in the inspector",
            id="open-cell",
        )
    ]


def _label(value: str | None) -> str:
    return "-" if value is None else value


class RunsScreen(Screen):
    BINDINGS = [
        Binding("s", "step(1)", "Next step", tooltip="Show the grid at the next step", id="next-step"),
        Binding(
            "S", "step(-1)", "Previous step", tooltip="Show the grid at the previous step", id="previous-step"
        ),
        Binding(
            "l",
            "toggle_list",
            "Grid/list",
            tooltip="Every leaf pair of every step, and what was left out, as a list (again: the grid)",
            id="toggle-list",
        ),
        Binding(
            "H",
            "report",
            "Report",
            tooltip="Write the whole run's HTML report: the grid, then each leaf (in a leaf: that leaf's)",
            id="run-report",
        ),
    ]

    def __init__(
        self,
        sources: Sources,
        scope: Scope,
        *,
        settings: CompareSettings | None = None,
    ) -> None:
        super().__init__()
        self.sources, self.scope = sources, scope
        self.grid = scope.grid()
        #: how each leaf is compared and judged, also by the leaf screens opened from here
        self.settings = settings or CompareSettings()
        #: the step the grid shows: the latest
        self.step = self.grid.steps[-1]
        #: each compared leaf pair's message, once it is compared (or found unreadable)
        self.outcomes: dict[int, LeafCompared] = {}
        #: the leaf pairs handed to the worker so far, and the one it compares now
        self.started: set[int] = set()
        self._current = -1

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="runs-title")
        yield GridTable(cursor_type="cell", id="runs-grid")
        yield RunsTable(cursor_type="row", id="runs-table", classes="-hidden")
        yield KeysFooter()

    def on_mount(self) -> None:
        grid = self.query_one("#runs-grid", DataTable)
        grid.add_column("rank", key="rank")
        for column, graph in enumerate(self.grid.graphs):
            grid.add_column(f"graph {_label(graph)}", key=f"g{column}")
        for row, rank in enumerate(self.grid.ranks):
            grid.add_row(_label(rank), *([""] * len(self.grid.graphs)), key=f"r{row}")
        table = self.query_one("#runs-table", DataTable)
        for label in ("rank", "graph", "step", "worst", "introduced", "status"):
            table.add_column(label, key=label)
        for index, (on_leaf, _) in enumerate(self.scope.compared):
            table.add_row(
                _label(on_leaf.rank),
                _label(on_leaf.graph),
                _label(on_leaf.step),
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
        self._show_step()
        grid.move_cursor(column=1)
        grid.focus()
        self.compare()

    def _show_step(self) -> None:
        """The title and every cell of the grid at :attr:`step`."""
        compared, skipped = len(self.scope.compared), len(self.scope.skipped)
        steps = self.grid.steps
        self.query_one("#runs-title", Static).update(
            Content.assemble(
                (f"step {_label(self.step)}", "bold"),
                Content.styled(
                    f" ({steps.index(self.step) + 1} of {len(steps)}; s/S: other steps)", styled.MUTED
                ),
                (f" · {compared} leaf pairs compared", "bold"),
                Content.styled(
                    f", {skipped} left out · enter: open a leaf · l: list · escape there: back here",
                    styled.MUTED,
                ),
            )
        )
        grid = self.query_one("#runs-grid", DataTable)
        for row in range(len(self.grid.ranks)):
            for column in range(len(self.grid.graphs)):
                grid.update_cell(f"r{row}", f"g{column}", self._cell(row, column), update_width=True)

    def _cell(self, row: int, column: int) -> Text:
        """The cell of the grid's ``row`` (rank) and ``column`` (graph) at the step shown."""
        index = self.grid.cells.get((self.grid.ranks[row], self.grid.graphs[column], self.step))
        if index is None:
            return Text("-", "dim")
        outcome = self.outcomes.get(index)
        if outcome is None:
            return Text(COMPARING, "dim")
        if outcome.error is not None:
            return Text("not compared", "red")
        worst = outcome.worst or "not compared"
        return Text(f"{worst} · {outcome.introduced} introduced", _VERDICT_TONE.get(outcome.worst, "dim"))

    def action_step(self, by: int) -> None:
        steps = self.grid.steps
        self.step = steps[(steps.index(self.step) + by) % len(steps)]
        self._show_step()

    def action_toggle_list(self) -> None:
        grid, table = self.query_one("#runs-grid"), self.query_one("#runs-table")
        grid.set_class(not grid.has_class("-hidden"), "-hidden")
        table.set_class(not grid.has_class("-hidden"), "-hidden")
        (table if grid.has_class("-hidden") else grid).focus()

    def _pairs(self) -> Iterator[tuple[Leaf, Leaf]]:
        """The leaf pairs not compared yet, one at a time, those of the step shown first: the
        worker's next pair is taken when it is done with the one before."""
        while True:
            pending = [i for i in range(len(self.scope.compared)) if i not in self.started]
            if not pending:
                return
            index = min(pending, key=lambda i: (self.scope.compared[i][0].step != self.step, i))
            self.started.add(index)
            self._current = index
            yield self.scope.compared[index]

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False, description="comparing the leaves")
    def compare(self) -> None:
        worker = get_current_worker()
        between = _between_items(worker, self.app.answering)
        try:
            choosers = (
                GraphChooser(self.sources.open_graph, "fusion-on"),
                GraphChooser(self.sources.close_graph, "fusion-off"),
            )
            runs = inspect_leaves(self._pairs(), choosers, self.settings, on_item=between)
            for run in runs:
                if run.report is None:
                    self.post_message(LeafCompared(self._current, error=run.error))
                else:
                    self.post_message(
                        LeafCompared(
                            self._current,
                            worst=worst_verdict(r.verdict for r in run.report.records),
                            introduced=len(run.report.summary().introduced),
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
        table = self.query_one("#runs-table", DataTable)
        indices = [message.index] if message.index >= 0 else self._pending()
        for index in indices:
            self.outcomes[index] = message
            if message.error is not None:
                cells = {
                    "worst": Text("not compared", "dim"),
                    "status": Text(f"not compared: {message.error}", "red"),
                }
            else:
                cells = {
                    "worst": Text(message.worst or "not compared", _VERDICT_TONE.get(message.worst, "dim")),
                    "introduced": Text(str(message.introduced), "bold red" if message.introduced else ""),
                    "status": Text("compared"),
                }
            for column, cell in cells.items():
                table.update_cell(str(index), column, cell, update_width=True)
            on_leaf = self.scope.compared[index][0]
            if on_leaf.step == self.step:
                row, column = self.grid.ranks.index(on_leaf.rank), self.grid.graphs.index(on_leaf.graph)
                self.query_one("#runs-grid", DataTable).update_cell(
                    f"r{row}", f"g{column}", self._cell(row, column), update_width=True
                )

    def _pending(self) -> list[int]:
        return [i for i in range(len(self.scope.compared)) if i not in self.outcomes]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        tell_acted(self, event)
        if event.worker.group == "runs" and event.state == WorkerState.ERROR:
            error = event.worker.error
            self.post_message(LeafCompared(-1, error=f"{type(error).__name__}: {error}"))

    @on(DataTable.RowSelected, "#runs-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key.startswith("skipped-"):
            left_out = self.scope.skipped[int(key.removeprefix("skipped-"))]
            self.notify(f"{left_out['what']} was left out: {left_out['why']}.", timeout=4)
            return
        self.open_leaf(int(key))

    @on(DataTable.CellSelected, "#runs-grid")
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        column = event.cell_key.column_key.value
        if column == "rank":
            return
        index = self._cell_leaf(int(event.cell_key.row_key.value.removeprefix("r")), column)
        if index is not None:
            self.open_leaf(index)

    def _cell_leaf(self, row: int, column: str) -> int | None:
        """The compared leaf pair at the grid's ``row`` and ``column`` (``g1``...) at the step
        shown; None, said, where there is none."""
        rank, graph = self.grid.ranks[row], self.grid.graphs[int(column.removeprefix("g"))]
        index = self.grid.cells.get((rank, graph, self.step))
        if index is None:
            why = self.scope.why_left_out(rank, graph, self.step) or [
                "neither dump tree has a leaf folder there"
            ]
            self.notify(
                f"rank {_label(rank)}, graph {_label(graph)} has no leaf pair at step {_label(self.step)}"
                f" to open: {'; '.join(why)}.",
                timeout=6,
            )
        return index

    def _leaf_sources(self, index: int, key: str) -> Sources | None:
        """The inputs of compared leaf pair ``index``; None, said, while it is compared (``key``
        acts on it once it is done) or where it could not be."""
        on_leaf, off_leaf = self.scope.compared[index]
        outcome = self.outcomes.get(index)
        if outcome is None:
            self.notify(f"{on_leaf.label()} is still being compared: {key} once it is done.")
            return None
        if outcome.error is not None:
            self.notify(f"{on_leaf.label()} could not be compared: {outcome.error}", severity="error")
            return None
        open_graph, close_graph = outcome.graphs
        return Sources(open_graph, leaf_folder(on_leaf), close_graph, leaf_folder(off_leaf))

    def action_report(self) -> None:
        """The whole run's HTML report (``fpinspect report RUN``): the grid, then each leaf; a
        leaf opened from the grid writes that leaf's own."""
        n = len(self.scope.compared)
        default = beside_run(self.sources) / f"{self.sources.name}-report.html"

        def write(out) -> None:
            act(
                self,
                partial(write_run_report, self.sources, self.scope, self.settings, out),
                f"writing the HTML report of the whole run ({n} leaf pairs) to {out}",
            )

        ask_place(
            self,
            self.sources,
            f"Write the HTML report of the whole run (the rank × graph grid, then each of its {n} leaf pairs; "
            "H in a leaf writes that leaf's) to:",
            default,
            write,
        )

    def open_leaf(self, index: int) -> None:
        sources = self._leaf_sources(index, "enter opens it")
        if sources is None:
            return
        self.app.sub_title = self.scope.compared[index][0].label()
        self.app.push_screen(LeafScreen(sources, settings=self.settings), callback=self._back)

    def _back(self, _result: object) -> None:
        self.app.sub_title = self.sources.name
