"""Building the Tasks pane for tests: a results directory of its own, devices preset (no
probe child), a clock that only moves when told, and waiting on runs."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import traceback
from datetime import datetime
from pathlib import Path

from fpinspect.experiments.results import Histogram, Table, TaskReport, Verdict
from fpinspect.tui.app import AppSettings, InspectorApp, make_app
from fpinspect.tui.launcher import RUNNING

DEVICES = {
    "cpu": None,
    "cuda": "device 'cuda' is not available: no GPU here",
    "npu": "device 'npu' is not available: torch_npu is not installed",
}
SIZE = (120, 40)
#: Seconds a whole pilot run may take, the app's shutdown and asyncio.run's closing included.
DRIVE_TIMEOUT = 240.0
#: Task S's quick profile, smaller still: the child's start-up is most of the time.
SMALL_S = "anchors=2 float32_pairs=65536 stats_size=8192 device_size=4096"


class FakeClock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def tasks_app(runs_dir: Path, clock=None, **settings) -> InspectorApp:
    settings.setdefault("start", "tasks")
    return make_app(
        AppSettings(
            None,
            runs_dir=runs_dir,
            devices=DEVICES,
            clock=clock or FakeClock(),
            now=lambda: datetime(2026, 12, 1, 7, 45, 0),
            **settings,
        )
    )


def watch_a_running_run(screen, clock):
    """A run of the task highlighted in the Tasks ``screen``, marked running (no child) and watched."""
    run = screen.queue.add("S", "cpu", "quick", screen.requested_settings(screen.selected_task))
    run.state, run.started = RUNNING, clock()
    screen.watched = run
    return run


def sample_report(task: str = "C3", agrees=(True, True)) -> TaskReport:
    return TaskReport(
        task=task,
        title="rsqrt: Newton–Raphson iteration count",
        claim="§1.2 (4): iteration counts change the last bit",
        profile="quick",
        environment={"device": "cpu", "device_name": "Test CPU", "torch": "2.13.0"},
        settings={"dtype": "float16", "seed": 1234},
        data={"by_iterations": [{"iterations": 1, "max_ulp": 3.2}]},
        verdicts=[
            Verdict("iteration variants differ", "they differ", "74.8% differ", agrees[0]),
            Verdict("more iterations, smaller error", "error shrinks", "3.21 → 0.5 ULP", agrees[1]),
        ],
        tables=[
            Table(
                "Plan table: iterations → last-bit error", ("iterations", "max ULP"), ((1, 3.2), (2, 0.503))
            )
        ],
        histograms=[
            Histogram(
                "c3_newton_1",
                "Newton–Raphson, 1 iteration (fused) vs float64",
                "error in ULP of the result",
                ("0", "(0, 0.5]", "(0.5, 1]", "(1, 2]", "> 8"),
                (0, 66000, 39700, 156000, 12),
            )
        ],
    )


def write_result(folder: Path, report: TaskReport) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "result.json"
    path.write_text(json.dumps(report.to_dict()), "utf-8")
    return path


def drive(app, scenario, size=SIZE, timeout: float = DRIVE_TIMEOUT, **kw) -> None:
    """Run ``scenario(pilot)`` inside ``app.run_test`` in ``asyncio.run`` on a thread of its
    own, and fail (not hang) when the whole of it, the app's shutdown and the joining of its
    worker threads included, is not over within ``timeout`` seconds: the failure shows the
    stack of every thread and of every asyncio task then."""
    box: dict = {}

    async def main():
        box["loop"] = asyncio.get_running_loop()
        async with app.run_test(size=size, **kw) as pilot:
            await pilot.pause()
            await scenario(pilot)

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="pilot-loop", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f"the pilot run did not end within {timeout:.0f} s:\n{stacks(box.get('loop'))}")
    if "error" in box:
        raise box["error"]


def stacks(loop) -> str:
    """Every thread's stack, then every pending asyncio task of ``loop`` with its stack."""
    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        out.append(f"--- thread {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame)))
    if loop is not None:
        for task in asyncio.all_tasks(loop):
            lines = "".join(traceback.format_list(traceback.extract_stack(f)) for f in task.get_stack())
            out.append(f"--- task {task.get_name()} ({task.get_coro()!r})\n{lines}")
    return "\n".join(out)
