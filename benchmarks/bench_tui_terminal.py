"""`fpinspect open` through a real terminal (tmux): key to moved cursor on the screen, by phase.

    .venv/bin/python benchmarks/bench_tui_terminal.py [--ops N] [--dumped D] [--repeat R] [--gap S] [--before SRC] [--dir TMP]

``bench_tui.py`` times a key inside the app (Textual's ``run_test``); this script times what a
user sees. The app runs in a detached tmux session of 160x48 (a server of its own), driven by
one tmux control-mode client: ``send-keys``, then ``capture-pane -e`` over and over until the
op list draws its cursor on the row the key moved it to. That includes what a terminal costs
(the app's output parsed by tmux, the capture), so the same is measured on a run of 4 ops,
alternating with the large run in the same session: the figure is the difference of medians.

Phases, told apart by the banner's text when the key is sent:

1. loading — the first fused ops are listed, the run is still read ("in file order for now");
2. comparing — "Comparing ...": the sweep computes the pairs (``--dumped`` ops have dumps,
   each an output pair and an input pair), then localises;
3. compared — the banner names the first introduced op (failing ops are replayed behind).

Also: seconds from the command's start until the first ops show, and until ``G`` (sent as soon
as they show) has drawn the cursor on the last op. Key presses are ``down`` and ``up`` in turn,
``--gap`` seconds apart: ``--presses`` at most while loading and once compared, all through the
sweep (its later pairs are where full collections of the records made so far were longest).
``--before SRC`` also runs another tree's app on the large run (``git archive REV | tar -x -C
SRC``), alternating with this one. The load average before and after is printed: the cores are
shared.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from itertools import count
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "tui"), str(HERE.parent)]

from bench_tui import spread  # noqa: E402
from synthetic import write_synthetic  # noqa: E402

SIZE = (160, 48)
ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
LIST_ROW = re.compile(r"^\s*(\d+) autofuse_")
#: tmux's settings: colours as a modern terminal has them (the window keeps its size: set-option below)
CONF = "set -g default-terminal tmux-256color\nset -g status off\n"


_SERVERS = count()


class Terminal:
    """One tmux server with one session running ``command``, and a control-mode client that
    sends it keys and reads its screen."""

    def __init__(self, command: str, conf: Path, env: dict[str, str]) -> None:
        self.socket = f"fpinspect-bench-{os.getpid()}-{next(_SERVERS)}"  # a server killed may linger
        self.base = ["tmux", "-L", self.socket, "-f", str(conf)]
        w, h = SIZE
        environ = [f"{k}={v}" for k, v in env.items()]
        self.started = time.perf_counter()
        subprocess.run(
            [
                *self.base,
                "new-session",
                "-d",
                "-s",
                "b",
                "-x",
                str(w),
                "-y",
                str(h),
                "env",
                *environ,
                *shlex.split(command),
            ],
            check=True,
        )
        subprocess.run([*self.base, "set-option", "-w", "-t", "b", "window-size", "manual"], check=True)
        self.client = subprocess.Popen(
            [*self.base, "-C", "attach", "-t", "b"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            encoding="utf-8",
            errors="replace",  # a character may be cut where tmux wraps its output
            bufsize=1,
        )
        self.command("refresh-client -f no-output")

    def command(self, line: str) -> list[str]:
        """Send one tmux command; its output's lines."""
        self.client.stdin.write(line + "\n")
        self.client.stdin.flush()
        out: list[str] | None = None
        for raw in self.client.stdout:
            text = raw.rstrip("\n")
            if out is None:
                if text.startswith("%begin") and text.endswith(" 1"):  # 1: a command of this client
                    out = []
                continue
            if text.startswith(("%end", "%error")):
                return out
            out.append(text)
        raise RuntimeError("tmux's control client ended")

    def screen(self) -> list[str]:
        return self.command("capture-pane -p -e -t b")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], check=False)
        self.client.wait(timeout=10)


def list_rows(lines: list[str]) -> list[tuple[int, str]]:
    """The op list's rows on screen: (the number in its # column, the row's leading style)."""
    rows = []
    for line in lines:
        plain = ESCAPE.sub("", line)
        m = LIST_ROW.match(plain)
        if m:
            start = len(line) - len(line.lstrip("\x1b[0123456789;m"))  # the escapes before the text
            rows.append((int(m.group(1)), line[:start]))
    return rows


def cursor_on(lines: list[str]) -> int | None:
    """The number of the row the list's cursor is on: the one row drawn in a style of its own."""
    rows = list_rows(lines)
    if len(rows) < 3:
        return None
    counts = Counter(style for _, style in rows)
    lone = [n for n, style in rows if counts[style] == 1]
    return lone[0] if len(lone) == 1 else None


