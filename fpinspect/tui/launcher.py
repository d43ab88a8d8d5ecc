"""What the Tasks pane knows about its runs: each run's state as its events arrive, and the
queue (one run at a time per device). Plain Python: the screen's handlers call it, and it
never touches a widget."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..experiments.events import (
    CurveEvent,
    CurvePoint,
    Failed,
    Finished,
    HistogramEvent,
    Message,
    Progress,
    Started,
)
from ..experiments.results import Histogram, TaskReport

#: Messages kept per run for the log pane.
LOG_LINES = 200

QUEUED, RUNNING, FINISHED, FAILED = "queued", "running", "finished", "failed"


@dataclass
class TrackedRun:
    """One requested run of a task, from the queue to its result."""

    id: int
    task: str
    device: str
    profile: str
    settings: Any
    state: str = QUEUED
    started: float | None = None
    ended: float | None = None
    stage: str = ""
    done: int = 0
    total: int = 0
    #: When the current stage was first seen, and its steps done then, for its ETA.
    stage_started: float | None = None
    stage_done: int = 0
    log: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    #: Lines ever appended to ``log`` (a view appends only the ones it has not shown).
    logged: int = 0
    #: The latest histogram of each name, the most recently updated last.
    histograms: dict[str, Histogram] = field(default_factory=dict)
    #: Line charts: chart name -> line label -> (xs, ys).
    curves: dict[str, dict[str, tuple[tuple[float, ...], tuple[float, ...]]]] = field(default_factory=dict)
    #: Each chart's x label and whether its x axis is logarithmic.
    curve_axes: dict[str, tuple[str, bool]] = field(default_factory=dict)
    report: TaskReport | None = None
    failure: Failed | None = None
    folder: Path | None = None
    written: list[Path] = field(default_factory=list)
    #: The last lines of a failed run's log (tracebacks cut to their last line).
    log_tail: str = ""
    cancel_requested: bool = False
    #: Bumped by every event that changes a histogram or a curve: a view redraws its plots
    #: only when this moved since it last drew them.
    plots_revision: int = 0

    @property
    def label(self) -> str:
        return f"#{self.id} {self.task} on {self.device} ({self.profile})"

    @property
    def active(self) -> bool:
        return self.state in (QUEUED, RUNNING)

    def elapsed(self, now: float) -> float:
        if self.started is None:
            return 0.0
        return (self.ended if self.ended is not None else now) - self.started

    def eta(self, now: float) -> float | None:
        """Seconds left in the current stage, from its pace so far; None before any step."""
        steps = self.done - self.stage_done
        if self.state != RUNNING or steps <= 0 or not self.total or self.stage_started is None:
            return None
        return (now - self.stage_started) / steps * (self.total - self.done)

    def apply(self, event: Any, now: float) -> None:
        """Fold one event of the child's stream into the state. Kinds this pane does not know
        are logged, so a newer task's events never break the view."""
        if isinstance(event, Started):
            self.say(f"started {event.task} on {event.device} (profile {event.profile})")
            self.device = event.device
        elif isinstance(event, Progress):
            if event.stage != self.stage:
                self.stage, self.stage_started, self.stage_done = event.stage, now, event.done
            self.done, self.total = event.done, event.total
        elif isinstance(event, Message):
            self.say(event.text)
        elif isinstance(event, HistogramEvent):
            # the latest updated last: B's eager and fused of the chain running now
            self.histograms.pop(event.histogram.name, None)
            self.histograms[event.histogram.name] = event.histogram
            self.plots_revision += 1
        elif isinstance(event, Finished):
            self.state, self.ended = FINISHED, now
        elif isinstance(event, Failed):
            self.state, self.ended, self.failure = FAILED, now, event
        elif isinstance(event, CurveEvent):
            # a whole chart (B's CDFs): the newest replaces the one of the same title
            c = event.curve
            self.curves[c.title or c.name] = {line.label: (tuple(line.x), tuple(line.y)) for line in c.series}
            self.curve_axes[c.title or c.name] = (c.xlabel, c.xscale == "log")
            self.plots_revision += 1
        elif isinstance(event, CurvePoint):
            # one sample of a training (E): extends the series' line of each metric
            for metric, value in event.values.items():
                lines = self.curves.setdefault(metric, {})
                xs, ys = lines.get(event.series, ((), ()))
                lines[event.series] = (xs + (float(event.step),), ys + (float(value),))
                self.curve_axes[metric] = ("step", False)
            self.plots_revision += 1
        else:
            self.say(f"({type(event).__name__} event: not shown here)")

    def say(self, line: str) -> None:
        self.log.append(line)
        self.logged += 1


class RunQueue:
    """Runs in request order; at most one running per device."""

    def __init__(self) -> None:
        self.runs: list[TrackedRun] = []
        self._next_id = 1

    def add(self, task: str, device: str, profile: str, settings: Any) -> TrackedRun:
        run = TrackedRun(self._next_id, task, device, profile, settings)
        self._next_id += 1
        self.runs.append(run)
        return run

    def get(self, run_id: int) -> TrackedRun | None:
        return next((r for r in self.runs if r.id == run_id), None)

    def startable(self) -> list[TrackedRun]:
        """Queued runs whose device is free, the oldest first for each device."""
        busy = {r.device for r in self.runs if r.state == RUNNING}
        out = []
        for run in self.runs:
            if run.state == QUEUED and run.device not in busy:
                busy.add(run.device)
                out.append(run)
        return out

    def active(self) -> list[TrackedRun]:
        return [r for r in self.runs if r.active]
