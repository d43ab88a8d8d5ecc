"""``h`` in the Tasks pane: every run recorded in the results database (``$FPINSPECT_DB``),
newest first, with the baselines that hold it, a headline and its artefacts folder.

``enter`` opens a run's result, ``t`` tags it into a baseline, ``c`` shows its check against
the newest baseline that can judge it, ``o`` opens any result.json by path. Runs of the results
directory that recorded nothing (they failed, were cancelled or still run) are listed among them
with their status. When the database cannot be read, the title says why in one sentence and the screen lists the run folders of the
results directory instead (``enter`` opens one).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import get_current_worker

from ...dumps.runs.sources import Sources
from ...experiments.runs import KeptRun, RunStore, shown_path
from ...store import ResultsDB, StoreError, default_path
from ..messages import HistoryRead
from ..recorded_runs import RecordedRun, read_recorded_runs
from ..widgets import styled
from ..widgets.footer import KeysFooter
from ..widgets.live_run import clock_text
from .runs import LeafScreen

#: Hex digits of the settings hash the table shows (the detail line has all of them).
SHORT_HASH = 8
#: Columns of the headline: the artefacts folder stays in view on 120 columns, the regressed
#: figures are named in full below the table; a wider terminal gives it what the other columns
#: leave (:data:`OTHER_COLUMNS`), up to :data:`HEADLINE_MAX`.
HEADLINE_WIDTH = 40
HEADLINE_MAX = 90
OTHER_COLUMNS = 102


def started_text(run: KeptRun) -> str:
    """``20261201-074512-…`` -> ``2026-12-01 07:45:12``; the folder name otherwise."""
    stamp = run.folder.name[:15]
    if len(stamp) == 15 and stamp[8] == "-" and stamp.replace("-", "").isdigit():
        return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}"
    return run.folder.name


def sentence(problem: str) -> str:
    """A store's problem (``the results database … .``) as the start of a sentence, no full stop."""
    return problem[:1].upper() + problem[1:].rstrip(".")


class RecordedComparisonScreen(LeafScreen):
    """The main screen on the dumps of a comparison recorded in the database (``compare
    --record``, ``b``); ``escape`` and ``backspace`` go back to the History."""

    BINDINGS = [
        Binding(
            "escape,backspace",
            "overview",
            "History",
            tooltip="Back to the History (escape clears a filter first)",
            id="history.back-to",
        )
    ]


class HistoryScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="history.back"),
        Binding("t", "tag", "Tag as baseline", id="history.tag"),
        Binding("c", "check", "Baseline check", id="history.check"),
        Binding("o", "open_file", "Open result.json", id="history.open-file"),
    ]

    def __init__(self, store: RunStore, db_path: Path | None = None) -> None:
        """``db_path``: the results database (default: ``$FPINSPECT_DB``, else the user's)."""
        super().__init__()
        self.store = store
        self.db_path = db_path if db_path is not None else default_path()
        #: the runs of the database; None while it is read, or when it cannot be (then ``runs``)
        self.recorded: list[RecordedRun] | None = None
        self.runs: list[KeptRun] = []
        #: the table's rows: the recorded runs and the run folders that recorded nothing
        self.rows: list[RecordedRun | KeptRun] = []
        self.problem: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="history-title")
        yield DataTable(cursor_type="row", id="history-table")
        yield Static(id="history-detail")
        yield KeysFooter()

    def on_mount(self) -> None:
        self._title("Reading the results database", f" {shown_path(self.db_path)}…")
        self.query_one(DataTable).focus()
        self.read()

    def _title(self, bold: str, muted: str) -> None:
        self.query_one("#history-title", Static).update(
            Content.assemble((bold, "bold"), Content.styled(muted, styled.MUTED))
        )

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def read(self) -> None:
        worker = get_current_worker()
        try:
            recorded = read_recorded_runs(self.db_path, lambda: worker.is_cancelled)
        except StoreError as exc:
            self.post_message(HistoryRead(None, self.store.history(), str(exc)))
            return
        self.post_message(HistoryRead(recorded, self.store.history()))

    @on(HistoryRead)
    def _read(self, msg: HistoryRead) -> None:
        table = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear(columns=True)
        self.recorded, self.runs, self.problem = msg.recorded, msg.kept or [], msg.problem
        if self.recorded is None:
            self._show_folders()
        else:
            self._show_recorded(self.recorded)
        table.move_cursor(row=keep)
        self._show_detail(table.cursor_row)

    def _show_recorded(self, recorded: list[RecordedRun]) -> None:
        table = self.query_one(DataTable)
        table.add_columns("recorded", "task", "device", "profile", "settings", "baselines")
        width = min(HEADLINE_MAX, max(HEADLINE_WIDTH, self.app.size.width - OTHER_COLUMNS))
        table.add_column("headline", width=width)
        table.add_column("artefacts")
        kept = {str(e.folder.resolve()) for e in recorded if e.folder is not None}
        unrecorded = [k for k in self.runs if str(k.folder.resolve()) not in kept]
        self.rows = sorted(
            [*recorded, *unrecorded],
            key=lambda row: row.recorded if isinstance(row, RecordedRun) else started_text(row),
            reverse=True,
        )
        for row in self.rows:
            if isinstance(row, KeptRun):
                r = row.record
                status = "running" if r.status == "running" else f"not recorded: {r.status}"
                table.add_row(
                    started_text(row), r.task, r.device, r.profile, "-", "-",
                    Text(status, "dim" if r.status == "running" else "red"), Text(row.folder.name),
                )  # fmt: skip
                continue
            r = row.run
            table.add_row(
                row.recorded,
                r.task,
                r.device or "-",
                r.profile or "-",
                r.settings_hash[:SHORT_HASH],
                ", ".join(row.baselines) or "-",
                row.headline,
                self._artefacts_cell(row),
            )
        where = shown_path(self.db_path)
        if self.rows:
            self._title(
                "Recorded runs",
                f" in {where} · enter: open · t: tag as baseline · c: baseline check · o: open any result.json",
            )
        else:
            self._title("No recorded runs yet", f" in {where} (every finished run records into it).")

    @staticmethod
    def _artefacts_cell(entry: RecordedRun) -> Text:
        """The folder's name (the detail line has its path), marked first when it is gone."""
        if entry.folder is None:
            return Text("-", "dim")
        if not entry.folder_exists:
            return Text(f"gone: {entry.folder.name}", "red")
        return Text(entry.folder.name)

    def _show_folders(self) -> None:
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
        folders = shown_path(self.store.root)
        self._title(
            f"{sentence(self.problem or '')}:",
            f" the run folders under {folders} instead."
            if self.runs
            else f" and there are no run folders under {folders} either.",
        )

    @on(DataTable.RowHighlighted, "#history-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _show_detail(self, row: int) -> None:
        shown = self._row(row)
        if isinstance(shown, KeptRun):
            r = shown.record
            why = f": {r.message.splitlines()[0]}" if r.message else ""
            text = f"{r.task} on {r.device}, {r.status}{why} · nothing recorded · {shown.folder}"
        else:
            text = shown.detail if shown is not None else ""
        self.query_one("#history-detail", Static).update(text)

    def _row(self, row: int) -> RecordedRun | KeptRun | None:
        if self.recorded is not None and 0 <= row < len(self.rows):
            return self.rows[row]
        return None

    def _entry(self, row: int) -> RecordedRun | None:
        shown = self._row(row)
        return shown if isinstance(shown, RecordedRun) else None

    @property
    def selected(self) -> RecordedRun | None:
        return self._entry(self.query_one(DataTable).cursor_row)

    # -- keys ------------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#history-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        if self.recorded is None:
            if 0 <= event.cursor_row < len(self.runs):
                self.open_kept(self.runs[event.cursor_row])
            return
        shown = self._row(event.cursor_row)
        if isinstance(shown, KeptRun):
            self.open_kept(shown)
        elif shown is not None:
            self.open_recorded(shown)

    def open_kept(self, run: KeptRun) -> None:
        from .open_result import open_kept_run

        open_kept_run(self.app, run)

    def open_recorded(self, entry: RecordedRun) -> None:
        from .open_result import open_result_file

        r, folder = entry.run, entry.folder
        if folder is None:
            inputs = r.environment.get("inputs") or {}
            keys = ("af_open_graph", "af_open_data", "af_close_graph", "af_close_data")
            if set(keys) <= inputs.keys():
                gone = [inputs[k] for k in keys if not Path(inputs[k]).exists()]
                if gone:
                    self.notify(
                        f"Run {r.id} compared dumps that are gone ({gone[0]}): nothing to open.",
                        severity="warning",
                        timeout=8,
                    )
                    return
                # the comparison's dumps, inspected again; escape comes back
                self.app.push_screen(RecordedComparisonScreen(Sources(*(inputs[k] for k in keys))))
            else:
                self.notify(f"Run {r.id} kept no artefacts folder (it ran without --out).", timeout=5)
        elif not folder.is_dir():
            self.notify(
                f"The artefacts folder of run {r.id}, {folder}, is gone.", severity="warning", timeout=6
            )
        else:
            open_result_file(self.app, folder / "result.json")

    def _usable(self) -> RecordedRun | None:
        """The highlighted recorded run; None (and why, in a notification) when there is none."""
        if self.recorded is None:
            why = (
                f"{sentence(self.problem)}." if self.problem else "The results database is still being read."
            )
            self.notify(why, severity="warning", timeout=5)
            return None
        shown = self._row(self.query_one(DataTable).cursor_row)
        if isinstance(shown, KeptRun):
            self.notify(
                f"The run in {shown.folder.name} recorded nothing ({shown.record.status}): "
                "there are no figures to tag or check.",
                timeout=5,
            )
            return None
        if shown is None:
            self.notify("No run is highlighted.", timeout=2)
        return shown

    def action_tag(self) -> None:
        entry = self._usable()
        if entry is None:
            return
        from .prompt import PathPrompt

        def answer(name: str | None) -> None:
            if name:
                self.tag(name, entry.run.id)

        default = entry.check.baseline_name if entry.check is not None else ""
        question = f"Tag run {entry.run.id} ({entry.run.task}) into the baseline named:"
        self.app.push_screen(PathPrompt(question, default), answer)

    @work(thread=True, group="history-tag", exit_on_error=False)
    def tag(self, name: str, run_id: int) -> None:
        try:
            with ResultsDB(self.db_path) as db:
                db.tag(name, [run_id])
        except StoreError as exc:
            self.app.call_from_thread(self.notify, f"{sentence(str(exc))}.", severity="error", timeout=8)
            return
        self.app.call_from_thread(self.notify, f"Run {run_id} is in baseline {name}.", timeout=4)
        self.app.call_from_thread(self.read)

    def action_check(self) -> None:
        entry = self._usable()
        if entry is None:
            return
        r = entry.run
        if entry.check is None:
            self.notify(
                f"No baseline holds runs of {r.task} with settings {r.settings_hash} on {r.device_class} "
                f"to check run {r.id} against.",
                timeout=5,
            )
            return
        from ...store.report import check_markdown
        from .baseline_check import BaselineCheckScreen

        self.app.push_screen(BaselineCheckScreen(check_markdown(entry.check)))

    def action_open_file(self) -> None:
        from .open_result import pick_result

        pick_result(self.app, self.store.root)
