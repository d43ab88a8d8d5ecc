"""Following one run of the Tasks pane on a worker thread: the child's events in batches as
they arrive, then the run's folder written (record, log, outputs). No widget here: the
screen's worker passes how to post a batch and how to tell it was cancelled."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from queue import Empty, SimpleQueue

from ..experiments.engine import ExperimentProcess
from ..experiments.events import Event, Failed, Finished
from ..experiments.output import write_outputs
from ..experiments.results import TaskReport
from ..experiments.runs import RunRecord, RunStore, readable_tail, verdict_summary
from .launcher import TrackedRun
from .messages import RunEnded

#: Environment variable: how much lower the runs' CPU priority is than the app's (niceness
#: added to each child; 0 runs them at the app's priority).
RUN_NICE_ENV = "FPINSPECT_RUN_NICE"
#: The default: the child yields the cores to the UI, so keys stay quick while it runs.
RUN_NICE = 10
#: Seconds between a follower's checks of its worker's cancellation.
POLL_SECONDS = 0.05


def follow_events(
    run: TrackedRun,
    process: ExperimentProcess,
    post: Callable[[list[Event]], None],
    cancelled: Callable[[], bool],
) -> Event | None:
    """Start the child and ``post`` its events; return the one that says how it ended (a
    ``cancelled`` failure when ``cancelled()`` turned true first, None when the child said
    nothing). The child is read on a daemon thread, so a cancelled follower stops waiting at
    once, and the child is always stopped on the way out."""
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
        while not done and not cancelled():
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
                post(batch)
    finally:
        process.close()
    if final is None and cancelled():
        final = Failed("cancelled", f"{run.label} was stopped: the app closed")
    return final


def settle(run: TrackedRun, process: ExperimentProcess, final: Event | None, seconds: float) -> RunEnded:
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
            report = TaskReport.from_dict(final.result)
            written = write_outputs(report, folder)
        except Exception as exc:
            tail = f"{type(exc).__name__}: {exc}"
            RunStore.write_record(folder, RunRecord(**base, status="error", message=tail, seconds=seconds))
            return RunEnded(run.id, log_tail=tail)
        RunStore.write_record(
            folder, RunRecord(**base, status="finished", seconds=seconds, verdict=verdict_summary(report))
        )
        _record(final.result, folder, run)
        return RunEnded(run.id, report=report, written=written)
    failure = final if isinstance(final, Failed) else Failed("crash", "the run ended without a result")
    log = folder / "run.log"
    tail = readable_tail(log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else ""
    RunStore.write_record(
        folder,
        RunRecord(**base, status=failure.kind, message=failure.message, log_tail=tail, seconds=seconds),
    )
    return RunEnded(run.id, log_tail=tail)


def _record(result: dict, folder: Path, run: TrackedRun) -> None:
    """Record a finished run in the results database as ``fpinspect run`` does (for baseline
    checks); when the database cannot be used, the run's folder stays its only record."""
    from ..experiments.registry import get_task
    from ..store import ResultsDB, StoreError

    with suppress(StoreError), ResultsDB() as db:
        db.record_result(
            result, str(folder), run.settings.workload(), figures=get_task(result["task"]).figures
        )


def follow_run(
    run: TrackedRun,
    process: ExperimentProcess,
    post: Callable[[list[Event]], None],
    cancelled: Callable[[], bool],
) -> RunEnded:
    """:func:`follow_events`, then :func:`settle` with the run's wall time."""
    started = time.monotonic()
    final = follow_events(run, process, post, cancelled)
    return settle(run, process, final, time.monotonic() - started)


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
