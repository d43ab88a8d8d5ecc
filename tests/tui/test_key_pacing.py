"""A key press holds the background loops (:mod:`fpinspect.dumps.pacing`) while it is answered:
the screen's thread does not share the interpreter lock with them meanwhile; then they go on.
And no collection of what loading built holds the lock behind a key."""

from __future__ import annotations

import asyncio
import gc
import itertools
import threading

from harness import app_for, settle

from fpinspect.dumps import pacing
from fpinspect.tui.app import ANSWER_SECONDS
from fpinspect.tui.widgets.op_detail import OpDetail
from fpinspect.tui.widgets.op_list import OpList


def test_a_background_loop_stands_still_while_a_key_is_answered(regression, monkeypatch):
    steps, stop = [0], threading.Event()

    def loop() -> None:  # a loop over a whole graph, on a background thread
        for _ in pacing.paced(itertools.count()):
            steps[0] += 1
            if stop.is_set():
                return

    app = app_for(regression)
    seen: list[tuple[str, int]] = []  # (what, the loop's steps then)
    moved, shown = OpList.watch_cursor, OpDetail.show

    def watch_cursor(self) -> None:  # the key's answer starts being made
        seen.append(("moved", steps[0]))
        moved(self)

    def show(self, insp, name) -> None:  # its last part: the highlighted op's detail
        shown(self, insp, name)
        seen.append(("shown", steps[0]))

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            ops = app.screen.query_one(OpList)
            threading.Thread(target=loop, daemon=True).start()
            monkeypatch.setattr(OpList, "watch_cursor", watch_cursor)
            monkeypatch.setattr(OpDetail, "show", show)
            for key in ("down", "up", "down"):
                seen.clear()
                app.simulate_key(key)
                while len(seen) < 2:
                    await asyncio.sleep(0)
                (_, moving), (_, detailed) = seen[:2]
                assert [what for what, _ in seen[:2]] == ["moved", "shown"]
                assert detailed - moving <= 1, f"the loop ran on while {key!r} was answered"
                await asyncio.sleep(ANSWER_SECONDS + 0.05)  # answered: the loop goes on
                assert steps[0] > detailed and not pacing.held()
            assert ops.cursor == 1
            stop.set()

    asyncio.run(main())


def test_what_loading_builds_is_frozen_before_any_collection():
    from fpinspect.tui.screens.main import _long_lived

    collections: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        made = _long_lived(lambda: [[i] for i in range(100_000)])  # a run's millions of objects, in small
    finally:
        gc.callbacks.remove(seen)
    # a collection then would scan all that (the lock held for 0.8 s after a 100 000-op load)
    assert len(made) == 100_000 and collections == []


def test_a_move_along_the_list_lets_the_loops_go_on_once_it_is_painted(regression, monkeypatch):
    """Not after ANSWER_SECONDS: keys pressed one after another would otherwise hold the loops
    without a break, and after pacing.LONGEST_WAIT the loops' burst would come while a key is
    answered."""
    from fpinspect.tui import app as app_module

    monkeypatch.setattr(app_module, "ANSWER_SECONDS", 600.0)  # the hold lapses only when released
    steps, stop = [0], threading.Event()

    def loop() -> None:
        for _ in pacing.paced(itertools.count()):
            steps[0] += 1
            if stop.is_set():
                return

    app = app_for(regression)

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            ops, detail = app.screen.query_one(OpList), app.screen.query_one(OpDetail)
            threading.Thread(target=loop, daemon=True).start()
            try:
                for key, row in (("down", 1), ("down", 2), ("up", 1)):
                    app.simulate_key(key)
                    while detail.op_name != ops.shown[row]:
                        await asyncio.sleep(0)
                    for _ in range(5000):  # painted: released (bounded: a failure, not a hang)
                        if not pacing.held():
                            break
                        await asyncio.sleep(0.001)
                    assert not pacing.held(), f"{key!r} was answered, the loops still held"
                    before = steps[0]
                    for _ in range(5000):  # and they go on (bounded: a failure, not a hang)
                        if steps[0] > before:
                            break
                        await asyncio.sleep(0.001)
                    assert steps[0] > before
            finally:
                stop.set()
                pacing.release()

    asyncio.run(main())


def test_the_sweeps_first_pair_is_computed_with_the_collector_paused_and_what_it_built_frozen():
    from fpinspect.tui.screens.main import _first_long_lived

    seen: list[tuple[int, bool, int]] = []

    def compute(plan: int) -> list:
        seen.append((plan, gc.isenabled(), gc.get_freeze_count()))
        return [[plan] for _ in range(1000)]  # the first one loads numba's ~50 000 objects

    call = _first_long_lived(lambda fn, *args: fn(*args))
    frozen = gc.get_freeze_count()
    made = call(compute, 1)
    after_first = gc.get_freeze_count()
    call(compute, 2)
    assert [(plan, enabled) for plan, enabled, _ in seen] == [(1, False), (2, True)]
    assert gc.isenabled() and after_first >= frozen + len(made)  # the first one's objects frozen
