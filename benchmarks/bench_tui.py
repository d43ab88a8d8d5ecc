"""`fpinspect open` on a generated run of 10 000 fused ops: time to first paint and to interactive.

    .venv/bin/python benchmarks/bench_tui.py [--ops N] [--originals 1|2] [--dumped D] [--repeat R] [--large MIB] [--dir TMP]

Headless (Textual's ``run_test``, 100x30), medians of ``--repeat`` runs, the graphs written
with atc's indentation. ``--originals`` is how many original ops each fused op replaces: 1 (the
default) is the shape of the issue's target, 100 000 ops in two graphs of ~130 MB; 2 gives a
fusion-off graph of twice the ops (100 000 fused ops: 200 MB fusion-on, 114 MB fusion-off ×2 ops).
``--dumped`` is how many fused ops have dump files (default 8: the sweep is short, and "once
loaded" is mostly the localisation; 10 000 makes ~20 000 pairs to compare). Through a real
terminal: ``bench_tui_terminal.py``.

1. first paint — app start until the main screen is drawn (a "reading the graphs" banner);
2. first ops — until the list shows fused ops (the first 1 000 of the outline, before the rest);
3. ``G`` on the last op — until ``G`` has put the cursor on the graph's last fused op (pressed
   while the list holds the first ops only, the cursor follows once it holds them all);
4. key press while loading — ``down`` and ``up`` while the graphs load in the background;
5. interactive — until the whole run is loaded (details, pairs, the fusion-off side);
6. key press once loaded — presses from then on, while the comparison runs behind;
7. compared — until every pair is computed and the banner names the first introduced op;
8. key press once compared — presses from then on (failing ops are replayed behind);
9. peak RSS of one whole run (7 included) in a child process.

Each key press is timed from the key until the screen is repainted with its effect; the
table gives the median, the 95th percentile and the maximum over every press.

Baselines from the same run: stdlib ``json.load`` of the fusion-on graph and the way
``load_graph`` read it before the outline (``json.load``, then the decoders), and
``RunView.load`` alone (reading both graphs and planning the pairs), so ``interactive /
load`` is the app's own overhead;
the op list against Textual's ``DataTable`` holding the same 10 000 rows (first paint); and a
key press and a filter keystroke in the full list against the same in a run of 4 ops (what a
key costs the headless driver anyway).

``--large MIB`` also drills into one pair of two MIB-MiB float16 files in a child process
and reports its peak memory: the files are streamed, never read whole, to draw the screen.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "tui"), str(HERE.parent)]

from bench_numerics import MiB, child, write_fp16  # noqa: E402
from synthetic import TIMESTAMP, write_synthetic  # noqa: E402
from textual.app import App  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from fpinspect.dumps.engine.verdict import format_score  # noqa: E402
from fpinspect.dumps.formats import graph  # noqa: E402
from fpinspect.dumps.formats.outline import outline_fused_ops  # noqa: E402
from fpinspect.dumps.runs.sources import resolve  # noqa: E402
from fpinspect.tui.app import AppSettings, make_app  # noqa: E402
from fpinspect.tui.model import RunView  # noqa: E402
from fpinspect.tui.widgets.banner import Banner  # noqa: E402
from fpinspect.tui.widgets.op_list import OpList  # noqa: E402

SIZE = (100, 30)


async def _until(ready, step: float = 0.002) -> None:
    # plain sleeps: Pilot.pause waits for an idle CPU, which a busy worker thread postpones
    while not ready():
        await asyncio.sleep(step)


async def _key(app, key: str, done) -> float:
    """Seconds from posting ``key`` until ``done()`` holds and the screen is repainted: what a
    user waits for. (``Pilot.press`` also waits for an idle CPU, which a loading worker postpones.)"""
    painted: list[float] = []
    t0 = time.perf_counter()
    app.simulate_key(key)
    await _until(done)
    app.screen.call_after_refresh(lambda: painted.append(time.perf_counter()))
    await _until(lambda: painted)
    return painted[0] - t0


async def _keys(app, ops, n: int) -> list[float]:
    """Seconds of each of ``n`` presses of ``down`` and ``up`` in turn from the top of the list
    (:func:`_key`), a frame apart: any list of two rows or more."""
    spent = []
    for i in range(n):
        spent.append(
            await _key(app, "up" if i % 2 else "down", lambda i=i: ops.cursor == (0 if i % 2 else 1))
        )
        await asyncio.sleep(0.02)
    return spent


def spread(seconds: list[float]) -> str:
    """Median / 95th percentile / maximum of key latencies, in ms."""
    s = sorted(seconds)
    if not s:
        return "(none)"
    p95 = s[min(len(s) - 1, max(0, round(0.95 * len(s)) - 1))]
    return f"{1000 * statistics.median(s):5.1f} / {1000 * p95:5.1f} / {1000 * s[-1]:5.1f} ms"


def _pooled(runs: list[dict], key: str) -> list[float]:
    return [x for r in runs for x in r[key]]


async def open_run(root: Path) -> dict:
    """One start of the app: seconds to first paint, first ops, ``G``, interactive, compared;
    key latencies (lists) and the filter keystroke's."""
    sources = resolve(str(root))
    last = outline_fused_ops(sources.open_graph)[-1].name  # where G must land (read before timing)
    t0 = time.perf_counter()
    app = make_app(AppSettings(sources))
    out, painted = {}, []
    async with app.run_test(size=SIZE):
        await _until(lambda: app.screen.query(Banner))
        app.screen.call_after_refresh(lambda: painted.append(time.perf_counter()))
        await _until(lambda: painted)
        out["first paint"] = painted[0] - t0
        screen = app.screen
        ops = screen.query_one(OpList)
        await _until(lambda: ops.current is not None)
        painted.clear()
        app.screen.call_after_refresh(lambda: painted.append(time.perf_counter()))
        await _until(lambda: painted)
        out["first ops"] = painted[0] - t0
        # pressed on the first ops only, G follows to the last op once the whole list is there
        await _key(app, "G", lambda: ops.current.name == last)
        out["G on the last op"] = time.perf_counter() - t0
        await _key(app, "g", lambda: ops.cursor == 0)
        out["key press while loading"] = []
        while screen.inspection is None and len(out["key press while loading"]) < 20:
            out["key press while loading"] += await _keys(app, ops, 2)
        await _until(lambda: screen.inspection is not None and ops.shown)
        out["interactive"] = time.perf_counter() - t0
        await _key(app, "home", lambda: ops.cursor == 0)
        out["key press once loaded"] = []
        while screen.inspection.localisation is None and len(out["key press once loaded"]) < 40:
            out["key press once loaded"] += await _keys(app, ops, 2)
        await _until(lambda: screen.inspection.localisation is not None)
        out["compared"] = time.perf_counter() - t0
        out["key press once compared"] = await _keys(app, ops, 20)
        out["key press"] = statistics.median(out["key press once compared"])
        await _key(app, "slash", lambda: screen.focused is not ops)
        every = len(screen.inspection.rows)
        out["filter keystroke"] = await _key(app, "9", lambda: len(ops._order) < every)
    return out


