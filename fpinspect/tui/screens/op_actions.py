"""The inspector's actions on the highlighted fused op, apart from the screen that lists the ops:
``f`` its switches, ``v``/``V`` confirm (and bisect) on a worker with ``x`` to cancel, ``R`` its
repro bundle, ``H`` the run's HTML report, ``b`` a baseline in the results store, ``m`` Model
Explorer. Each calls what its command calls (:mod:`fpinspect.tui.acting`) on a worker and says
what it did in one sentence (:func:`act`, :func:`tell_acted`); files go where the user says
(:func:`ask_place`), never inside the run or the package.

:class:`OpActionsScreen` holds them; :class:`~.main.MainScreen` (the op list) is one, and so is
each leaf of a whole run opened from its grid."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import webbrowser
from collections.abc import Callable
from functools import partial
from pathlib import Path

from textual import on, work
from textual.content import Content
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from ...dumps import InputError
from ...dumps.runs.runfolder import confirmations
from ...dumps.runs.sources import Sources
from ...explorer import missing as explorer_missing
from ...inspection.settings import CompareSettings
from ...replay.repro import ReproError
from ...store import StoreError
from .. import model_explorer
from ..acting import (
    ActionRefused,
    Cancelled,
    beside_run,
    check_place,
    confirm_op,
    inductor_check,
    is_capture,
    new_folder,
    op_switches,
    record_baseline,
    shown,
    write_report,
    write_repro,
)
from ..messages import ConfirmProgress
from ..widgets import styled
from ..widgets.banner import Banner
from ..widgets.op_detail import OpDetail
from ..widgets.op_list import OpList
from .prompt import PathPrompt
from .switches import SwitchesScreen


def act(screen: Screen, job: Callable[[], str], what: str, group: str = "act") -> Worker:
    """Run ``job`` on a worker of ``screen``; its sentence (or the one sentence its failure
    makes) is its result, shown by :func:`tell_acted`."""
    said = f"{what[:1].upper()}{what[1:]}"

    def run() -> tuple[str, str]:
        try:
            return job(), "information"
        except Cancelled:
            return f"{said}: cancelled; nothing was kept.", "warning"
        except (InputError, ReproError, StoreError, ActionRefused) as exc:
            return f"{said}: {str(exc).rstrip('.')}.", "error"
        except OSError as exc:
            return f"{said}: {exc.strerror or exc} ({exc.filename}).", "error"

    screen.notify(f"{said}…", timeout=3)
    return screen.run_worker(run, thread=True, group=group, exit_on_error=False, description=what)


def tell_acted(screen: Screen, event: Worker.StateChanged) -> None:
    """Show the sentence of an action's worker (:func:`act`) once it is done."""
    if event.worker.group in ("act", "confirm") and event.state == WorkerState.SUCCESS:
        sentence, severity = event.worker.result
        screen.notify(sentence, severity=severity, timeout=20)


def ask_place(
    screen: Screen, sources: Sources, question: str, default: Path, then: Callable[[Path], None]
) -> None:
    """Ask where to write (``default`` prefilled); ``then(path)`` once it is a place outside
    the run ``sources`` and the package."""

    def chosen(answer: str | None) -> None:
        if not answer:
            return
        try:
            then(check_place(sources, answer))
        except ActionRefused as exc:
            screen.notify(str(exc), severity="error", timeout=8)

    screen.app.push_screen(PathPrompt(question, shown(default)), chosen)


