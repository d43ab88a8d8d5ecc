"""The tasks ``fpinspect run`` knows, by id. Loading a task never imports torch."""

from __future__ import annotations

import importlib

from .task import Task

_MODULES = {
    "S": "fpinspect.experiments.tasks.selfcheck",
    "A": "fpinspect.experiments.tasks.determinism",
    "C1": "fpinspect.experiments.tasks.scalar_mul",
    "C2": "fpinspect.experiments.tasks.reduction_order",
    "C3": "fpinspect.experiments.tasks.rsqrt_newton",
    "D": "fpinspect.experiments.tasks.data_movement",
    "B": "fpinspect.experiments.tasks.accumulated_error",
    "E": "fpinspect.experiments.tasks.training",
}
TASK_IDS = tuple(_MODULES)


class UnknownTask(LookupError):
    def __init__(self, task_id: str):
        self.task_id = task_id
        super().__init__(f"unknown task {task_id!r}; known tasks: {', '.join(TASK_IDS)}")


def canonical_id(task_id: str) -> str:
    """The registered spelling of ``task_id`` (ids are case-insensitive)."""
    for known in TASK_IDS:
        if known.lower() == task_id.strip().lower():
            return known
    raise UnknownTask(task_id)


def get_task(task_id: str) -> Task:
    return importlib.import_module(_MODULES[canonical_id(task_id)]).TASK


def all_tasks() -> list[Task]:
    return [get_task(t) for t in TASK_IDS]
