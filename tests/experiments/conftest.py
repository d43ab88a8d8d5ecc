"""Shared set-up for the experiment tests.

Each task's quick profile runs once per session on the CPU and its report is shared. Its
child processes use the session's one Inductor cache folder (``tests/conftest.py``);
cold-start runs make their own empty folder.
"""

from __future__ import annotations

import pytest

from fpinspect.experiments.engine import run_experiment


class QuickReports:
    """Runs a task's quick profile on the CPU at most once per session."""

    def __init__(self):
        self.reports = {}
        self.events = {}

    def __call__(self, task_id: str):
        if task_id not in self.reports:
            events = self.events[task_id] = []
            self.reports[task_id] = run_experiment(
                task_id, device="cpu", profile="quick", on_event=events.append
            )
        return self.reports[task_id]


@pytest.fixture(scope="session")
def quick_report(inductor_cache):
    return QuickReports()
