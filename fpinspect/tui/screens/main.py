"""The op list and its detail: load the run, compute every pair in the background, say where
the error starts, and move around with the keyboard."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable, Iterable
from functools import partial
from queue import Empty, LifoQueue
from time import monotonic
from typing import TypeVar

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.command import SimpleCommand
from textual.containers import Container
from textual.content import Content
from textual.widgets import Header, Input
from textual.worker import Worker, WorkerState, get_current_worker

from ...dumps import DumpComparison, InputError, PairPlan
from ...dumps.formats.graph import split_json
from ...dumps.formats.outline import outline_fused_ops
from ...dumps.runs.leafgraphs import leaf_sources
from ...dumps.runs.sources import Sources
from ...inspection.pipeline import Inspection
from ...inspection.settings import CompareSettings
from ...replay.evidence import OpReplay
from ...reports.export import compare_csv
from ..answering import Answering
from ..compiling import tell_when_compiling
from ..messages import (
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
from .op_actions import OpActionsScreen, tell_acted
from .pair import PairScreen
from .pick import PickFilesScreen
from .prompt import PathPrompt
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


#: Each worker below is given its description: Textual's default, the repr of its arguments
#: (a sweep's pair plans), would be made on the screen's thread as the worker starts.
class MainScreen(OpActionsScreen):
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
        super().__init__(sources, settings)
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
        super().on_unmount()

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
