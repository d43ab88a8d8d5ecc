"""The experiment child process: ``python -m fpinspect.experiments.child ...``.

Started by :class:`~.engine.ExperimentProcess`, never by hand. It opens the backend,
runs one task entry, and writes the events of :mod:`.events` on its original stdout.
Everything else that would reach stdout (library prints, compiler output) is redirected
to stderr, so the event stream stays clean.

Under ``torchrun`` (task E with several processes) every rank runs this module; rank 0
writes the event stream on stdout and rank ``r > 0`` writes its own to
``<workdir>/rank<r>.events``, where the parent finds why a rank failed.

Exit status: 0 finished, 1 the task raised, 2 bad request (device unavailable, torch
missing, unknown entry, a file of the user's the task refuses).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np

import fpinspect

from .backends import DEVICES, Backend, BackendUnavailable, open_backend
from .engine import ExperimentFailed
from .events import Emitter, Failed, Finished, Started
from .registry import get_task
from .results import TaskReport, jsonable, task_curves
from .settings import PROFILES
from .task import InputRefused


def environment(backend: Backend) -> dict[str, Any]:
    """What a result must record about where it was measured."""
    import torch

    return {
        "device": backend.name,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "fpinspect": fpinspect.__version__,
        **backend.describe(),
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fpinspect.experiments.child")
    p.add_argument("--task", required=True)
    p.add_argument("--device", choices=DEVICES, default="auto")
    p.add_argument("--profile", choices=PROFILES, default="quick")
    p.add_argument("--entry", default="run")
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--settings", required=True, help="the task's settings as a JSON object")
    p.add_argument("--nice", type=int, default=0, help="added to the process's CPU niceness first")
    return p


def _run(args: argparse.Namespace, emit: Emitter) -> int:
    task = get_task(args.task)
    settings = task.settings.from_dict(json.loads(args.settings))
    if args.entry != "run" and args.entry not in task.entries:
        emit(Failed("usage", f"task {task.id} has no entry {args.entry!r}"))
        return 2
    try:
        import torch
    except ImportError:
        emit(Failed("usage", "experiments need torch: install fpinspect[experiments]"))
        return 2
    try:
        if task.fusing:
            backend = open_backend(args.device, args.workdir)
        else:
            from .backends.device_only import open_device

            backend = open_device(args.device)
    except BackendUnavailable as exc:
        emit(Failed("usage", str(exc)))
        return 2
    torch.manual_seed(settings.seed)
    emit(Started(task.id, backend.name, args.profile))
    if args.entry != "run":
        emit(Finished(jsonable(task.entries[args.entry](settings, backend, emit, args.workdir))))
        return 0
    result = task.run(settings, backend, emit)
    report = TaskReport(
        task=task.id,
        title=task.title,
        claim=task.claim,
        profile=args.profile,
        environment=environment(backend),
        settings=settings.to_dict(),
        data=result.data(),
        verdicts=result.verdicts(),
        tables=result.tables(),
        histograms=result.histograms(),
        curves=task_curves(result),
    )
    emit(Finished(report.to_dict()))
    return 0


def rank_events_path(workdir: Path, rank: int) -> Path:
    """Where rank ``rank > 0`` of a ``torchrun`` launch writes its events."""
    return workdir / f"rank{rank}.events"


def lower_priority(increment: int) -> None:
    """Add ``increment`` to this process's niceness (inherited by the compiler workers it
    starts); where the platform has no ``os.nice`` the run goes on at normal priority."""
    try:
        os.nice(increment)
    except (AttributeError, OSError) as exc:
        print(f"fpinspect: could not lower the priority by {increment}: {exc}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.nice:
        lower_priority(args.nice)
    rank = int(os.environ.get("RANK", "0"))
    if rank == 0:
        events = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    else:
        events = open(rank_events_path(args.workdir, rank), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    emit = Emitter(events)
    try:
        return _run(args, emit)
    except InputRefused as exc:
        emit(Failed("usage", str(exc)))
        return 2
    except Exception as exc:
        detail = traceback.format_exc()
        if isinstance(exc, ExperimentFailed) and exc.event.detail:
            detail = f"{exc.event.detail}\nThe failure above happened in a nested child process.\n{detail}"
        print(detail, file=sys.stderr)
        emit(Failed("error", f"{type(exc).__name__}: {exc}", detail))
        return 1
    finally:
        events.close()


if __name__ == "__main__":
    sys.exit(main())
