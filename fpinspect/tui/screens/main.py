"""The op list and its detail: load the run, compute every pair in the background, say where
the error starts, and move around with the keyboard."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import webbrowser
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from queue import Empty, LifoQueue
from time import monotonic
from typing import TypeVar

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.command import SimpleCommand
from textual.containers import Container
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Header, Input
from textual.worker import Worker, WorkerState, get_current_worker

from ...dumps import DumpComparison, InputError, PairPlan
from ...dumps.graph import split_json
from ...dumps.leafgraphs import leaf_sources
from ...dumps.outline import outline_fused_ops
from ...dumps.runfolder import confirmations
from ...dumps.sources import Sources
from ...explorer import missing as explorer_missing
from ...inspection.pipeline import Inspection
from ...inspection.settings import CompareSettings
from ...replay.evidence import OpReplay
from ...replay.repro import ReproError
from ...reports.export import compare_csv
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
from ..answering import Answering
from ..compiling import tell_when_compiling
from ..messages import (
    ConfirmProgress,
    Exported,
    Loaded,
    LoadFailed,
    Localised,
    Outlined,
    RecordsComputed,
    Replayed,
)
from ..model import WORST, OpRow, RunView, view_of
from ..pairs import FilePair, RecordPair
from ..widgets import styled
from ..widgets.banner import Banner
from ..widgets.footer import KeysFooter
from ..widgets.op_detail import OpDetail, PairCard
from ..widgets.op_list import OpList
from .pair import PairScreen
from .pick import PickFilesScreen
from .prompt import PathPrompt
from .switches import SwitchesScreen
from .warnings import WarningsScreen

T = TypeVar("T")

#: Seconds between batches of records posted by the sweep (keeps the message rate low).
BATCH_SECONDS = 0.1
#: Fused ops listed as soon as they are decoded, before the rest of the outline (a screenful and more).
FIRST_OPS = 1000
#: Findings of a replaced localisation freed between two chances for a key (:meth:`MainScreen._free`).
FREE_CHUNK = 2000
#: The interpreter's switch interval while the screen is shown (:meth:`MainScreen.on_mount`).
SWITCH_SECONDS = 0.001


class _Cancelled(Exception):
    """The worker was cancelled (the screen went, or its work was replaced) between two items."""


def _between_items(worker: Worker, answering: Answering) -> Callable[[], None]:
    """What a worker does between two items of its loops, and the hook it gives those of
    :mod:`fpinspect.dumps` (their ``on_item``): wait while a key is answered
    (:mod:`~..answering`), and end the call with :class:`_Cancelled` once ``worker`` is
    cancelled, so that quitting does not wait for a whole graph to be read or localised."""

    def between() -> None:
        answering.wait()
        if worker.is_cancelled:
            raise _Cancelled

    return between


def _long_lived(make: Callable[[], T]) -> T:
    """``make()`` with the cyclic collector paused, and what it built then frozen
    (:func:`gc.freeze`): a loaded run or a localisation lives as long as the screen, and left to
    the collector its objects would be rescanned on every full collection, on whichever thread
    triggers one. Frozen objects are still freed once nothing refers to them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return make()
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


def _first_long_lived() -> Callable[..., T]:
    """A sweep's ``call``: ``fn(*args)``, the first one through :func:`_long_lived` (the first
    pair loads numba and the compiled kernels, objects that live as long as the process)."""
    first = True

    def calling(fn: Callable[..., T], *args) -> T:
        nonlocal first
        if first:
            first = False
            return _long_lived(partial(fn, *args))
        return fn(*args)

    return calling


def _replayed_localised(
    inspection: Inspection, name: str, evidence: dict[str, OpReplay], on_item: Callable[[], None]
) -> Replayed:
    """The :class:`~..messages.Replayed` of ``name`` with the localisation every replay so far
    gives (made, lookups included, inside :func:`_long_lived`)."""
    return Replayed(name, evidence[name], inspection.localise(evidence, on_item))


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


