"""What a task is: settings, a ``run`` function, its figures, and optional internal entries.

A task module defines one module-level ``TASK``. ``run(settings, backend, emit)`` executes
the experiment on a :class:`~.backends.base.Backend`, calls ``emit(event)`` for progress
and partial histograms, and returns a :class:`~.results.TaskResult`; ``figures`` name the
numbers of its result a baseline check compares. ``entries`` are further functions a task
may run in a child process of its own (task A's cold-start round); they take
``(settings, backend, emit, workdir)`` and return a JSON-ready dict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.figures import Figures
from .events import Event
from .results import TaskResult
from .settings import TaskSettings

if TYPE_CHECKING:
    from .backends.base import Backend

Emit = Callable[[Event], None]


class InputRefused(ValueError):
    """A file of the user's that a task cannot use (a run folder copied from elsewhere, a
    damaged checkpoint); the child reports it as bad usage (exit 2) in one sentence."""


Entry = Callable[[Any, "Backend", Emit, Path], dict[str, Any]]


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    #: The plan's claim this task tests, with its section number.
    claim: str
    settings: type[TaskSettings]
    run: Callable[[Any, Backend, Emit], TaskResult]
    #: The numbers of its ``result.json`` a baseline check compares, declared beside its
    #: result type; whoever records a run hands them to the results store.
    figures: Figures
    entries: Mapping[str, Entry] = field(default_factory=dict)
    #: The plan's priority: ``P0`` blocks other work, ``P1`` and ``P2`` follow.
    priority: str = ""
    #: Whether the task runs fused kernels; a task that only needs the device (S) gets a
    #: :class:`~.backends.device_only.DeviceOnly` and starts without the compiler stack.
    fusing: bool = True