class OpActionsScreen(Screen):
    """A screen of a run's fused ops that acts on the highlighted one (the list and the
    ``inspection`` it shows are the subclass's: :class:`~.main.MainScreen`)."""

    def __init__(self, sources: Sources, settings: CompareSettings | None = None) -> None:
        super().__init__()
        self.sources = sources
        #: how the run is compared and judged, as ``fpinspect compare`` with the same options
        self.settings = settings or CompareSettings()
        #: the Model Explorer server started for this run (``m``), stopped with the screen
        self._explorer: subprocess.Popen | None = None
        #: the confirm that runs (``v``), one at a time
        self._confirming: Worker | None = None
        #: set by ``x``: the confirm stops after its model run under way; its worker runs until
        #: then (a cancelled thread worker would be let go while its thread still runs the model)
        self._stop_confirm = threading.Event()
        #: a folder written by ``fpinspect capture`` (``v`` confirms its ops); asked once, not on each key
        self.capture = is_capture(sources)

    def on_unmount(self) -> None:
        if self._explorer is not None:
            self._explorer.terminate()

    def _fused_op(self, what: str) -> str | None:
        """The highlighted fused op's name, or None (said) where there is none to ``what``."""
        insp = self.inspection
        current = self.query_one(OpList).current
        if insp is None or current is None:
            self.notify("The run is still being read.", timeout=3)
            return None
        if insp.comparison is None:
            self.notify(
                f"Browsing one graph: to {what} needs the fusion-off graph and dumps.", severity="warning"
            )
            return None
        if current.name not in insp.pairs.outputs or not current.op.original_op_names:
            self.notify(f"{current.name} is not a fused op: nothing to {what}.", timeout=5)
            return None
        return current.name

    def _act(self, job: Callable[[], str], what: str, group: str = "act") -> Worker:
        return act(self, job, what, group)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "confirm":
            return self.capture
        if action == "cancel_confirm":
            return self._confirming is not None
        return True

    def action_confirm(self, bisect: bool) -> None:
        if self._confirming is not None:
            if self._stop_confirm.is_set():
                self.notify(
                    "The confirm stops after its model run under way: v again once it has.", timeout=4
                )
            else:
                self.notify("A confirm is running: x cancels it.", timeout=4)
            return
        name = self._fused_op("confirm")
        if name is None:
            return
        run_dir = self.sources.run_dir
        stopping = self._stop_confirm
        stopping.clear()

        def job() -> str:
            worker = get_current_worker()
            return confirm_op(
                run_dir,
                name,
                bisect=bisect,
                tell=lambda line: self.post_message(ConfirmProgress(line)),
                stop=lambda: stopping.is_set() or worker.is_cancelled,
            )

        what = f"confirming {name}" + (" and bisecting every region" if bisect else "")
        self._confirming = self._act(job, what, group="confirm")
        self.query_one(Banner).note(Content.styled(f"{what}: starting…   x cancels", "$text-accent"))
        self.refresh_bindings()

    @on(ConfirmProgress)
    def _confirm_progress(self, msg: ConfirmProgress) -> None:
        if self._confirming is not None:
            self.query_one(Banner).note(
                Content.assemble(
                    (f"{self._confirming.description}: ", "$text-accent"),
                    msg.line,
                    ("   cancelling…" if self._stop_confirm.is_set() else "   x cancels", styled.MUTED),
                )
            )

    def action_cancel_confirm(self) -> None:
        if self._confirming is not None and not self._stop_confirm.is_set():
            self._stop_confirm.set()
            self.query_one(Banner).note(
                Content.styled(f"{self._confirming.description}: cancelling…", "$text-accent")
            )
            self.notify("Confirm cancelled: it stops after the model run under way.", timeout=4)

    def _confirmed(self) -> None:
        """The confirm worker ended: its verdict (kept in confirm.json) shown on each op."""
        self._confirming = None
        self.refresh_bindings()
        insp = self.inspection
        self.query_one(Banner).note(self._all_ops_note() if insp is not None and insp.showing_all else None)
        if insp is None or self.sources.run_dir is None:
            return
        insp.confirmed = confirmations(self.sources.run_dir)
        current = self.query_one(OpList).current
        if current is not None:
            self.query_one(OpDetail).show(insp, current.name)

    def _ask_place(self, question: str, default: Path, then: Callable[[Path], None]) -> None:
        ask_place(self, self.sources, question, default, then)

    def _capture_lines(self, name: str) -> list[str]:
        """For a capture: what ``confirm`` proved of ``name``, and how to find Inductor's switch."""
        if not self.capture:
            return []
        run = shown(self.sources.run_dir)
        confirmed = self.inspection.confirmed.get(name)
        proof = (
            f"confirm.json: {confirmed.get('verdict')} at the model's outputs (this region left unfused alone)"
            if confirmed is not None
            else "not confirmed yet: v proves it at the model's outputs (fpinspect confirm)"
        )
        return [
            proof,
            f"i (or fpinspect switches {run} --for inductor) finds the torch.compiler.disable lines for the",
            "regions to leave unfused and runs the capture again without them, to verify them.",
        ]

    def action_switches(self) -> None:
        name = self._fused_op("switch off")
        if name is None:
            return
        try:
            found = op_switches(self.inspection.open_model, name)
        except ActionRefused as exc:
            self.notify(f"{exc}.", timeout=5)
            return
        file = beside_run(self.sources) / f"{self.sources.name}-{name}-switches.txt"
        inductor = None
        localisation = self.inspection.localisation
        if self.capture and localisation is not None:
            run_dir, introduced = self.sources.run_dir, [f.name for f in localisation.introduced]

            def inductor(tell, stop) -> list[str]:
                return inductor_check(run_dir, introduced, tell=tell, stop=stop)

        self.app.push_screen(SwitchesScreen(found, self._capture_lines(name), file, inductor))

    def action_repro(self) -> None:
        name = self._fused_op("reproduce")
        if name is None:
            return
        default = new_folder(beside_run(self.sources), f"{self.sources.name}-{name}-repro")

        def write(out: Path) -> None:
            if out.exists() and any(out.iterdir()):
                self.notify(f"{out} is not empty: choose a new folder.", severity="error", timeout=8)
                return
            self._act(
                partial(write_repro, self.sources, self.settings, name, out),
                f"writing the repro bundle of {name}",
            )

        self._ask_place(f"Write the repro bundle of {name} into the new folder:", default, write)

    def action_report(self) -> None:
        if self.inspection is None or self.inspection.comparison is None:
            self.notify("Nothing to report: no comparison is loaded.", severity="warning")
            return
        default = beside_run(self.sources) / f"{self.sources.name}-report.html"

        def write(out: Path) -> None:
            self._act(
                partial(write_report, self.sources, self.settings, out), f"writing the HTML report to {out}"
            )

        self._ask_place("Write the run's HTML report to:", default, write)

    def action_baseline(self) -> None:
        if self.inspection is None or self.inspection.comparison is None:
            self.notify("Nothing to record: no comparison is loaded.", severity="warning")
            return

        def tag(name: str | None) -> None:
            if name:
                self._act(
                    partial(record_baseline, self.sources, self.settings, name),
                    f"recording this comparison as baseline {name}",
                )

        self.app.push_screen(
            PathPrompt("Record this comparison in the results store, tagged as baseline:", self.sources.name),
            tag,
        )

    def action_model_explorer(self) -> None:
        problem = explorer_missing("Opening the run in Model Explorer")
        if problem is not None or not self.sources.complete:
            self.notify(
                problem or "Model Explorer shows a whole run: both graphs and dumps.", severity="warning"
            )
            return
        if self._explorer is not None:
            self._explorer.terminate()
        current = self.query_one(OpList).current
        self._explorer = model_explorer.start(self.sources, current.name if current else None)
        self.notify("Starting Model Explorer…", timeout=3)
        self.await_explorer(self._explorer)

    @work(
        thread=True, exclusive=True, group="model-explorer", exit_on_error=False, description="Model Explorer"
    )
    def await_explorer(self, server: subprocess.Popen) -> None:
        url, why = model_explorer.page_of(server)
        if url is None:
            self.notify(why, severity="error", timeout=10)
            return
        self.notify(f"Model Explorer: {url}", timeout=15)
        if (
            os.environ.get("DISPLAY")
            or os.environ.get("WAYLAND_DISPLAY")
            or sys.platform in ("darwin", "win32")
        ):
            webbrowser.open(url)  # not a text browser, which would take this terminal
