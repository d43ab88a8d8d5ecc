"""The Tasks pane stays responsive while a run streams events: key-press latency.

    .venv/bin/python benchmarks/bench_launcher.py [--presses N] [--rate HZ]

Headless (Textual's ``run_test``, 120x40). Each figure is the time from a key event reaching
the app (posted as the terminal driver posts it) until the task list has moved its cursor
and the screen has been redrawn after it, in three conditions measured in the same run:

1. idle — no run (the baseline: what a key costs the headless driver anyway);
2. task S running — a real child process (full profile with 65 536 anchors, so it runs
   throughout: minutes) streaming progress, messages and a partial ULP histogram every few
   milliseconds, at the pane's priority for runs (niceness +10 unless ``$FPINSPECT_RUN_NICE``
   says otherwise: ``FPINSPECT_RUN_NICE=0`` measures it at the app's priority);
3. a flood — a stand-in child streaming ``--rate`` events per second (partial histograms,
   progress and log lines, faster than task B) through the pane's real follower thread.

Target: every median and the 95th percentile under 100 ms. The load average before and
after is printed: the cores are shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from textual.events import Key  # noqa: E402
from textual.widgets import Input  # noqa: E402

from fpinspect.experiments.events import Failed, HistogramEvent, Message, Progress  # noqa: E402
from fpinspect.experiments.registry import get_task  # noqa: E402
from fpinspect.experiments.results import Histogram  # noqa: E402
from fpinspect.tui.app import AppSettings, make_app  # noqa: E402
from fpinspect.tui.launcher import RUNNING  # noqa: E402

SIZE = (120, 40)
DEVICES = {"cpu": None, "cuda": "not here", "npu": "not here"}


async def presses(pilot, n: int) -> list[float]:
    """Latency of ``n`` cursor moves, one at a time: key posted -> highlight handled -> painted."""
    app = pilot.app
    table = app.screen.query_one("#task-table")
    out = []
    for i in range(n):
        painted = asyncio.Event()
        row = table.cursor_row
        t0 = time.perf_counter()
        app.post_message(Key("down" if i % 2 == 0 else "up", None))
        while table.cursor_row == row:
            await asyncio.sleep(0.001)
        app.screen.call_after_refresh(painted.set)
        await painted.wait()
        out.append(time.perf_counter() - t0)
        await asyncio.sleep(0.02)  # a person's keys are this far apart at the very least
    return out


class FloodProcess:
    """Stands in for a run's child: yields partial histograms, progress and log lines at
    ``rate`` events per second until stopped, through the pane's real follower."""

    def __init__(self, rate: float, folder: Path):
        self.rate, self.sent = rate, 0
        self.log_path = folder / "none.log"
        self.stopped = threading.Event()

    def events(self):
        bins = tuple(str(b) for b in range(16))
        i = 0
        while not self.stopped.is_set():
            i += 1
            counts = tuple(float((i * (k + 1)) % 997) for k in range(16))
            yield HistogramEvent(Histogram(f"h{i % 2}", f"partial {i % 2}", "ULP distance", bins, counts))
            yield Progress("flood", i % 100, 100)
            yield Message(f"input {i}")
            self.sent += 3
            time.sleep(3 / self.rate)
        yield Failed("cancelled", "the flood was stopped")

    def cancel(self) -> None:
        self.stopped.set()

    close = cancel


async def measure(args, runs_dir: Path) -> dict[str, list[float]]:
    app = make_app(
        AppSettings(None, start="tasks", task="S", profile="full", devices=DEVICES, runs_dir=runs_dir)
    )
    out: dict[str, list[float]] = {}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        out["idle"] = await presses(pilot, args.presses)
        # a real run of S, long enough to last through the presses
        screen.query_one("#overrides", Input).value = "anchors=65536"
        screen.query_one("#task-table").focus()
        await pilot.press("enter")
        run = screen.queue.runs[0]
        while not run.histograms:
            await asyncio.sleep(0.05)
        before = len(run.histograms)
        table = screen.query_one("#task-table")
        table.focus()
        out["task S running"] = await presses(pilot, args.presses)
        out["_s_events"] = [float(before)]
        if run.state != RUNNING:
            raise SystemExit(f"task S ended ({run.state}) before the presses did: the figure is not valid")
        screen.cancel(run)
        while run.id in screen.processes:
            await asyncio.sleep(0.05)
        # a synthetic flood through the real follower (batching included)
        fake = screen.queue.add("B", "flood", "quick", get_task("S").settings.profile("quick"))
        fake.folder = runs_dir / "flood"
        fake.folder.mkdir()
        fake.state, fake.started = RUNNING, screen.clock()
        screen.watched = fake
        process = FloodProcess(args.rate, fake.folder)
        screen.processes[fake.id] = process
        t0 = time.perf_counter()
        screen.follow(fake, process)
        await asyncio.sleep(0.3)
        out["event flood"] = await presses(pilot, args.presses)
        out["_flood_rate"] = [process.sent / (time.perf_counter() - t0)]
        process.cancel()
        while fake.id in screen.processes:
            await asyncio.sleep(0.05)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presses", type=int, default=40)
    ap.add_argument("--rate", type=float, default=300.0, help="events per second in the flood")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = asyncio.run(measure(args, Path(tmp)))
    base = statistics.median(out["idle"])
    print(
        f"Tasks pane key presses, headless {SIZE[0]}x{SIZE[1]}, {args.presses} presses each (target < 100 ms)"
    )
    for name in ("idle", "task S running", "event flood"):
        xs = sorted(out[name])
        med, p95 = statistics.median(xs), xs[int(0.95 * (len(xs) - 1))]
        print(
            f"  {name:<16} median {1000 * med:6.1f} ms   p95 {1000 * p95:6.1f} ms   max {1000 * xs[-1]:6.1f} ms"
            f"   ({med / base:.2f}x idle)"
        )
    print(f"  flood: {out['_flood_rate'][0]:.0f} events/s posted while pressing")
    nice = os.environ.get("FPINSPECT_RUN_NICE", "10 (default)")
    print(f"  runs' niceness {nice}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
