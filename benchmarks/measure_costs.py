"""Measure what a run of each task costs here: the figures behind the Tasks pane's estimates.

    .venv/bin/python benchmarks/measure_costs.py [TASK:PROFILE ...]   (default: every task, quick)

Each run goes the way the pane starts it (:class:`ExperimentProcess`, a child process,
compile caches as they are) on the cpu; the wall time from start to the child's last event
is printed with the load average before and after, and as the line to paste into
``fpinspect/experiments/costs.py``'s ``MEASURED`` table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]

from fpinspect.experiments.engine import ExperimentProcess, collect  # noqa: E402
from fpinspect.experiments.registry import TASK_IDS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", help="TASK:PROFILE, e.g. S:full (default: every task's quick)")
    args = ap.parse_args()
    runs = [r.split(":") for r in args.runs] or [[t, "quick"] for t in TASK_IDS]
    for task, profile in runs:
        before = os.getloadavg()[0]
        t0 = time.monotonic()
        with ExperimentProcess(task, device="cpu", profile=profile) as process:
            collect(process)
        seconds = time.monotonic() - t0
        print(
            f'    ("{task}", "{profile}"): {seconds:.0f},  # load {before:.1f} -> {os.getloadavg()[0]:.1f}',
            flush=True,
        )


if __name__ == "__main__":
    main()
