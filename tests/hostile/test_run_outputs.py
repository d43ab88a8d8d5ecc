"""``run --out``: the output folder holds a whole result set or none, and an unusable
folder is refused before any work."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

import fpinspect.experiments.output as output
from fpinspect.experiments.results import Histogram, TaskReport, Verdict


def _report(title: str, figures: int = 3) -> TaskReport:
    return TaskReport(
        task="C2",
        title=title,
        claim="§1.2 (3)",
        profile="quick",
        environment={"device": "cpu"},
        settings={"dtype": "float16", "seed": 7},
        data={},
        verdicts=[Verdict("topic", "expected", "measured", True)],
        tables=[],
        histograms=[Histogram(f"h{i}", f"Figure {i}", "x", ("0", "1"), (4, 1)) for i in range(figures)],
    )


_WRITER = """
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[2])
from test_run_outputs import _report

import fpinspect.experiments.output as output

output.write_outputs(_report("second", figures=int(sys.argv[3])), Path(sys.argv[1]))
"""


@pytest.mark.skipif(not output.can_draw(), reason="the figures need matplotlib")
def test_an_interrupted_write_leaves_the_previous_set_whole(tmp_path):
    """ctrl+c (a real SIGINT) while the second set's figures are drawn, once the first is on disk."""
    import signal
    import subprocess
    import sys
    import time

    output.write_outputs(_report("first"), tmp_path)
    before = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    here = os.path.dirname(__file__)
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path), here, "400"], stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while not any(tmp_path.glob(".incomplete-*/figures/*.png")):  # the second set is being drawn
            assert writer.poll() is None and time.monotonic() < deadline, writer.stderr.read().decode()
            time.sleep(0.01)
        writer.send_signal(signal.SIGINT)
        _, err = writer.communicate(timeout=120)
    finally:
        writer.kill()
    assert writer.returncode != 0 and b"KeyboardInterrupt" in err
    after = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before
    assert json.loads((tmp_path / "result.json").read_text())["title"] == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures", "report.md", "result.json"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs a /proc file system")
def test_an_out_folder_that_cannot_be_written_is_refused_before_the_run(tmp_path):
    from fpinspect.cli.experiments import run_command

    result = CliRunner().invoke(run_command, ["S", "--device", "cpu", "--out", "/proc"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "fpinspect run: cannot write into the output folder /proc: No such file or directory."
    ]