#: Each worker below is given its description: Textual's default, the repr of its arguments
#: (a sweep's pair plans), would be made on the screen's thread as the worker starts.
class MainScreen(Screen):
    BINDINGS = [
        Binding(
            "slash",
            "filter",
            "Filter",
            tooltip="Filter by op name, type, original op, verdict or cause",
            id="filter",
        ),
        Binding("n", "next_failing(1)", "Next fail", tooltip="Next failing op", id="next-failing"),
        Binding("N", "next_failing(-1)", "Prev fail", tooltip="Previous failing op", id="previous-failing"),
        Binding(
            "i",
            "jump_introduced",
            "First error",
            tooltip="The first op that introduces an error",
            id="jump-introduced",
        ),
        Binding(
            "p",
            "neighbour('producers')",
            "Producer",
            show=False,
            tooltip="Go to a fused op feeding this one",
            id="producers",
        ),
        Binding(
            "c",
            "neighbour('consumers')",
            "Consumer",
            show=False,
            tooltip="Go to a fused op fed by this one",
            id="consumers",
        ),
        Binding(
            "s",
            "sort",
            "Sort",
            show=False,
            tooltip="Sort by worst error / back to graph order",
            id="sort-worst",
        ),
        Binding(
            "a",
            "toggle_all",
            "All ops",
            show=False,
            tooltip="List every op of the graph (with counts by type) / the fused ops only",
            id="all-ops",
        ),
        Binding("d", "diff_files", "Diff", tooltip="Diff two .npy files (mode 2)", id="diff-files"),
        Binding(
            "r",
            "replay",
            "Replay",
            show=False,
            tooltip="Replay the op's original ops on its own inputs (eager and fp64)",
            id="replay",
        ),
        Binding(
            "w",
            "warnings",
            "Warnings",
            show=False,
            tooltip="The warnings about the inputs (ignored folders, files, rows; graph oddities)",
            id="input-warnings",
        ),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="clear-filter"),
        Binding(
            "m",
            "model_explorer",
            "Model Explorer",
            show=False,
            tooltip="Open the run in Google's Model Explorer, both graphs side by side, this op selected",
            id="model-explorer",
        ),
        Binding(
            "f",
            "switches",
            "Switches",
            tooltip="The switches that turn this fused op off (AUTOFUSE_FLAGS; copy them)",
            id="op-switches",
        ),
        Binding(
            "R",
            "repro",
            "Repro",
            tooltip="Write this fused op's repro bundle to a folder, and show the command that runs it",
            id="op-repro",
        ),
        Binding(
            "H",
            "report",
            "Report",
            tooltip="Write the run's HTML report (fpinspect report)",
            id="html-report",
        ),
        Binding(
            "v",
            "confirm(False)",
            "Confirm",
            tooltip="Prove this op at the model's outputs: the capture run again with its region unfused (fpinspect confirm)",
            id="op-confirm",
        ),
        Binding(
            "V",
            "confirm(True)",
            "Bisect",
            show=False,
            tooltip="Confirm every region, and find a smallest set whose unfusing fixes the outputs (confirm --bisect)",
            id="confirm-bisect",
        ),
        Binding(
            "x", "cancel_confirm", "Cancel confirm", tooltip="Stop the confirm that runs", id="cancel-confirm"
        ),
        Binding(
            "b",
            "baseline",
            "Baseline",
            tooltip="Record this comparison in the results store and tag it as a baseline",
            id="tag-baseline",
        ),
    ]

    def __init__(self, sources: Sources, *, settings: CompareSettings | None = None) -> None:
        super().__init__()
        self.sources = sources
        #: how the run is compared and judged, as ``fpinspect compare`` with the same options
        self.settings = settings or CompareSettings()
        self.inspection: RunView | None = None
        #: the fused ops listed while the run loads (:class:`~..messages.Outlined`)
        self.outline: list[OpRow] | None = None
        self.by_worst = False
        #: pairs the sweep computes next: those of the op just highlighted
        self.demand: LifoQueue[PairPlan] = LifoQueue()
        #: the sweep has ended: pairs asked for later (unfused ops) are computed on their own
        self.swept = False
        #: fused ops to replay, the one asked for last first, and the worker replaying them
        self.to_replay: LifoQueue[str] = LifoQueue()
        self._replaying: Worker | None = None
        #: the Model Explorer server started for this run (``m``), stopped with the screen
        self._explorer: subprocess.Popen | None = None
        #: the confirm that runs (``v``), one at a time
        self._confirming: Worker | None = None
        #: set by ``x``: the confirm stops after its model run under way; its worker runs until
        #: then (a cancelled thread worker would be let go while its thread still runs the model)
        self._stop_confirm = threading.Event()
        #: a folder written by ``fpinspect capture`` (``v`` confirms its ops); asked once, not on each key
        self.capture = is_capture(sources)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Banner(id="banner")
        yield Input(placeholder="filter by op name, type, original op, verdict or cause", id="filter")
        with Container(id="panes"):
            yield OpList(id="ops")
            yield OpDetail(id="detail")
        yield KeysFooter()

    def on_mount(self) -> None:
        # Each time this screen's thread waits (for a key, a repaint) it must win the interpreter
        # lock back from busy workers, which give it up only every switch interval: 1 ms, not 5.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, SWITCH_SECONDS))
        self.query_one(Banner).say(f"Reading the graphs and dump folders of {self.sources.name}…", busy=True)
        # after the first paint: reading holds the interpreter lock for long stretches (json)
        self.call_after_refresh(self.load, self.sources)

    def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)
        if self._explorer is not None:
            self._explorer.terminate()

    # -- workers ------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="reading the run")
    def load(self, sources: Sources) -> None:
        between = _between_items(get_current_worker(), self.app.answering)
        try:
            sources = leaf_sources(sources, warn=partial(self.notify, severity="warning", timeout=10))
            # both graphs split first: the one long call of each (the ops are decoded one by one after)
            split = {}
            for path in (sources.open_graph, sources.close_graph):
                if path is not None:
                    split[path] = split_json(path)
                    between()
            opened = split[sources.open_graph]
            outline = None
            if opened:
                outline = _long_lived(
                    partial(
                        outline_fused_ops,
                        opened,
                        self.settings.fused_types,
                        first=FIRST_OPS,
                        on_first=lambda ops: self.post_message(Outlined(ops, complete=False)),
                        on_item=between,
                    )
                )
            if outline:
                self.post_message(Outlined(outline))
            insp = _long_lived(partial(RunView.load, sources, self.settings, split=split, on_item=between))
        except _Cancelled:
            return
        except InputError as exc:
            self.post_message(LoadFailed(str(exc)))
            return
        self.post_message(Loaded(insp))

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False, description="comparing every pair")
    def sweep(self, view: RunView, plans: list[PairPlan], demand: LifoQueue[PairPlan]) -> None:
        """Compute every pair of the run's inspection once, in list order except that pairs the
        screen asks for on ``demand`` (the highlighted op's) go first, newest first; post
        batches, then localise with the replays done so far."""
        between = _between_items(get_current_worker(), self.app.answering)
        tell_when_compiling(self.app)
        inspection = view.inspection
        batch, last, done, total = [], monotonic(), 0, len(plans)
        try:
            for record, demanded in inspection.records(plans, demand=demand, call=_first_long_lived()):
                batch.append(record)
                done += 1
                between()  # the next pair waits while a key is answered
                if demanded or monotonic() - last > BATCH_SECONDS:
                    self.post_message(RecordsComputed(batch, done, total))
                    batch, last = [], monotonic()
                    # the records so far live as long as the screen: frozen, a full collection
                    # never rescans them (on 10 000 dumped ops of 100 000, each one held the
                    # interpreter lock longer as they piled up: 76 to 357 ms, keys waited)
                    gc.freeze()
        except _Cancelled:
            return
        self.post_message(RecordsComputed(batch, done, total))
        replays = dict(view.replays)  # those done while the pairs were computed
        try:  # the records of the plans with nothing to compare are made here, in bulk
            # the message too: its lookups (100 000 findings by name, the flagged ops) are
            # long-lived containers, left young they cost the next collections (5-9 ms)
            localised = _long_lived(lambda: Localised(inspection.localise(replays, on_item=between)))
        except _Cancelled:
            return
        self.post_message(localised)

    @work(
        thread=True,
        exclusive=True,
        group="on-demand",
        exit_on_error=False,
        description="comparing the pairs of an op",
    )
    def compute_on_demand(self, comparison: DumpComparison, plans: list[PairPlan]) -> None:
        """The pairs of one op highlighted after the sweep ended (an op fusion left alone)."""
        worker = get_current_worker()
        tell_when_compiling(self.app)
        records = []
        for plan in plans:
            if worker.is_cancelled:
                return
            records.append(comparison.compute(plan))
        self.post_message(RecordsComputed(records, len(records), len(records), on_demand=True))

    @work(thread=True, group="replay", exit_on_error=False, description="replaying ops")
    def replay(
        self,
        inspection: Inspection,
        queue: LifoQueue[str],
        known: dict[str, OpReplay],
        localise: Callable[[], bool],
    ) -> None:
        """Replay the fused ops on ``queue`` one by one, the one asked for last first (those in
        ``known`` are done), and post each; once the queue is empty, post the last one again with
        the localisation all replays so far give, if ``localise()`` says every pair is compared
        (one localisation per run of replays: for 100 000 ops each takes seconds). One runs at
        a time (:meth:`_start_replay`)."""
        worker = get_current_worker()
        between = _between_items(worker, self.app.answering)
        evidence = dict(known)
        last = None  # the op replayed last, since the last localisation
        while not worker.is_cancelled:
            try:
                name = queue.get_nowait()
            except Empty:
                name = None
            if name is None:
                if last is not None and localise():
                    try:  # the message made long-lived too, as Localised
                        replayed = _long_lived(
                            partial(_replayed_localised, inspection, last, evidence, between)
                        )
                    except _Cancelled:
                        return
                    self.post_message(replayed)
                return
            if name in evidence:
                continue
            self.app.answering.wait()  # as the next op's replay (Python for tens of ms) would not
            (replayed,) = inspection.replays([name], cancelled=lambda: worker.is_cancelled)
            evidence[name] = replayed.replay
            if worker.is_cancelled:
                return
            last = name
            self.post_message(Replayed(name, evidence[name], None))

    @work(thread=True, group="free", exit_on_error=False, description="freeing a replaced localisation")
    def _free(self, held: list) -> None:
        """Free what ``held`` holds (a replaced localisation) :data:`FREE_CHUNK` findings at a
        time: freeing 100 000 findings at once is one stretch of the interpreter lock (~27 ms),
        on whichever thread drops the last reference — the screen's, when the new localisation
        replaced it; between two chunks, waiting while a key is answered."""
        (localisation,) = held
        held.clear()
        findings = list(localisation.ops)
        del localisation  # the containers go; the findings live on in `findings`
        while findings:
            del findings[-FREE_CHUNK:]
            self.app.answering.wait()

    @work(
        thread=True,
        exclusive=True,
        group="export",
        exit_on_error=False,
        description="exporting the comparison",
    )
    def export(self, inspection: Inspection, path: str, fmt: str, known: dict[str, OpReplay]) -> None:
        report = inspection.report(compare_input=True, known=known)
        if get_current_worker().is_cancelled:
            return
        try:
            with open(path, "w", encoding="utf-8", newline="") as f:
                if fmt == "json":
                    json.dump(report.to_json(), f, indent=2)
                else:
                    compare_csv(report, f)
        except OSError as exc:
            self.post_message(Exported(path, problem=f"{path}: {exc.strerror or exc}"))
            return
        self.post_message(Exported(path, len(report.records)))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        tell_acted(self, event)
        if event.worker.group == "confirm" and event.state in (
            WorkerState.SUCCESS,
            WorkerState.CANCELLED,
            WorkerState.ERROR,
        ):
            self._confirmed()
        if (
            event.worker.group == "replay"
            and event.state == WorkerState.SUCCESS
            and not self.to_replay.empty()
        ):
            self._start_replay()  # an op was queued as the worker found the queue empty
        if event.state == WorkerState.ERROR:
            self._worker_failed(event.worker)

    def _worker_failed(self, worker: Worker) -> None:
        """Say in one sentence what failed, and stop what waited on it: the replays queued (their
        cards' "replaying…"), or the banner's spinner."""
        error = worker.error
        sentence = f"{worker.description[:1].upper()}{worker.description[1:]} failed ({type(error).__name__}: {error})."
        self.notify(sentence, severity="error", timeout=10)
        insp = self.inspection
        if worker.group == "replay" and insp is not None:
            while not self.to_replay.empty():
                self.to_replay.get_nowait()
            insp.replaying.clear()
            current = self.query_one(OpList).current
            if current is not None:
                self.query_one(OpDetail).show(insp, current.name)
        banner = self.query_one(Banner)
        if banner.busy:
            banner.say(sentence, tone="failed")

    # -- handlers: they own the state ----------------------------------------------------
    @on(LoadFailed)
    def _load_failed(self, msg: LoadFailed) -> None:
        self.app.exit(msg.problem, return_code=2)

    @on(Outlined)
    def _outlined(self, msg: Outlined) -> None:
        """List the fused ops while the rest loads: the keys move along them meanwhile."""
        if self.inspection is not None:
            return
        ops = self.query_one(OpList)
        first = self.outline is None
        # on the last of the first ops (G, end): the cursor follows to the last of them all
        at_end = not first and ops.on_last
        self.outline = msg.rows
        self._apply_view()  # keeps the op highlighted among the first ones
        if at_end:
            ops.action_jump(-1)
        if first and not self.query_one("#filter", Input).has_class("-shown"):  # not while a filter is typed
            ops.focus()
        listed = f"{len(msg.rows)} fused ops" if msg.complete else f"The first {len(msg.rows)} fused ops"
        self.query_one(Banner).say(
            f"{listed}, in file order for now: reading the graphs and dump folders of {self.sources.name}…",
            busy=True,
        )

    @on(Loaded)
    def _loaded(self, msg: Loaded) -> None:
        insp = self.inspection = msg.inspection
        warnings = insp.warnings
        if warnings:
            n = len(warnings)
            self.notify(
                f"{n} warning{'s' if n != 1 else ''} about the inputs, e.g. {warnings[0]}  (w: all of them)",
                severity="warning",
                timeout=10,
            )
        self.outline = None
        self._apply_view()  # keeps the op highlighted in the outline, and the filter typed
        ops = self.query_one(OpList)
        if not self.query_one("#filter", Input).has_class("-shown"):  # not while a filter is typed
            ops.focus()
        banner = self.query_one(Banner)
        if not insp.rows:
            self._show_all(True)
            banner.say(
                f"{insp.sources.open_graph} has no fused op (of any fusion kind): is it the fusion-off "
                "graph? Listing all its ops; give the graph of the run with fusion on to compare.",
                tone="failed",
            )
            self.swept = True
        elif insp.comparing:
            plans = insp.sweep_order()
            banner.say(f"Comparing {len(plans)} pairs of {len(insp.rows)} fused ops…", busy=True)
            self.sweep(insp, plans, self.demand)
        else:
            banner.say(insp.sources.how_to_compare(), tone="browse")

    @on(RecordsComputed)
    def _records(self, msg: RecordsComputed) -> None:
        insp = self.inspection
        changed = insp.add(msg.records)
        ops = self.query_one(OpList)
        ops.refresh_rows(changed)
        current = ops.current
        if current is not None and any(r.plan.fused_op == current.name for r in msg.records):
            self.query_one(OpDetail).show(insp, current.name)
        if msg.on_demand:
            return
        self.query_one(Banner).say(
            f"Comparing pairs: {msg.done} of {msg.total} done, {len(insp.failing)} failing ops so far…",
            busy=True,
        )

    @on(Localised)
    def _localised(self, msg: Localised) -> None:
        self.swept = True
        self._show_localisation(msg.localisation, msg.findings)
        # then the evidence: replay the failing and warned ops, in list order (the findings' order:
        # until now no op without one has a verdict)
        insp = self.inspection
        names = [n for n in msg.flagged if n in insp.by_name and n not in insp.replays]
        if names:
            for name in reversed(names):
                self.to_replay.put(name)
            insp.replaying.update(names)
            self._start_replay()

    @on(Replayed)
    def _replayed(self, msg: Replayed) -> None:
        insp = self.inspection
        insp.replays[msg.name] = msg.replay
        insp.replaying.discard(msg.name)
        if msg.localisation is not None:
            self._show_localisation(msg.localisation, msg.findings)
        else:
            current = self.query_one(OpList).current
            if current is not None and current.name == msg.name:
                self.query_one(OpDetail).show(insp, msg.name)

    def _start_replay(self) -> None:
        """Start the replay worker unless one runs: it takes what is queued as it goes."""
        if self._replaying is not None and not self._replaying.is_finished:
            return
        insp = self.inspection
        self._replaying = self.replay(
            insp.inspection, self.to_replay, dict(insp.replays), lambda: insp.localisation is not None
        )

    def _show_localisation(self, localisation, findings) -> None:
        insp = self.inspection
        replaced = [insp.localisation]
        insp.localise(localisation, findings)
        if replaced[0] is not None and replaced[0] is not localisation:
            # its 100 000 findings, freed here, held the lock for ~27 ms: freed behind
            self._free(replaced)
        else:
            replaced.clear()
        ops = self.query_one(OpList)
        if self.by_worst or self.query_one("#filter", Input).value.strip():
            self._apply_view()  # sorted by worst: now with every score; verdicts filtered anew
        else:
            ops.refresh()  # the same rows in the same order, with their findings
        if ops.current is not None:
            self.query_one(OpDetail).show(insp, ops.current.name)
        first = insp.first_introduced
        banner = self.query_one(Banner)
        if first is not None:
            banner.say(
                Content.assemble(
                    ("First introduced error: ", "bold"),
                    (first.name, "bold $text-error"),
                    f" ({first.type}): {first.reason}.  ",
                    ("i", "bold reverse"),
                    " jumps there",
                ),
                tone="introduced",
            )
        else:
            failing = any(r.verdict == "fail" for r in insp.rows)
            banner.say(localisation.advice(), tone="failed" if failing else "clean")

    @on(Exported)
    def _exported(self, msg: Exported) -> None:
        if msg.problem:
            self.notify(f"Export failed: {msg.problem}", severity="error")
        else:
            self.notify(f"Wrote {msg.records} records to {msg.path}")

    @on(OpList.Highlighted)
    def _highlighted(self, msg: OpList.Highlighted) -> None:
        insp = self.inspection
        if insp is not None:
            self.query_one(OpDetail).show(insp, msg.name)
        if insp is None:
            return
        pending = insp.pending(msg.name) if msg.name else []
        if pending and self.swept:
            self.compute_on_demand(insp.comparison, pending)
            return
        for plan in reversed(pending):
            self.demand.put(plan)

    @on(OpList.Chosen)
    def _chosen(self, msg: OpList.Chosen) -> None:
        plan = self.query_one(OpDetail).picked(self.inspection, msg.name)
        if plan is not None:
            self.drill(plan)

    @on(OpList.PairStepped)
    def _pair_stepped(self, msg: OpList.PairStepped) -> None:
        self.query_one(OpDetail).step_pick(self.inspection, msg.step)

    @on(PairCard.Chosen)
    def _card_chosen(self, msg: PairCard.Chosen) -> None:
        self.drill(msg.plan)

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self._apply_view()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one(OpList).focus()

    # -- moving around --------------------------------------------------------------------
    def _apply_view(self) -> None:
        """List the rows the filter matches, in the chosen order: the run's once loaded, the
        outline's before."""
        rows = self.inspection.rows if self.inspection is not None else self.outline
        if rows is None:
            return
        ops = self.query_one(OpList)
        keep = ops.current.name if ops.current else None
        ops.set_rows(rows, view_of(rows, self.query_one("#filter", Input).value, self.by_worst), keep)

    def go_to(self, name: str) -> None:
        """Highlight op ``name``, clearing the filter if it hides the op."""
        ops = self.query_one(OpList)
        if not ops.move_to(name):
            self.query_one("#filter", Input).value = ""
            self._apply_view()
            ops.move_to(name)
        ops.focus()

    def drill(self, plan: PairPlan) -> None:
        if self.inspection.comparison is None:
            self.notify(
                "Browsing one graph: there is no fusion-off side to compare with.", severity="warning"
            )
            return
        self.app.push_screen(
            PairScreen(RecordPair(self.inspection.comparison, plan), self.inspection.replay(plan))
        )

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-shown")
        self.set_focus(box)  # now, not after queued keys: what is typed next is the filter

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_class("-shown"):
            box.value = ""
            box.remove_class("-shown")
            self._apply_view()
            self.query_one(OpList).focus()

    def action_next_failing(self, step: int) -> None:
        ops = self.query_one(OpList)
        if self.inspection is None or not ops.shown:
            return
        by_name = self.inspection.by_name
        names = ops.shown
        n = len(names)
        for k in range(1, n + 1):
            i = (ops.cursor + step * k) % n
            if by_name[names[i]].verdict == "fail":
                if (step > 0) != (i > ops.cursor):
                    self.notify("Search wrapped around the list.", timeout=2)
                ops.cursor = i
                ops.focus()
                return
        done = "" if self.inspection.localisation or not self.inspection.comparing else " yet"
        self.notify(f"No failing op is listed{done}.", timeout=3)

    def action_replay(self) -> None:
        insp = self.inspection
        current = self.query_one(OpList).current
        if insp is None or current is None:
            return
        if insp.comparison is None:
            self.notify(
                "Browsing one graph: replay needs the fusion-off graph and dumps.", severity="warning"
            )
            return
        if current.name not in insp.pairs.outputs:
            self.notify(
                f"{current.name} was left alone by fusion: replay compares a fused op with the"
                " original ops it replaced.",
                timeout=5,
            )
            return
        if current.name in insp.replays:
            self.notify(f"{current.name} is replayed: its output cards show the replay.", timeout=3)
            return
        self.to_replay.put(current.name)
        insp.replaying.add(current.name)
        self.query_one(OpDetail).show(insp, current.name)
        self._start_replay()

    def action_jump_introduced(self) -> None:
        first = self.inspection.first_introduced if self.inspection else None
        if first is None:
            self.notify("No op is known to introduce an error (yet).", timeout=3)
            return
        self.go_to(first.name)

    def action_neighbour(self, kind: str) -> None:
        ops = self.query_one(OpList)
        if self.inspection is None or ops.current is None:
            return
        name = ops.current.name
        found = getattr(self.inspection, kind)(name)
        if not found:
            self.notify(f"{name} has no fused {kind}.", timeout=3)
        elif len(found) == 1:
            self.go_to(found[0])
        else:
            self.app.search_commands(
                [SimpleCommand(n, partial(self.go_to, n)) for n in found],
                placeholder=f"{kind} of {name}: choose one…",
            )

    def _show_all(self, show: bool) -> None:
        insp = self.inspection
        insp.show_all_ops(show)
        self._apply_view()
        banner = self.query_one(Banner)
        if not show:
            banner.note(None)
            return
        banner.note(self._all_ops_note())

    def _all_ops_note(self) -> Content:
        """The banner's second line while every op is listed: the counts by type."""
        insp = self.inspection
        fused = sum(f for _, _, f in insp.type_counts())
        kinds = ", ".join(f"{t} {n}" + (f" ({f} fused)" if f else "") for t, n, f in insp.type_counts()[:8])
        more = " …" if len(insp.type_counts()) > 8 else ""
        return Content.assemble(
            (f"All {len(insp.rows)} ops, {fused} fused: ", "bold"),
            kinds + more,
            ("   a: fused ops only", styled.MUTED),
        )

    def action_toggle_all(self) -> None:
        if self.inspection is None:
            return
        self._show_all(not self.inspection.showing_all)
        if not self.inspection.showing_all:
            self.notify(f"Listing the {len(self.inspection.rows)} fused ops.", timeout=2)

    def action_sort(self) -> None:
        self.by_worst = not self.by_worst
        self._apply_view()
        self.notify("Sorted by worst error first." if self.by_worst else "Listed in graph order.", timeout=2)

    def action_warnings(self) -> None:
        if self.inspection is None:
            self.notify("The inputs are still being read.", timeout=2)
        elif not (warnings := self.inspection.warnings):
            self.notify("No warning about the inputs.", timeout=2)
        else:
            self.app.push_screen(WarningsScreen(self.sources.name, warnings))

    def action_diff_files(self) -> None:
        def diff(chosen: tuple[str, str] | None) -> None:
            if chosen is not None:
                self.app.push_screen(PairScreen(FilePair(*chosen)))

        self.app.push_screen(PickFilesScreen(self.sources.data_root), diff)

    def action_export(self, fmt: str) -> None:
        if self.inspection is None or self.inspection.comparison is None:
            self.notify("Nothing to export: no comparison is loaded.", severity="warning")
            return
        default = os.path.join(os.getcwd(), f"fpinspect-{self.sources.name}.{fmt}")

        def chosen(path: str | None) -> None:
            if path:
                self.notify(f"Exporting to {path}…", timeout=2)
                self.export(self.inspection.inspection, path, fmt, dict(self.inspection.replays))

        self.app.push_screen(PathPrompt(f"Export every record as {fmt.upper()} to:", default), chosen)

    # -- acting on the highlighted fused op ---------------------------------------------------
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

    def action_go_to_op(self) -> None:
        if self.inspection is None:
            return
        rows = self.inspection.rows
        self.app.search_commands(
            [
                SimpleCommand(
                    r.name, partial(self.go_to, r.name), f"{r.op.type} · {r.verdict or 'not compared'}"
                )
                for r in rows
            ],
            placeholder="Go to fused op…",
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

    def palette_commands(self) -> Iterable[SystemCommand]:
        """This screen's entries in the command palette."""
        yield SystemCommand("Go to op…", "Jump to a fused op by name", self.action_go_to_op)
        yield SystemCommand(
            "Open in Model Explorer",
            "Both graphs side by side in Google's Model Explorer, the verdicts on the nodes, this op selected",
            self.action_model_explorer,
        )
        yield SystemCommand("Diff two .npy files…", "Mode 2: compare any two tensors", self.action_diff_files)
        for fmt in ("csv", "json"):
            yield SystemCommand(
                f"Export comparison as {fmt.upper()}…",
                "Every record, inputs too, as fpinspect "
                f"compare --compare-input --worst {WORST} --format {fmt} writes it",
                partial(self.action_export, fmt),
            )
        yield SystemCommand(
            "Jump to the first introduced error",
            "The fused op where the error starts",
            self.action_jump_introduced,
        )
        yield SystemCommand(
            "Switches of this op",
            "The AUTOFUSE_FLAGS that turn the highlighted fused op off",
            self.action_switches,
        )
        yield SystemCommand(
            "Repro bundle of this op…",
            "Write the highlighted fused op's repro bundle to a folder",
            self.action_repro,
        )
        if self.capture:
            yield SystemCommand(
                "Confirm this op",
                "Run the capture again with its region unfused (fpinspect confirm)",
                partial(self.action_confirm, False),
            )
            yield SystemCommand(
                "Confirm and bisect every region",
                "A smallest set of regions whose unfusing fixes the outputs (confirm --bisect)",
                partial(self.action_confirm, True),
            )
        yield SystemCommand(
            "HTML report…", "Write the run's HTML report (fpinspect report)", self.action_report
        )
        yield SystemCommand(
            "Tag as baseline…", "Record this comparison in the results store and tag it", self.action_baseline
        )
        yield SystemCommand("Sort by worst error / graph order", "Toggle the list order", self.action_sort)
        yield SystemCommand(
            "All ops / fused ops only",
            "List every op of the graph, with counts by type, or the fused ops only",
            self.action_toggle_all,
        )