def load_only(root: Path) -> float:
    t0 = time.perf_counter()
    RunView.load(resolve(str(root)))
    return time.perf_counter() - t0


@contextmanager
def _collector_paused():
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def stdlib_json(path: Path) -> float:
    """Seconds for ``json.load`` of ``path`` (the collector paused, as the inspector loads)."""
    t0 = time.perf_counter()
    with _collector_paused(), open(path, encoding="utf-8") as f:
        json.load(f)
    return time.perf_counter() - t0


def previous_load(path: Path) -> float:
    """Seconds to load the graph as ``load_graph`` did before msgspec: ``json.load``, then the
    same decoders (:func:`~fpinspect.dumps.formats.graph._model`)."""
    t0 = time.perf_counter()
    with _collector_paused(), open(path, encoding="utf-8") as f:
        graph._model(str(path), json.load(f))
    return time.perf_counter() - t0


def outline_only(path: Path) -> float:
    t0 = time.perf_counter()
    outline_fused_ops(path)
    return time.perf_counter() - t0


RSS_CHILD = """
import asyncio, sys
from pathlib import Path
sys.path[:0] = sys.argv[2:3]
import bench_tui
print(asyncio.run(bench_tui.open_run(Path(sys.argv[1])))["interactive"])
"""


def peak_rss(root: Path) -> int:
    """Peak resident memory of one start of the app, until interactive, in a child process."""
    return child(RSS_CHILD, str(root), str(HERE))[1]


