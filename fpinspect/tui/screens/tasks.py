"""The Tasks pane (``t``, or ``fpinspect launch``): run the test plan from the inspector.

The list holds every task of the registry with its claim, priority and the last kept
verdict; the form (:mod:`..widgets.run_form`) picks the device, the profile and overrides.
``enter`` queues the highlighted task, ``a`` every task (then writes the plan's report,
:mod:`fpinspect.reports.plan`); one run at a time goes per device, each followed by a
thread worker that posts the child's events (:mod:`..run_follower`). The handlers fold them into the
run's state (:mod:`..launcher`), and a timer redraws the watched run four times a second.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, RadioSet
from textual.worker import Worker, get_current_worker

from ...experiments.backends.probe import CHOICES, probe_devices
from ...experiments.engine import ExperimentProcess
from ...experiments.events import Failed
from ...experiments.registry import all_tasks
from ...experiments.runs import RunStore, verdict_summary
from ...experiments.settings import SettingError
from ..launcher import FAILED, FINISHED, QUEUED, RUNNING, RunQueue, TrackedRun
from ..messages import DevicesProbed, RunEnded, RunEvent
from ..run_follower import follow_run, run_nice
from ..widgets.footer import KeysFooter
from ..widgets.live_run import LiveRun
from ..widgets.result_view import ResultView
from ..widgets.run_form import RunForm
from .baseline_check import BaselineCheckScreen
from .confirm import ConfirmScreen
from .open_result import pick_result
from .result import ResultScreen

if TYPE_CHECKING:
    from ...store import CheckResult

CHECKING = "still checking whether it is available…"
#: The narrowest the claim column gets (a claim wraps into more lines below that).
CLAIM_MIN = 30
#: Seconds between redraws of the watched run while events stream.
REDRAW_SECONDS = 0.25
#: Seconds quitting waits in all for the stopped runs' followers to write their records: more
#: than the engine's grace between SIGTERM and SIGKILL (5 s), so a child that ignores SIGTERM
#: is killed and recorded before the app exits.
STOP_SECONDS = 10.0
#: Rich styles (DataTable cells are Rich text) of the verdict summaries.
_VERDICT_TONE = {"agrees": "green", "disagrees": "red", "cannot tell": "yellow"}


class TasksScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="tasks.back"),
        Binding("x,ctrl+c", "cancel_run", "Cancel run", id="tasks.cancel"),
        Binding("r", "show_result", "Result", id="tasks.result"),
        Binding("h", "history", "History", id="tasks.history"),
        Binding("b", "baseline_check", "Baseline check", id="tasks.baseline-check", show=False),
        Binding("o", "open_result", "Open result", id="tasks.open-result"),
        Binding("d", "cycle('device')", "Device", id="tasks.device"),
        Binding("p", "cycle('profile')", "Profile", id="tasks.profile"),
        # kept out of the footer (already full on 80 columns); listed in the command palette
        Binding("a", "run_all", "Run all", id="tasks.run-all", show=False),
    ]

    def __init__(
        self,
        store: RunStore,
        *,
        task: str | None = None,
        device: str | None = None,
        profile: str = "quick",
        devices: dict[str, str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = datetime.now,
        nice: int | None = None,
    ) -> None:
        """``devices`` preset the availability check (None runs it); ``clock`` times the runs
        and ``now`` names their folders (both replaceable for tests); ``nice`` is added to each
        run's niceness (None: ``$FPINSPECT_RUN_NICE``, else :data:`RUN_NICE`)."""
        super().__init__()
        self.store = store
        self.tasks = all_tasks()
        self.initial_task = task
        self.device = device or "cpu"
        self.profile = profile
        self.devices: dict[str, str | None] = {"cpu": None, **{d: CHECKING for d in CHOICES if d != "cpu"}}
        self._preset_devices = devices
        self.clock, self.now = clock, now
        self.nice, self._nice_problem = (nice, None) if nice is not None else run_nice()
        self.closing = False  #: set by stop_all when the app closes
        self.queue = RunQueue()
        self.watched: TrackedRun | None = None
        self.processes: dict[int, ExperimentProcess] = {}
        #: The runs of the last "run all"; when none of them is active, the plan's report is written.
        self.batch: list[int] = []
        self._dirty = False

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="tasks-top"):
            yield DataTable(cursor_type="row", id="task-table")
            yield RunForm(self.device, self.profile)
        with Horizontal(id="tasks-bottom"):
            yield DataTable(cursor_type="row", id="queue")
            yield LiveRun(id="live")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.sub_title = "tasks"
        table = self.query_one("#task-table", DataTable)
        table.border_title = "Tasks of the test plan · enter: run"
        table.add_columns("task", "prio", "last")
        table.add_column("claim", key="claim")
        self._fill_tasks()
        if self.initial_task is not None:
            ids = [t.id for t in self.tasks]
            if self.initial_task in ids:
                table.move_cursor(row=ids.index(self.initial_task))
        queue = self.query_one("#queue", DataTable)
        queue.border_title = "Runs"
        queue.add_column("#")
        queue.add_column("task")
        queue.add_column("device")
        queue.add_column("state", width=10)
        self.query_one("#live").border_title = "Watched run"
        self._show_devices()
        self._task_changed()
        table.focus()
        if self._nice_problem:
            self.notify(self._nice_problem, severity="warning", timeout=8)
        self.set_interval(REDRAW_SECONDS, self._redraw)
        if self._preset_devices is not None:
            self.post_message(DevicesProbed(self._preset_devices))
        else:
            self.probe()

    def _fill_tasks(self) -> None:
        table = self.query_one("#task-table", DataTable)
        last = self.store.last_outcomes()
        checks = {t: check_line(c) for t, c in latest_checks([t.id for t in self.tasks]).items()}
        keep = table.cursor_row
        table.clear()
        claim = table.columns["claim"]
        claim.auto_width, claim.width = False, self._claim_width()
        for t in self.tasks:
            v = last.get(t.id)
            table.add_row(
                Text(t.id, "bold"),
                t.priority or "-",
                Text.assemble(
                    (v or "-", _VERDICT_TONE.get(v, "red" if v and v.startswith("failed") else "dim")),
                    checks.get(t.id, ""),
                ),
                Text(" ".join(t.claim.split())),  # whole, wrapped to the column (rows as tall as it needs)
                key=t.id,
                height=None,
            )
        table.move_cursor(row=keep)

    def _claim_width(self) -> int:
        """What the task table leaves its claim column (its other columns as wide as their cells)."""
        table = self.query_one("#task-table", DataTable)
        others = sum(c.get_render_width(table) for c in table.ordered_columns if c.key.value != "claim")
        return max(CLAIM_MIN, table.scrollable_content_region.width - others - 2 * table.cell_padding)

    def on_resize(self) -> None:
        table = self.query_one("#task-table", DataTable)
        if table.columns["claim"].width != self._claim_width():
            self.call_after_refresh(self._fill_tasks)

    @property
    def selected_task(self):
        row = self.query_one("#task-table", DataTable).cursor_row
        return self.tasks[row] if 0 <= row < len(self.tasks) else None

    @property
    def form(self) -> RunForm:
        return self.query_one(RunForm)

    def _task_changed(self) -> None:
        task = self.selected_task
        if task is None:
            return
        self.form.show_task(task, self.profile)
        self._show_estimate()

    def _show_estimate(self) -> None:
        task = self.selected_task
        if task is None:
            return
        try:  # what the overrides typed so far ask for; the profile's own while they do not parse
            settings = self.requested_settings(task)
        except (SettingError, ValueError):
            settings = None
        self.form.show_estimate(
            task,
            self.device,
            self.profile,
            lambda p: self.store.last_seconds(task.id, self.device, p),
            settings,
        )

    def _show_devices(self) -> None:
        self.form.show_devices(self.devices)

    # -- devices -----------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="probe", exit_on_error=False)
    def probe(self) -> None:
        self.post_message(DevicesProbed(probe_devices()))

    @on(DevicesProbed)
    def _probed(self, msg: DevicesProbed) -> None:
        # cpu always runs task S; its note says when Inductor's compiler is missing
        self.devices = {**msg.devices, "cpu": None}
        cpu_note = msg.devices.get("cpu")
        self._show_devices()
        if self.devices.get(self.device):
            self.notify(f"{self.devices[self.device]}: runs go to cpu.", severity="warning", timeout=6)
            self.form.choose("device", "cpu")
        if cpu_note:
            self.form.show_device_note(f"cpu: only tasks without fused kernels ({cpu_note})")

    # -- form ------------------------------------------------------------------------------
    @on(DataTable.RowHighlighted, "#task-table")
    def _highlighted(self) -> None:
        self._task_changed()

    @on(Input.Changed, "#seed, #overrides")
    def _typed(self) -> None:
        self._show_estimate()

    @on(RadioSet.Changed, "#device")
    def _device(self, event: RadioSet.Changed) -> None:
        self.device = event.pressed.name
        self._show_estimate()

    @on(RadioSet.Changed, "#profile")
    def _profile(self, event: RadioSet.Changed) -> None:
        self.profile = event.pressed.name
        self._task_changed()

    def action_cycle(self, which: str) -> None:
        self.form.cycle(which, getattr(self, which))

    def requested_settings(self, task):
        """The profile's settings with the form's seed and overrides (:meth:`RunForm.requested_settings`)."""
        return self.form.requested_settings(task, self.profile)

    # -- runs ------------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#task-table")
    def _chosen(self) -> None:
        self.start_selected()

    def start_selected(self) -> TrackedRun | None:
        task = self.selected_task
        if task is None or not self._can_start():
            return None
        try:
            settings = self.requested_settings(task)
        except SettingError as exc:
            self.notify(f"{exc}.", severity="error", timeout=8)
            return None
        run = self.queue.add(task.id, self.device, self.profile, settings)
        self.watched = run
        self._schedule()
        if run.state == QUEUED:
            self.notify(f"{run.label} is queued: the device is busy.", timeout=3)
        self._refresh_queue()
        self._redraw(force=True)
        return run

    def action_run_all(self) -> None:
        """Queue every task, P0 first, then P1, then P2, with the profile's own settings; when
        the last of them ends, the plan's report is written into the results directory."""
        if not self._can_start():
            return
        tasks = sorted(self.tasks, key=lambda t: t.priority or "P9")  # stable: the plan's order within one
        runs = [
            self.queue.add(t.id, self.device, self.profile, t.settings.profile(self.profile)) for t in tasks
        ]
        self.batch, self.watched = [r.id for r in runs], runs[0]
        self._schedule()
        self._refresh_queue()
        self._redraw(force=True)
        self.notify(
            f"Run all: {len(runs)} tasks queued on {self.device}, P0 first; the plan's report follows.",
            timeout=4,
        )

    def _can_start(self) -> bool:
        """Whether a run may be queued now: not while the app closes, nor on a device that is
        unavailable or still being checked (then it says why)."""
        if self.closing:
            return False
        why = self.devices.get(self.device)
        if why:
            self.notify(f"{self.device}: {why}" if why == CHECKING else why, severity="error")
        return not why

    def _schedule(self) -> None:
        for run in self.queue.startable():
            try:
                run.folder = self.store.new_run(run.task, run.device, run.profile, self.now())
            except OSError as exc:
                run.state, run.failure = (
                    FAILED,
                    Failed(
                        "usage", f"cannot create a run folder in {self.store.root}: {exc.strerror or exc}"
                    ),
                )
                continue
            process = ExperimentProcess(
                run.task,
                run.settings,
                device=run.device,
                profile=run.profile,
                workdir=run.folder / "work",
                nice=self.nice,
            )
            self.processes[run.id] = process
            run.state, run.started = RUNNING, self.clock()
            run.say(f"starting the child process in {run.folder.name} (torch loads first)")
            self.follow(run, process)

    @work(thread=True, group="runs", exit_on_error=False)
    def follow(self, run: TrackedRun, process: ExperimentProcess) -> None:
        """Follow the run (:func:`~..run_follower.follow_run`): a cancelled worker (quitting)
        stops waiting at once, always stops the child, and still writes the run's record."""
        worker = get_current_worker()
        ended = follow_run(
            run,
            process,
            lambda batch: self.post_message(RunEvent(run.id, batch)),
            lambda: worker.is_cancelled,
        )
        if not worker.is_cancelled:
            self.post_message(ended)

    @on(RunEvent)
    def _event(self, msg: RunEvent) -> None:
        run = self.queue.get(msg.run_id)
        if run is not None:
            now = self.clock()
            state = run.state
            for event in msg.events:
                run.apply(event, now)
            self._dirty = True
            if run.state != state:  # the child said it ended: the Runs table says so now, not once it exits
                self._refresh_queue()

    @on(RunEnded)
    def _ended(self, msg: RunEnded) -> None:
        run = self.queue.get(msg.run_id)
        if run is None:
            return
        self.processes.pop(run.id, None)
        if run.state == RUNNING:  # the worker stopped before the child said how it ended
            run.state, run.failure = FAILED, Failed("cancelled", f"{run.label} was stopped")
        run.ended = run.ended if run.ended is not None else self.clock()
        run.report, run.written, run.log_tail = msg.report, msg.written, msg.log_tail
        if self.closing:
            return
        if run.id in self.batch and not any(r.active for r in map(self.queue.get, self.batch) if r):
            self.batch = []
            self.write_plan_report()
        self._schedule()
        self._refresh_queue()
        self._fill_tasks()
        self._show_estimate()
        self._redraw(force=True)
        # said, not shown: the pane stays where the user is; r (or the run's row) opens the result
        if run.cancel_requested:
            return
        if run.state == FINISHED:
            self.notify(
                f"{run.label} finished: {verdict_summary(run.report)}. {self._follow_hint(run)}", timeout=10
            )
        else:
            kind = run.failure.kind if run.failure is not None else "failed"
            self.notify(
                f"{run.label} failed ({kind}). {self._follow_hint(run)}", severity="error", timeout=10
            )

    def _follow_hint(self, run: TrackedRun) -> str:
        """How to open ``run``'s result from where the user is."""
        if run is self.watched:
            return "r shows it." if self.app.screen is self else "On the Tasks pane (t), r shows it."
        return "Highlight it in Runs, then r shows it."

    @work(thread=True, group="plan-report", exit_on_error=False)
    def write_plan_report(self) -> None:
        from ...reports.plan import PlanError, write_plan

        try:
            html, md = write_plan(self.store.root)
        except (PlanError, OSError) as exc:
            self.app.call_from_thread(
                self.notify, f"The plan's report was not written: {exc}", severity="error"
            )
            return
        self.app.call_from_thread(
            self.notify, f"Run all ended: the plan's report is {html} (and {md}).", timeout=8
        )

    def _refresh_queue(self) -> None:
        table = self.query_one("#queue", DataTable)
        table.clear()
        tone = {RUNNING: "bold", FINISHED: "green", FAILED: "red"}
        for run in self.queue.runs:
            state = run.state if run.failure is None else run.failure.kind
            table.add_row(
                str(run.id), run.task, run.device, Text(state, tone.get(run.state, "")), key=str(run.id)
            )
        if self.watched is not None:
            table.move_cursor(row=self.queue.runs.index(self.watched))

    @on(DataTable.RowHighlighted, "#queue")
    def _watch(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None and table_focused(event):
            self.watched = self.queue.get(int(event.row_key.value))
            self._redraw(force=True)

    def _redraw(self, force: bool = False) -> None:
        running = self.watched is not None and self.watched.state == RUNNING
        if force or self._dirty or running:
            self._dirty = False
            self.query_one(LiveRun).show(self.watched, self.clock())

    # -- keys ------------------------------------------------------------------------------
    def action_back(self) -> None:
        # from `fpinspect launch` nothing is underneath: the app's own blank screen
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.notify("This is the first screen: q quits.", timeout=2)

    def action_cancel_run(self) -> None:
        run = self.watched if self.watched is not None and self.watched.active else None
        run = run or next(iter(self.queue.active()), None)
        if run is None:
            self.notify("No run is queued or running.", timeout=2)
            return

        def answer(yes: bool | None) -> None:
            if not yes:
                return
            if run.active:
                self.cancel(run)
            else:  # it ended while the question was open
                self.notify(f"{run.label} has already ended: nothing to cancel.", timeout=3)

        self.app.push_screen(ConfirmScreen(f"Cancel {run.label}?"), answer)

    def cancel(self, run: TrackedRun) -> None:
        run.cancel_requested = True
        if run.state == QUEUED:
            run.state, run.ended = FAILED, self.clock()
            run.failure = Failed("cancelled", f"{run.label} was cancelled before it started")
            self._refresh_queue()
            self._redraw(force=True)
            return
        process = self.processes.get(run.id)
        if process is not None:
            # stopping waits for the child: not on the UI thread
            threading.Thread(target=process.cancel, name=f"fpinspect-cancel-{run.id}", daemon=True).start()
        self.notify(f"Stopping {run.label}…", timeout=2)

    def action_show_result(self) -> None:
        run = self.watched
        if run is None or run.active:
            self.notify("The watched run has no result yet.", timeout=2)
            return
        if run.id in self.processes:  # it said it ended; its child is still writing the result
            self.notify(f"{run.label} is writing its result: a notification says when r shows it.", timeout=3)
            return
        if run.report is not None:
            view = ResultView(run.report, written=run.written)
        else:
            failure = run.failure or Failed("crash", "no result")
            view = ResultView(
                failure=(failure.kind, failure.message, run.log_tail), source=run.folder, label=run.label
            )
        self.app.push_screen(ResultScreen(view))

    def action_history(self) -> None:
        from .history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.store))

    def action_baseline_check(self) -> None:
        task = self.selected_task
        check = latest_checks([task.id]).get(task.id) if task is not None else None
        if check is None:
            self.notify("No baseline holds runs to check this task's newest recorded run against.", timeout=4)
            return
        from ...store.report import check_markdown

        self.app.push_screen(BaselineCheckScreen(check_markdown(check)))

    def action_open_result(self) -> None:
        pick_result(self.app, self.store.root)

    def palette_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette."""
        yield SystemCommand("Run the highlighted task", "Queue it on the chosen device", self.start_selected)
        yield SystemCommand(
            "Run all tasks", "P0, then P1, then P2, then the plan's report", self.action_run_all
        )
        yield SystemCommand(
            "Cancel the watched run…", "Stop its child process (asks first)", self.action_cancel_run
        )
        yield SystemCommand(
            "History of recorded runs",
            "Runs in the results database, with their baselines",
            self.action_history,
        )
        yield SystemCommand(
            "Open a result.json…", "Any result, also one from another machine", self.action_open_result
        )

    def stop_all(self, then: Callable[[], None]) -> None:
        """Stop every run because the app closes, then call ``then`` (the app's exit), without
        blocking the UI: nothing queued starts any more, every running child is signalled at
        once (each :meth:`~fpinspect.experiments.engine.ExperimentProcess.cancel` on a thread
        of its own: SIGTERM, SIGKILL after its grace), and a worker waits for their followers,
        which write each run's record, at most :data:`STOP_SECONDS` in all. A run that ends
        meanwhile only updates its record (no screen is pushed then)."""
        if self.closing:
            self.notify("Still stopping the runs: the app closes when they have stopped.", timeout=3)
            return
        self.closing = True
        for run in self.queue.runs:
            run.cancel_requested = True
            if run.state == QUEUED:
                run.state, run.ended = FAILED, self.clock()
                run.failure = Failed(
                    "cancelled", f"{run.label} was cancelled before it started: the app closed"
                )
        followers = [w for w in self.workers if w.node is self and w.group == "runs" and not w.is_finished]
        processes = list(self.processes.values())
        for process in processes:
            threading.Thread(target=process.cancel, name="fpinspect-stop", daemon=True).start()
        if processes:
            n = len(processes)
            self.notify(f"Stopping {n} run{'s' if n > 1 else ''}…", timeout=STOP_SECONDS)
        self.run_worker(self._when_stopped(followers, then), group="closing", exit_on_error=False)

    @staticmethod
    async def _when_stopped(followers: list[Worker], then: Callable[[], None]) -> None:
        async def settled(worker: Worker) -> None:
            with suppress(Exception):  # a follower that failed has nothing left to wait for
                await worker.wait()

        if followers:
            await asyncio.wait([asyncio.ensure_future(settled(w)) for w in followers], timeout=STOP_SECONDS)
        then()


def latest_checks(tasks: list[str]) -> dict[str, CheckResult]:
    """Each task's newest recorded run against the newest baseline that can judge it
    (:func:`fpinspect.store.check.latest_check`), for the tasks that have both."""
    from ...store import ResultsDB, StoreError, default_path
    from ...store.check import latest_check

    if not default_path().is_file():  # reading creates no database
        return {}
    try:
        with ResultsDB() as db:
            checks = {t: latest_check(db, t) for t in tasks}
    except StoreError:
        return {}
    return {t: c for t, c in checks.items() if c is not None}


def check_line(check: CheckResult) -> Text:
    n = len(check.regressed)
    return Text(
        f" · vs baseline {check.baseline_name}: {n} figure{'' if n == 1 else 's'} regressed",
        "red" if n else "green",
    )


def table_focused(event: DataTable.RowHighlighted) -> bool:
    return event.data_table.has_focus
