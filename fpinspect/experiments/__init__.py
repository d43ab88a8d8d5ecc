"""The test plan's experiments: tasks, device backends, and the child-process runner.

``run_experiment("C1", device="cpu", profile="quick")`` runs a task in a child process and
returns its :class:`Report`; :class:`ExperimentProcess` gives the same run as a live
stream of events (progress, messages, partial histograms and curves, the result) for a
progress bar or the TUI. ``write_outputs(report, folder)`` writes ``result.json``, ``report.md`` and
the figures. Nothing in this package imports torch at import time; the child does.
"""

from .engine import ExperimentFailed, ExperimentProcess, collect, run_experiment
from .events import (
    CurveEvent,
    CurvePoint,
    Event,
    Failed,
    Finished,
    HistogramEvent,
    Message,
    Progress,
    Started,
    read_events,
)
from .output import write_outputs
from .registry import TASK_IDS, UnknownTask, all_tasks, get_task
from .results import Curve, Histogram, Report, Series, Table, Verdict
from .settings import PROFILES

__all__ = [
    "PROFILES",
    "TASK_IDS",
    "Curve",
    "CurveEvent",
    "CurvePoint",
    "Event",
    "ExperimentFailed",
    "ExperimentProcess",
    "Failed",
    "Finished",
    "Histogram",
    "HistogramEvent",
    "Message",
    "Progress",
    "Report",
    "Series",
    "Started",
    "Table",
    "UnknownTask",
    "Verdict",
    "all_tasks",
    "collect",
    "get_task",
    "read_events",
    "run_experiment",
    "write_outputs",
]
