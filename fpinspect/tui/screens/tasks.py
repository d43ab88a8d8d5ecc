"""The Tasks pane (``t``, or ``fpinspect launch``): run the test plan from the inspector.

The list holds every task of the registry with its claim, priority and the last kept
verdict; the form picks the device (the ones whose backend loads here), the profile and
overrides. ``enter`` queues the highlighted task; one run at a time goes per device, each
followed by a thread worker that posts the child's events. The handlers fold them into the
run's state (:mod:`..launcher`), and a timer redraws the watched run four times a second.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from queue import Empty, SimpleQueue

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, RadioButton, RadioSet, Static
from textual.worker import Worker, get_current_worker

from ...experiments.backends.probe import CHOICES, probe_devices
from ...experiments.costs import estimate
from ...experiments.engine import ExperimentProcess
from ...experiments.events import Failed, Finished
from ...experiments.output import write_outputs
from ...experiments.registry import all_tasks
from ...experiments.results import Report
from ...experiments.runs import (
    KeptRun,
    ResultError,
    RunRecord,
    RunStore,
    load_result,
    readable_tail,
    shown_path,
    verdict_summary,
)
from ...experiments.settings import PROFILES, SettingError
from ..launcher import FAILED, FINISHED, QUEUED, RUNNING, RunQueue, TrackedRun
from ..messages import DevicesProbed, RunEnded, RunEvent
from ..widgets import styled
from ..widgets.choice import CHOSEN, UNCHOSEN, Choice
from ..widgets.live_run import LiveRun, clock_text
from ..widgets.result_view import ResultView
from .confirm import ConfirmScreen
from .pick_result import PickResultScreen
from .result import ResultScreen

CHECKING = "still checking whether it is available…"
#: Environment variable: how much lower the runs' CPU priority is than the app's (niceness
#: added to each child; 0 runs them at the app's priority).
RUN_NICE_ENV = "FPINSPECT_RUN_NICE"
#: The default: the child yields the cores to the UI, so keys stay quick while it runs.
RUN_NICE = 10
#: Seconds between redraws of the watched run while events stream.
REDRAW_SECONDS = 0.25
#: Seconds between a follower's checks of its worker's cancellation.
POLL_SECONDS = 0.05
#: Seconds quitting waits in all for the stopped runs' followers to write their records: more
#: than the engine's grace between SIGTERM and SIGKILL (5 s), so a child that ignores SIGTERM
#: is killed and recorded before the app exits.
STOP_SECONDS = 10.0
#: Rich styles (DataTable cells are Rich text) of the verdict summaries.
_VERDICT_TONE = {"agrees": "green", "disagrees": "red", "cannot tell": "yellow"}


def one_line(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def open_kept_run(app: App, run: KeptRun) -> None:
    """Show a kept run: its result when it finished, else its failure record."""
    r = run.record
    label = f"{r.task} on {r.device} ({r.profile})"
    if run.has_result:
        open_result_file(app, run.result_path)
    else:
        app.push_screen(
            ResultScreen(
                ResultView(
                    failure=(r.status, r.message or "no result was written", r.log_tail),
                    source=run.folder,
                    label=label,
                )
            )
        )


def open_result_file(app: App, path: Path) -> bool:
    """Push the result view of ``path``; a file that cannot be read is one sentence."""
    try:
        report = load_result(path)
    except ResultError as exc:
        app.notify(str(exc), severity="error", timeout=8)
        return False
    app.push_screen(ResultScreen(ResultView(report, source=path)))
    return True


def pick_result(app: App, start: Path) -> None:
    def chosen(path: Path | None) -> None:
        if path is not None:
            open_result_file(app, path)

    app.push_screen(PickResultScreen(start), chosen)


class TasksScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="tasks.back"),
        Binding("x,ctrl+c", "cancel_run", "Cancel run", id="tasks.cancel"),
        Binding("r", "show_result", "Result", id="tasks.result"),
        Binding("h", "history", "History", id="tasks.history"),
        Binding("o", "open_result", "Open result", id="tasks.open-result"),
        Binding("d", "cycle('device')", "Device", id="tasks.device"),
        Binding("p", "cycle('profile')", "Profile", id="tasks.profile"),
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
        self._dirty = False

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="tasks-top"):
            yield DataTable(cursor_type="row", id="task-table")
            with Vertical(id="run-form"):
                yield Static(Content.styled("Device", "bold"))
                with RadioSet(id="device"):
                    for name in CHOICES:
                        yield Choice(name, value=name == self.device, name=name)
                yield Static(id="device-note")
                yield Static(Content.styled("Profile", "bold"))
                with RadioSet(id="profile"):
                    for name in PROFILES:
                        yield Choice(name, value=name == self.profile, name=name)
                yield Static(id="estimate")
                with Horizontal(id="overrides-row"):
                    yield Input(placeholder="seed", type="integer", id="seed")
                    yield Input(id="overrides")
        with Horizontal(id="tasks-bottom"):
            yield DataTable(cursor_type="row", id="queue")
            yield LiveRun(id="live")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "tasks"
        table = self.query_one("#task-table", DataTable)
        table.border_title = "Tasks of the test plan · enter: run"
        table.add_columns("task", "prio", "last", "claim")
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
        self.query_one("#run-form").border_title = "Run settings"
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
        last = self.store.last_verdicts()
        keep = table.cursor_row
        table.clear()
        for t in self.tasks:
            v = last.get(t.id)
            table.add_row(
                Text(t.id, "bold"),
                t.priority or "-",
                Text(v or "-", _VERDICT_TONE.get(v, "dim")),
                one_line(t.claim, 90),
                key=t.id,
            )
        table.move_cursor(row=keep)

    @property
    def selected_task(self):
        row = self.query_one("#task-table", DataTable).cursor_row
        return self.tasks[row] if 0 <= row < len(self.tasks) else None

    def _task_changed(self) -> None:
        task = self.selected_task
        if task is None:
            return
        base = task.settings.profile(self.profile)
        self.query_one("#seed", Input).value = str(base.seed)
        others = {k: v for k, v in base.to_dict().items() if k not in ("seed", "dtype")}
        shown = " ".join(
            f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in others.items()
        )
        box = self.query_one("#overrides", Input)
        box.value = ""
        box.placeholder = one_line(f"KEY=VALUE: {shown}", 200) if shown else "no settings to override"
        self._show_estimate()

    def _show_estimate(self) -> None:
        """Each profile's cost on the chosen device before anything runs, with where the
        figure comes from (:func:`~fpinspect.experiments.costs.estimate`); the chosen
        profile is marked ``●`` (not by colour alone)."""
        task = self.selected_task
        if task is None:
            return
        parts = []
        for profile in PROFILES:
            guess = estimate(
                task, profile, self.device, self.store.last_seconds(task.id, self.device, profile)
            )
            cost = (
                f"{'~' if guess.rough else '≈'} {duration_text(guess.seconds)} ({guess.source})"
                if guess is not None
                else "no estimate: not measured, not run on this device yet"
            )
            chosen = profile == self.profile
            parts.append(
                Content.assemble(
                    f"{CHOSEN if chosen else UNCHOSEN} ", (profile, "bold" if chosen else ""), f": {cost}"
                )
            )
        self.query_one("#estimate", Static).update(Content("\n").join(parts))

    def _show_devices(self) -> None:
        for button in self.query_one("#device", RadioSet).query(RadioButton):
            button.disabled = self.devices.get(button.name) is not None
        notes = [f"{d}: {why}" for d, why in self.devices.items() if why]
        self.query_one("#device-note", Static).update(Content.styled("\n".join(notes), styled.MUTED))

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
            next(
                b for b in self.query_one("#device", RadioSet).query(RadioButton) if b.name == "cpu"
            ).value = True
        if cpu_note:
            self.query_one("#device-note", Static).update(
                Content.styled(f"cpu: only tasks without fused kernels ({cpu_note})", styled.MUTED)
            )

    # -- form ------------------------------------------------------------------------------
    @on(DataTable.RowHighlighted, "#task-table")
    def _highlighted(self) -> None:
        self._task_changed()

    @on(RadioSet.Changed, "#device")
    def _device(self, event: RadioSet.Changed) -> None:
        self.device = event.pressed.name
        self._show_estimate()

    @on(RadioSet.Changed, "#profile")
    def _profile(self, event: RadioSet.Changed) -> None:
        self.profile = event.pressed.name
        self._task_changed()

    def action_cycle(self, which: str) -> None:
        buttons = [b for b in self.query_one(f"#{which}", RadioSet).query(RadioButton) if not b.disabled]
        current = getattr(self, which)
        names = [b.name for b in buttons]
        nxt = buttons[(names.index(current) + 1) % len(buttons)] if current in names else buttons[0]
        nxt.value = True

    def requested_settings(self, task):
        """The profile's settings with the form's seed and ``KEY=VALUE`` overrides (as
        ``fpinspect run --seed/--set`` takes them); SettingError says why not."""
        seed = self.query_one("#seed", Input).value.strip()
        assignments = self.query_one("#overrides", Input).value.split()
        return task.settings.profile(self.profile).with_overrides(int(seed) if seed else None, assignments)

    # -- runs ------------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#task-table")
    def _chosen(self) -> None:
        self.start_selected()

    def start_selected(self) -> TrackedRun | None:
        task = self.selected_task
        if task is None:
            return None
        if self.closing:
            return None
        why = self.devices.get(self.device)
        if why:
            self.notify(f"{self.device}: {why}" if why == CHECKING else why, severity="error")
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
        """Start the child and post its events; the child is read on a daemon thread, so a
        cancelled worker (quitting) stops waiting at once, always stops the child, and still
        writes the run's record (as cancelled, unless the child had said how it ended)."""
        worker = get_current_worker()
        started = time.monotonic()
        events: SimpleQueue = SimpleQueue()

        def read() -> None:
            try:
                for event in process.events():
                    events.put(event)
            except Exception as exc:  # a child that cannot start: OSError, and the like
                events.put(Failed("crash", f"the run could not start: {exc}"))
            events.put(None)

        threading.Thread(target=read, name=f"fpinspect-run-{run.id}", daemon=True).start()
        final, done = None, False
        try:
            while not done and not worker.is_cancelled:
                try:
                    batch = [events.get(timeout=POLL_SECONDS)]
                except Empty:
                    continue
                # what else has arrived goes in the same message: a fast stream costs the
                # UI one message per wake-up, not one per event
                while True:
                    try:
                        batch.append(events.get_nowait())
                    except Empty:
                        break
                if batch[-1] is None:
                    batch.pop()
                    done = True
                final = next((e for e in reversed(batch) if isinstance(e, (Finished, Failed))), final)
                if batch:
                    self.post_message(RunEvent(run.id, batch))
        finally:
            process.close()
        if final is None and worker.is_cancelled:
            final = Failed("cancelled", f"{run.label} was stopped: the app closed")
        ended = self._settle(run, process, final, time.monotonic() - started)
        if not worker.is_cancelled:
            self.post_message(ended)

    def _settle(self, run: TrackedRun, process: ExperimentProcess, final, seconds: float) -> RunEnded:
        """Write the run's folder (on the worker thread: figures take a while) and say how it ended."""
        folder = run.folder
        RunStore.keep_log(folder, process.log_path)
        shutil.rmtree(folder / "work", ignore_errors=True)
        base = dict(
            task=run.task,
            device=run.device,
            profile=run.profile,
            settings=run.settings.to_dict(),
            started=folder.name[:15],
        )
        if isinstance(final, Finished):
            try:
                report = Report.from_dict(final.result)
                written = write_outputs(report, folder)
            except Exception as exc:
                tail = f"{type(exc).__name__}: {exc}"
                RunStore.write_record(
                    folder, RunRecord(**base, status="error", message=tail, seconds=seconds)
                )
                return RunEnded(run.id, log_tail=tail)
            RunStore.write_record(
                folder, RunRecord(**base, status="finished", seconds=seconds, verdict=verdict_summary(report))
            )
            return RunEnded(run.id, report=report, written=written)
        failure = final if isinstance(final, Failed) else Failed("crash", "the run ended without a result")
        log = folder / "run.log"
        tail = readable_tail(log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else ""
        RunStore.write_record(
            folder,
            RunRecord(**base, status=failure.kind, message=failure.message, log_tail=tail, seconds=seconds),
        )
        return RunEnded(run.id, log_tail=tail)

    @on(RunEvent)
    def _event(self, msg: RunEvent) -> None:
        run = self.queue.get(msg.run_id)
        if run is not None:
            now = self.clock()
            for event in msg.events:
                run.apply(event, now)
            self._dirty = True

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
        self._schedule()
        self._refresh_queue()
        self._fill_tasks()
        self._show_estimate()
        self._redraw(force=True)
        if run is self.watched and self.app.screen is self and not run.cancel_requested:
            self.action_show_result()
        elif run.state == FINISHED:
            self.notify(f"{run.label} finished: {verdict_summary(run.report)}. r shows it.", timeout=4)

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

    def action_open_result(self) -> None:
        pick_result(self.app, self.store.root)

    def palette_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette."""
        yield SystemCommand("Run the highlighted task", "Queue it on the chosen device", self.start_selected)
        yield SystemCommand(
            "Cancel the watched run…", "Stop its child process (asks first)", self.action_cancel_run
        )
        yield SystemCommand(
            "History of kept runs", f"Runs under {shown_path(self.store.root)}", self.action_history
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
        followers = [w for w in self.workers if w.group == "runs" and not w.is_finished]
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


def duration_text(seconds: float) -> str:
    """``clock_text`` up to two days, whole days beyond (a full profile on a CPU)."""
    return f"{seconds / 86400:,.0f} days" if seconds >= 2 * 86400 else clock_text(seconds)


def run_nice() -> tuple[int, str | None]:
    """The niceness added to runs from ``$FPINSPECT_RUN_NICE`` and, when its value is not a
    whole number from 0 to 19, the sentence that says so (the default applies then)."""
    text = os.environ.get(RUN_NICE_ENV, "").strip()
    if not text:
        return RUN_NICE, None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if 0 <= value <= 19:
        return value, None
    return (
        RUN_NICE,
        f"${RUN_NICE_ENV} is {text!r}, not a whole number from 0 to 19: runs get niceness {RUN_NICE}.",
    )


def table_focused(event: DataTable.RowHighlighted) -> bool:
    return event.data_table.has_focus
