"""Shared set-up for the experiment tests.

All child processes of one test session share one Inductor cache folder (compiles after
the first reuse its precompiled header); cold-start runs make their own empty folder.
Each task's quick profile runs once per session on the CPU and its report is shared.
"""

from __future__ import annotations

import os

import pytest

from fpinspect.experiments.engine import run_experiment


@pytest.fixture(scope="session", autouse=True)
def inductor_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("inductor-cache")
    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    else:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved


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
