"""Starting and ending the inspector's background work costs the screen's thread next to
nothing: no worker formats its arguments as it starts (Textual's default description is their
repr, made on that thread), and a localisation replaced by the replays' is freed behind.
Quitting stops it: nothing goes on reading the run once the app has returned."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref

from harness import app_for, settle
from synthetic import write_synthetic

from fpinspect.dumps import PairPlan
from fpinspect.dumps.engine.localise import Localisation
from fpinspect.dumps.formats import graph
from fpinspect.tui.model import RunView


def test_no_worker_formats_its_arguments_and_a_replaced_localisation_is_freed(regression, monkeypatch):
    formatted: list[str] = []
    for cls in (PairPlan, Localisation):
        shown = cls.__repr__
        monkeypatch.setattr(
            cls, "__repr__", lambda self, shown=shown: formatted.append(type(self).__name__) or shown(self)
        )
    taken: list[weakref.ref] = []
    localise = RunView.localise

    def localise_and_note(self, localisation, findings=None):
        taken.append(weakref.ref(localisation))
        localise(self, localisation, findings)

    monkeypatch.setattr(RunView, "localise", localise_and_note)
    app = app_for(regression)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            insp = app.screen.inspection
            assert insp.replays, "the failing ops were replayed"  # and localised again with them
            assert len(taken) >= 2 and taken[-1]() is insp.localisation
            # freed behind: by a worker started once the new localisation is painted (two
            # refreshes on), which may be after settle() found nothing running
            deadline = loop.time() + 10
            while True:
                gc.collect()
                if all(ref() is None for ref in taken[:-1]) or loop.time() > deadline:
                    break
                await pilot.pause(0.05)
                await settle(pilot)
            assert all(ref() is None for ref in taken[:-1]), "a replaced localisation was kept"

    asyncio.run(main())
    assert formatted == []  # a sweep of 200 000 plans: ~1.6 s of repr on the screen's thread


def test_q_quits_while_the_run_is_read_and_the_reading_stops(tmp_path, monkeypatch):
    ops = 2000
    root = write_synthetic(tmp_path, ops, dumped=2)
    decoded = [0]
    decode = graph.decode_op

    def slow(*args):  # both graphs read op by op: seconds in all
        decoded[0] += 1
        time.sleep(0.002)
        return decode(*args)

    monkeypatch.setattr(graph, "decode_op", slow)
    app = app_for(root)

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            while decoded[0] == 0:
                await asyncio.sleep(0.01)
            await pilot.press("q")

    asyncio.run(main())
    assert app.return_code == 0
    stopped = decoded[0]
    time.sleep(0.3)
    assert decoded[0] == stopped, "the run was still being read after the app returned"
    assert stopped < ops  # not even the fusion-on graph was read whole
