"""`fpinspect open` on a generated run of 10 000 fused ops: time to first paint and to interactive.

    .venv/bin/python benchmarks/bench_tui.py [--ops N] [--repeat R] [--large MIB] [--dir TMP]

Headless (Textual's ``run_test``, 100x30), medians of ``--repeat`` runs:

1. first paint — app start until the main screen is drawn (a "reading the graphs" banner);
2. interactive — until the fused-op list is filled (the next key press moves its cursor);
3. compared — until every pair is computed and the banner names the first introduced op.

Baselines from the same run: ``Inspection.load`` alone (reading both graphs and planning the
pairs: the app cannot list ops sooner), so ``interactive / load`` is the app's own overhead;
the op list against Textual's ``DataTable`` holding the same 10 000 rows (first paint); and a
key press and a filter keystroke in the full list against the same in a run of 4 ops (what a
key costs the headless driver anyway).

``--large MIB`` also drills into one pair of two MIB-MiB float16 files in a child process
and reports its peak memory: the files are streamed, never read whole, to draw the screen.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "tui"), str(HERE.parent)]

from bench_numerics import MiB, child, write_fp16  # noqa: E402
from synthetic import TIMESTAMP, write_synthetic  # noqa: E402
from textual.app import App  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from fpinspect.dumps.verdict import format_score  # noqa: E402
from fpinspect.tui.app import Settings, make_app  # noqa: E402
from fpinspect.tui.model import Inspection  # noqa: E402
from fpinspect.tui.sources import resolve  # noqa: E402
from fpinspect.tui.widgets.banner import Banner  # noqa: E402
from fpinspect.tui.widgets.op_list import OpList  # noqa: E402

SIZE = (100, 30)


async def _until(ready, step: float = 0.002) -> None:
    # plain sleeps: Pilot.pause waits for an idle CPU, which a busy worker thread postpones
    while not ready():
        await asyncio.sleep(step)


async def open_run(root: Path) -> dict[str, float]:
    """One start of the app: seconds to first paint, interactive, compared; key and filter costs."""
    t0 = time.perf_counter()
    app = make_app(Settings(resolve(str(root))))
    out, painted = {}, []
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: app.screen.query(Banner))
        app.screen.call_after_refresh(lambda: painted.append(time.perf_counter()))
        await _until(lambda: painted)
        out["first paint"] = painted[0] - t0
        screen = app.screen
        ops = screen.query_one(OpList)
        await _until(lambda: screen.inspection is not None and ops.shown)
        out["interactive"] = time.perf_counter() - t0
        await pilot.press("down")
        assert ops.cursor == 1
        await _until(lambda: screen.inspection.localisation is not None)
        out["compared"] = time.perf_counter() - t0
        await pilot.pause()
        t1 = time.perf_counter()
        await pilot.press(*["down"] * 20)
        out["key press"] = (time.perf_counter() - t1) / 20
        await pilot.press("slash")
        t1 = time.perf_counter()
        await pilot.press("9")
        out["filter keystroke"] = time.perf_counter() - t1
        assert len(ops.shown) < len(screen.inspection.rows)
    return out


def load_only(root: Path) -> float:
    t0 = time.perf_counter()
    Inspection.load(resolve(str(root)))
    return time.perf_counter() - t0


class _ListApp(App):
    def __init__(self, insp: Inspection, table: bool):
        super().__init__()
        self.insp, self.table = insp, table

    def compose(self):
        yield DataTable(cursor_type="row") if self.table else OpList()

    def on_mount(self) -> None:
        if self.table:
            t = self.query_one(DataTable)
            for col in ("#", "fused op", "type", "orig", "verdict", "worst", "cause"):
                t.add_column(col)
            t.add_rows((str(r.position + 1), r.name, r.op.type, str(len(r.op.original_op_names)), r.verdict or "-",
                        format_score(r.score), r.role or "") for r in self.insp.rows)  # fmt: skip
        else:
            self.query_one(OpList).set_rows(self.insp.rows, self.insp.view())


async def list_paint(insp: Inspection, table: bool) -> float:
    t0 = time.perf_counter()
    async with _ListApp(insp, table).run_test(size=SIZE) as pilot:
        await pilot.pause()
        return time.perf_counter() - t0


LARGE_CHILD = """
import asyncio, sys, time
sys.path[:0] = sys.argv[2:4]
from fpinspect.tui.app import Settings, make_app
from fpinspect.tui.sources import resolve
from fpinspect.tui.screens.pair import PairScreen
from fpinspect.tui.widgets.profile import ProfileView

async def main():
    app = make_app(Settings(resolve(sys.argv[1])))
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
    write_fp16(str(root / "datadump_af_open" / f"AscBackend.autofuse_0_Mul_Add.3.44.{TIMESTAMP}.output.0.npy"), n, 1,
               scale=1.0005)  # fmt: skip
    write_fp16(str(root / "datadump_af_close" / f"Add.Add_0.3.44.{TIMESTAMP}.output.0.npy"), n, 1)
    _, peak, out = child(LARGE_CHILD, str(root), str(HERE.parent), str(HERE.parent / "tests" / "tui"))
    return float(out.split()[-1]), peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--large", type=int, default=0, metavar="MIB", help="size of each file of the large pair")
    ap.add_argument("--dir", default=None, help="where to write the generated runs (default: a temp folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = write_synthetic(Path(tmp) / "synthetic", args.ops)
        small = write_synthetic(Path(tmp) / "small", 4)
        runs = [asyncio.run(open_run(root)) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        few = [asyncio.run(open_run(small)) for _ in range(args.repeat)]
        base = {k: statistics.median(r[k] for r in few) for k in few[0]}
        load = statistics.median(load_only(root) for _ in range(args.repeat))
        insp = Inspection.load(resolve(str(root)))
        table = statistics.median(asyncio.run(list_paint(insp, True)) for _ in range(args.repeat))
        oplist = statistics.median(asyncio.run(list_paint(insp, False)) for _ in range(args.repeat))
        print(f"fpinspect open on {args.ops:,} fused ops ({len(insp.sweep_order()):,} pairs), "
              f"headless {SIZE[0]}x{SIZE[1]}, median of {args.repeat}")  # fmt: skip
        print(f"  first paint                {med['first paint']:7.3f} s")
        print(f"  interactive                {med['interactive']:7.3f} s   (target: about 2 s)")
        print(f"  every pair compared        {med['compared']:7.3f} s")
        print(f"  baseline: Inspection.load  {load:7.3f} s   interactive / load = {med['interactive'] / load:.2f}")
        print(f"  op list first paint        {oplist:7.3f} s   DataTable with the same rows {table:.3f} s "
              f"({table / oplist:.1f}x slower)")  # fmt: skip
        for key in ("key press", "filter keystroke"):
            print(f"  {key:<26} {1000 * med[key]:7.1f} ms  with 4 ops {1000 * base[key]:.1f} ms "
                  f"({med[key] / base[key]:.2f}x)")  # fmt: skip
        if args.large:
            secs, peak = large_pair(Path(tmp) / "large", args.large)
            print(f"  drill-down into two {args.large} MiB files: {secs:.1f} s, peak RSS {peak / MiB:.0f} MiB "
                  f"({peak / (2 * args.large * MiB):.2f} of the data)")  # fmt: skip


if __name__ == "__main__":
    main()