def phase(lines: list[str]) -> str:
    banner = ESCAPE.sub("", lines[1]) if len(lines) > 1 else ""
    if "for now" in banner or "Reading" in banner:
        return "loading"
    if "Comparing" in banner:
        return "comparing"
    return "compared"


def wait_for(term: Terminal, ready, timeout: float = 120.0) -> tuple[float, list[str]]:
    """Poll the screen until ``ready(lines)``; the time then, and the lines."""
    end = time.perf_counter() + timeout
    while True:
        lines = term.screen()
        now = time.perf_counter()
        if ready(lines):
            return now, lines
        if now > end:
            raise TimeoutError("\n".join(ESCAPE.sub("", x) for x in lines))
        time.sleep(0.001)


def open_run(root: Path, ops: int, conf: Path, env: dict[str, str], gap: float, most: int) -> dict:
    """One start of ``fpinspect open root`` (``ops`` fused ops) in tmux: first ops, ``G``, and the
    key latencies by phase."""
    term = Terminal(f"{sys.executable} -m fpinspect open {root}", conf, env)
    out: dict = {"loading": [], "comparing": [], "compared": []}
    try:
        t, lines = wait_for(term, lambda s: cursor_on(s) is not None)
        out["first ops"] = t - term.started
        term.command("send-keys -t b G")
        t, lines = wait_for(term, lambda s: cursor_on(s) == ops)
        out["G on the last op"] = t - term.started
        term.command("send-keys -t b g")
        wait_for(term, lambda s: cursor_on(s) == 1)
        down = True
        while True:
            lines = term.screen()
            now_phase = phase(lines)
            if now_phase == "compared" and len(out["compared"]) >= most:
                break
            if len(out[now_phase]) < most or now_phase != "loading":  # the whole sweep sampled
                target = 2 if down else 1
                t0 = time.perf_counter()
                term.command(f"send-keys -t b {'Down' if down else 'Up'}")
                t, _ = wait_for(term, lambda s, target=target: cursor_on(s) == target)
                out[now_phase].append(t - t0)
                down = not down
            time.sleep(gap)
    finally:
        term.close()
    return out


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument(
        "--dumped", type=int, default=5_000, help="fused ops with dump files (the sweep's length)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--presses", type=int, default=30, help="key presses while loading and once compared, at most"
    )
    ap.add_argument("--gap", type=float, default=0.1, help="seconds between two presses")
    ap.add_argument(
        "--before", default=None, metavar="SRC", help="another tree, run on the large run alternately"
    )
    ap.add_argument("--dir", default=None, help="where to write the generated runs (default: a temp folder)")
    args = ap.parse_args()
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", str(HERE.parent))}
    trees = {"this tree": env}
    if args.before:
        trees["--before"] = {"PYTHONPATH": str(Path(args.before).resolve())}
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        conf = Path(tmp) / "tmux.conf"
        conf.write_text(CONF)
        root = write_synthetic(Path(tmp) / "large", args.ops, dumped=args.dumped, indent=2, originals=1)
        small = write_synthetic(Path(tmp) / "small", 4)
        for tree_env in trees.values():  # the kernels compiled and the files cached, untimed
            open_run(small, 4, conf, tree_env, args.gap, 3)
        tiny, large = [], {name: [] for name in trees}
        for _ in range(args.repeat):
            tiny.append(open_run(small, 4, conf, env, args.gap, args.presses))
            for name, tree_env in trees.items():
                large[name].append(open_run(root, args.ops, conf, tree_env, args.gap, args.presses))
        print(
            f"fpinspect open in tmux {SIZE[0]}x{SIZE[1]}: {args.ops:,} fused ops ({args.dumped:,} with dumps) "
            f"against 4 ops, {args.repeat} runs each, alternating; key to moved cursor, median / p95 / max"
        )
        base = [x for r in tiny for k in ("loading", "comparing", "compared") for x in r[k]]
        print(f"  4 ops, any phase   {spread(base)}  (the terminal's own latency)")
        for name, runs in large.items():
            print(f"  {name}:")
            for key in ("first ops", "G on the last op"):
                secs = sorted(r[key] for r in runs)
                print(
                    f"    {key:<18} {statistics.median(secs):6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in secs)})"
                )
            for key in ("loading", "comparing", "compared"):
                pooled = [x for r in runs for x in r[key]]
                per_run = [statistics.median(r[key]) for r in runs if r[key]]
                over = statistics.median(pooled) - statistics.median(base) if pooled else float("nan")
                print(
                    f"    {key:<18} {spread(pooled)}  median over 4 ops: {1000 * over:+5.1f} ms  "
                    f"(n={len(pooled)}; per run: {', '.join(f'{1000 * x:.0f}' for x in per_run)} ms)"
                )
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
