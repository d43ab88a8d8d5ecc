"""The test plan's experiments: tasks, device backends, and the child-process runner.

``run_experiment("C1", device="cpu", profile="quick")`` runs a task in a child process and
returns its :class:`TaskReport`; :class:`ExperimentProcess` gives the same run as a live
stream of events (progress, messages, partial histograms and curves, the result) for a
progress bar or the TUI. ``write_outputs(report, folder)`` writes ``result.json``, ``report.md`` and
the figures. Nothing in this package imports torch at import time; the child does.
Importing this package imports none of its modules: each name below loads its module on
first use (the CLI's option lists need only :mod:`.settings` and :mod:`.backends`).
"""

from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    "ExperimentFailed": ".engine",
    "ExperimentProcess": ".engine",
    "collect": ".engine",
    "run_experiment": ".engine",
    "CurveEvent": ".events",
    "CurvePoint": ".events",
    "Event": ".events",
    "Failed": ".events",
    "Finished": ".events",
    "HistogramEvent": ".events",
    "Message": ".events",
    "Progress": ".events",
    "Started": ".events",
    "read_events": ".events",
    "write_outputs": ".output",
    "TASK_IDS": ".registry",
    "UnknownTask": ".registry",
    "all_tasks": ".registry",
    "get_task": ".registry",
    "Curve": ".results",
    "Histogram": ".results",
    "TaskReport": ".results",
    "Series": ".results",
    "Table": ".results",
    "Verdict": ".results",
    "PROFILES": ".settings",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
