"""Run a task in a child process and follow its JSON-lines event stream.

The child is ``python -m fpinspect.experiments.child``; it works in its own directory
(its current directory, where stray compiler files and its log land) and writes events
on stdout and everything else to ``<entry>.log`` there. A cold start is nothing more than
a child whose environment points the compile caches at empty directories.

:class:`ExperimentProcess` is what the CLI and the TUI use: iterate :meth:`events` (in a
worker thread if need be), call :meth:`cancel` from elsewhere to stop the run, and use it
as a context manager so the child is always stopped and waited for.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import fpinspect

from .events import Event, Failed, Finished, ProtocolError, read_events
from .registry import get_task
from .results import TaskReport
from .settings import TaskSettings

#: The folder holding the ``fpinspect`` package, put on the child's ``PYTHONPATH``.
PACKAGE_ROOT = Path(fpinspect.__file__).resolve().parent.parent


class ExperimentFailed(RuntimeError):
    """A run ended with a ``failed`` event; ``kind`` is ``usage``, ``error``, ``crash`` or
    ``cancelled``, ``log_path`` the child's log when it was kept."""

    def __init__(self, event: Failed, log_path: Path | None = None):
        self.event = event
        self.log_path = log_path
        super().__init__(event.message)

    @property
    def kind(self) -> str:
        return self.event.kind


class ExperimentProcess:
    """One run of one task entry in a child process.

    ``settings`` default to ``profile``'s; ``env`` is added to this process's environment
    for the child; ``workdir`` is the child's working directory (a temporary one, removed
    on success, when not given). ``launcher`` is the command that starts the child's
    module (default: this Python; task E passes ``torchrun``'s). ``nice`` is added to the
    child's CPU niceness before it imports torch (0: as this process), so a
    watching UI keeps its share of the cores. Unknown task ids raise
    :class:`~.registry.UnknownTask` here, before any process starts.
    """

    def __init__(
        self,
        task_id: str,
        settings: TaskSettings | None = None,
        *,
        device: str = "auto",
        profile: str = "quick",
        entry: str = "run",
        env: Mapping[str, str] | None = None,
        workdir: Path | None = None,
        launcher: Sequence[str] | None = None,
        nice: int = 0,
    ):
        task = get_task(task_id)
        self.task_id = task.id
        self.settings = settings if settings is not None else task.settings.profile(profile)
        self.device = device
        self.profile = profile
        self.entry = entry
        self.env = dict(env or {})
        self.launcher = list(launcher) if launcher else [sys.executable]
        self.nice = nice
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix=f"fpinspect-{task.id}-"))
        self.log_path = self.workdir / f"{entry}.log"
        self._proc: subprocess.Popen[str] | None = None
        self._log = None
        self._cancelled = False
        self._keep = False

    def command(self) -> list[str]:
        return [
            *self.launcher,
            "-m",
            "fpinspect.experiments.child",
            "--task",
            self.task_id,
            "--device",
            self.device,
            "--profile",
            self.profile,
            "--entry",
            self.entry,
            "--workdir",
            str(self.workdir),
            "--settings",
            json.dumps(self.settings.to_dict()),
            *(["--nice", str(self.nice)] if self.nice else []),
        ]

    def start(self) -> None:
        env = {**os.environ, **self.env}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")
        self._proc = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log,
            cwd=self.workdir,
            env=env,
            text=True,
            encoding="utf-8",
            start_new_session=True,  # so cancel() reaches compiler workers too
        )

    def events(self) -> Iterator[Event]:
        """The child's events as they arrive; always ends with one ``Finished`` or
        ``Failed`` (a ``crash`` or ``cancelled`` one when the child could not say)."""
        if self._proc is None:
            self.start()
        assert self._proc is not None and self._proc.stdout is not None
        final: Event | None = None
        try:
            for event in read_events(self._proc.stdout):
                if isinstance(event, (Finished, Failed)):
                    final = self._settle(event)
                yield event
        except ProtocolError as exc:
            self.cancel()
            final = self._settle(Failed("crash", str(exc), self.log_tail()))
            yield final
        code = self._proc.wait()
        if final is None:
            if self._cancelled:
                yield self._settle(Failed("cancelled", f"task {self.task_id} was cancelled"))
            else:
                message = (
                    f"the process running task {self.task_id} exited with status {code} without a result"
                )
                yield self._settle(Failed("crash", message, self.log_tail()))

    def _settle(self, final: Event) -> Event:
        """Record how the run ended: the log is kept when the task raised or crashed."""
        self._keep = isinstance(final, Failed) and final.kind in ("error", "crash")
        return final

    @property
    def kept_log(self) -> Path | None:
        """The child's log when the run failed in a way it explains, else None."""
        return self.log_path if self._keep else None

    def cancel(self) -> None:
        """Stop the child and everything it started (safe to call from another thread)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        self._cancelled = True
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 30)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def close(self) -> None:
        """Stop the child if it still runs; remove a temporary work directory unless the
        task raised or crashed (its log is kept for the error message)."""
        self.cancel()
        if self._proc is not None and self._proc.stdout is not None:
            self._proc.stdout.close()
        if self._log is not None:
            self._log.close()
        if self._own_workdir and not self._keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> ExperimentProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def collect(process: ExperimentProcess, on_event: Callable[[Event], None] | None = None) -> dict[str, Any]:
    """Follow ``process`` until the child exits, passing every event to ``on_event``;
    return the ``finished`` payload or raise :class:`ExperimentFailed`."""
    last: Event | None = None
    for last in process.events():
        if on_event is not None:
            on_event(last)
    if isinstance(last, Failed):
        raise ExperimentFailed(last, process.kept_log)
    assert isinstance(last, Finished), "events() always ends with Finished or Failed"
    return last.result


def run_experiment(
    task_id: str,
    settings: TaskSettings | None = None,
    *,
    device: str = "auto",
    profile: str = "quick",
    on_event: Callable[[Event], None] | None = None,
) -> TaskReport:
    """Run one task in a child process and return its report."""
    with ExperimentProcess(task_id, settings, device=device, profile=profile) as process:
        return TaskReport.from_dict(collect(process, on_event))