class _ListApp(App):
    def __init__(self, insp: RunView, table: bool):
        super().__init__()
        self.insp, self.table = insp, table

    def compose(self):
        yield DataTable(cursor_type="row") if self.table else OpList()

    def on_mount(self) -> None:
        if self.table:
            t = self.query_one(DataTable)
            for col in ("#", "fused op", "type", "orig", "verdict", "worst", "cause"):
                t.add_column(col)
            t.add_rows(
                (
                    str(r.position + 1),
                    r.name,
                    r.op.type,
                    str(len(r.op.original_op_names)),
                    r.verdict or "-",
                    format_score(r.score),
                    r.role or "",
                )
                for r in self.insp.rows
            )
        else:
            self.query_one(OpList).set_rows(self.insp.rows, self.insp.view())


async def list_paint(insp: RunView, table: bool) -> float:
    t0 = time.perf_counter()
    async with _ListApp(insp, table).run_test(size=SIZE) as pilot:
        await pilot.pause()
        return time.perf_counter() - t0


LARGE_CHILD = """
import asyncio, sys, time
sys.path[:0] = sys.argv[2:4]
from fpinspect.tui.app import AppSettings, make_app
from fpinspect.dumps.runs.sources import resolve
from fpinspect.tui.screens.pair import PairScreen
from fpinspect.tui.widgets.profile import ProfileView

async def main():
    app = make_app(AppSettings(resolve(sys.argv[1])))
    t0 = time.perf_counter()
    async with app.run_test(size=(100, 30)) as pilot:
        while getattr(app.screen, "inspection", None) is None:
            await pilot.pause(0.05)
        await pilot.press("enter")
        while not (isinstance(app.screen, PairScreen) and app.screen.query(ProfileView)
                   and not app.screen.query_one(ProfileView).loading):
            await pilot.pause(0.05)
        print(time.perf_counter() - t0)
        await pilot.press("q")

asyncio.run(main())
"""


