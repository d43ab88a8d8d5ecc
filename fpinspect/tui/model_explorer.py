"""The inspector's way into Google's Model Explorer: ``fpinspect explore`` in a child process
(its server prints nothing on the inspector's terminal), the page opened in the browser."""

from __future__ import annotations

import subprocess
import sys

from ..dumps.runs.sources import Sources


def explore_command(sources: Sources, op: str | None) -> list[str]:
    """The command that serves the run of ``sources`` with ``op`` selected: the run folder where
    the graphs lie in one, else the fusion-on graph (the rest found by name, as ``explore`` does)."""
    command = [
        sys.executable,
        "-m",
        "fpinspect",
        "explore",
        sources.run_dir or sources.open_graph,
        "--no-browser",
    ]
    return [*command, "--select", op] if op else command


def start(sources: Sources, op: str | None) -> subprocess.Popen:
    """``fpinspect explore`` started; its first line on stdout is the page's URL, or it ends
    with its one sentence on stderr."""
    return subprocess.Popen(
        explore_command(sources, op),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # ctrl+c in the inspector is a key, not the server's end
    )


def page_of(server: subprocess.Popen) -> tuple[str | None, str]:
    """Wait for the started ``server``: its URL, or ``None`` and why it ended."""
    url = server.stdout.readline().strip()
    if url:
        return url, ""
    server.wait()
    lines = server.stderr.read().strip().splitlines()
    return None, (lines[-1] if lines else f"fpinspect explore ended with status {server.returncode}")
