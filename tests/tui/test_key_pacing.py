"""A key press holds the background loops (:mod:`fpinspect.dumps.pacing`) while it is answered:
the screen's thread does not share the interpreter lock with them meanwhile; then they go on."""

from __future__ import annotations

import asyncio
import itertools
import threading

from harness import app_for, settle

from fpinspect.dumps import pacing
from fpinspect.tui.app import ANSWER_SECONDS
from fpinspect.tui.widgets.op_list import OpList


def test_a_background_loop_stands_still_while_a_key_is_answered(regression, monkeypatch):
    steps, stop = [0], threading.Event()

    def loop() -> None:  # a loop over a whole graph, on a background thread
        for _ in pacing.paced(itertools.count()):
            steps[0] += 1
            if stop.is_set():
                return

    app = app_for(regression)
    seen: list[int] = []
    moved = OpList.watch_cursor

    def watch_cursor(self) -> None:  # the key's answer starts being made
        seen.append(steps[0])
        moved(self)

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            ops = app.screen.query_one(OpList)
            threading.Thread(target=loop, daemon=True).start()
            painted = asyncio.Event()
            monkeypatch.setattr(OpList, "watch_cursor", watch_cursor)
            for key in ("down", "up", "down"):
                painted.clear()
                app.simulate_key(key)
                while len(seen) < 1:
                    await asyncio.sleep(0)
                app.screen.call_after_refresh(painted.set)
                await painted.wait()
                at_paint = steps[0]
                assert at_paint - seen.pop() <= 1, f"the loop ran on while {key!r} was answered"
                await asyncio.sleep(ANSWER_SECONDS + 0.05)  # the hold lapses: the loop goes on
                assert steps[0] > at_paint and not pacing.held()
            assert ops.cursor == 1
            stop.set()

    asyncio.run(main())