def large_pair(root: Path, mib: int) -> tuple[float, int]:
    """Seconds and peak RSS to open a run whose one pair is two ``mib``-MiB float16 files and
    show its drill-down (numbers, histogram, worst elements, error profile)."""
    n = mib * MiB // 2
    write_synthetic(root, 1, dumped=0, shape=(n,))
    write_fp16(
        str(root / "datadump_af_open" / f"AscBackend.autofuse_0_Mul_Add.3.44.{TIMESTAMP}.output.0.npy"),
        n,
        1,
        scale=1.0005,
    )
    write_fp16(str(root / "datadump_af_close" / f"Add.Add_0.3.44.{TIMESTAMP}.output.0.npy"), n, 1)
    _, peak, out = child(LARGE_CHILD, str(root), str(HERE.parent), str(HERE.parent / "tests" / "tui"))
    return float(out.split()[-1]), peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=10_000)
    ap.add_argument("--originals", type=int, choices=(1, 2), default=1, help="original ops per fused op")
    ap.add_argument("--dumped", type=int, default=8, help="fused ops with dump files (the sweep's length)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--large", type=int, default=0, metavar="MIB", help="size of each file of the large pair")
    ap.add_argument("--dir", default=None, help="where to write the generated runs (default: a temp folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = write_synthetic(
            Path(tmp) / "synthetic", args.ops, dumped=args.dumped, indent=2, originals=args.originals
        )
        small = write_synthetic(Path(tmp) / "small", 4)
        # the baselines first: an app's background threads may still be at work once it has quit
        load = statistics.median(load_only(root) for _ in range(args.repeat))
        graph_file = root / "dumpgraph_af_open" / "Build.json"
        stdlib = statistics.median(stdlib_json(graph_file) for _ in range(args.repeat))
        before = statistics.median(previous_load(graph_file) for _ in range(args.repeat))
        outline = statistics.median(outline_only(graph_file) for _ in range(args.repeat))
        runs = [asyncio.run(open_run(root)) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if not isinstance(runs[0][k], list)}
        few = [asyncio.run(open_run(small)) for _ in range(args.repeat)]
        base = {k: statistics.median(r[k] for r in few) for k in few[0] if not isinstance(few[0][k], list)}
        peak = peak_rss(root)
        insp = RunView.load(resolve(str(root)))
        table = statistics.median(asyncio.run(list_paint(insp, True)) for _ in range(args.repeat))
        oplist = statistics.median(asyncio.run(list_paint(insp, False)) for _ in range(args.repeat))
        size = graph_file.stat().st_size / MiB
        off_size = (root / "dumpgraph_af_close" / "Build.json").stat().st_size / MiB
        print(
            f"fpinspect open on {args.ops:,} fused ops of {args.originals} original op(s) each "
            f"({size:.0f} MiB + {off_size:.0f} MiB of graph JSON, {len(insp.comparison.plans):,} pairs, "
            f"{len(insp.sweep_order()):,} with dumps), headless {SIZE[0]}x{SIZE[1]}, median of {args.repeat}; "
            f"key presses: median / p95 / max"
        )
        print(f"  first paint                {med['first paint']:7.3f} s")
        print(f"  first ops listed           {med['first ops']:7.3f} s   (target: 2 s for 100 000 ops)")
        print(f"  G on the last op           {med['G on the last op']:7.3f} s   (target: 3 s)")
        print(f"  interactive (all loaded)   {med['interactive']:7.3f} s")
        print(f"  every pair compared        {med['compared']:7.3f} s")
        for key in ("key press while loading", "key press once loaded", "key press once compared"):
            print(f"  {key:<26} {spread(_pooled(runs, key))}  (target: < 50 ms)")
        print(f"  peak RSS (whole run)       {peak / MiB:7.0f} MiB (target: < 1536 MiB)")
        print(
            f"  baseline: json.load of the fusion-on graph ({size:.0f} MiB) {stdlib:.3f} s; "
            f"outline {outline:.3f} s ({stdlib / outline:.1f}x faster)"
        )
        print(
            f"  baseline: load_graph as before (json.load + decoders) {before:.3f} s; "
            f"first ops / that = {med['first ops'] / before:.2f}"
        )
        print(
            f"  baseline: RunView.load  {load:7.3f} s   interactive / load = {med['interactive'] / load:.2f}"
        )
        print(
            f"  op list first paint        {oplist:7.3f} s   DataTable with the same rows {table:.3f} s "
            f"({table / oplist:.1f}x slower)"
        )
        for key in ("key press", "filter keystroke"):
            print(
                f"  {key:<26} {1000 * med[key]:7.1f} ms  with 4 ops {1000 * base[key]:.1f} ms "
                f"({med[key] / base[key]:.2f}x)"
            )
        if args.large:
            secs, peak = large_pair(Path(tmp) / "large", args.large)
            print(
                f"  drill-down into two {args.large} MiB files: {secs:.1f} s, peak RSS {peak / MiB:.0f} MiB "
                f"({peak / (2 * args.large * MiB):.2f} of the data)"
            )


if __name__ == "__main__":
    main()
