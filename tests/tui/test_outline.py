"""The inspector lists a large graph's fused ops before the whole run is loaded: the keys move
along them while the graphs load in the background, and the loaded run keeps the highlighted op."""

from __future__ import annotations

import asyncio
import threading

import pytest
from harness import app_for, settle
from synthetic import write_synthetic

from fpinspect.tui.model import RunView
from fpinspect.tui.screens import main as main_screen
from fpinspect.tui.widgets.banner import Banner
from fpinspect.tui.widgets.op_list import OpList

OPS = 20_000


@pytest.fixture(scope="module")
def run20k(tmp_path_factory):
    return write_synthetic(tmp_path_factory.mktemp("run20k"), OPS, dumped=2, indent=2)


async def _until(ready, limit: float = 120.0) -> None:
    """Wait for ``ready()``; a generous limit turns a list that never fills into a failure, not a hang."""
    deadline = asyncio.get_running_loop().time() + limit
    while not ready():
        assert asyncio.get_running_loop().time() < deadline, "the list did not fill while the run was loading"
        await asyncio.sleep(0.01)


def test_keys_move_along_the_outline_while_the_run_loads(run20k, monkeypatch):
    real_load, gate = RunView.load, threading.Event()
    real_outline, outlined = main_screen.outline_fused_ops, threading.Event()

    def held_load(*args, **kwargs):
        gate.wait()  # the whole run stays pending until the test has pressed its keys
        return real_load(*args, **kwargs)

    def held_outline(*args, on_first, **kwargs):
        def first(ops):
            on_first(ops)
            outlined.wait()  # the rest of the outline waits until the first ops were used

        return real_outline(*args, on_first=first, **kwargs)

    monkeypatch.setattr(RunView, "load", held_load)
    monkeypatch.setattr(main_screen, "outline_fused_ops", held_outline)
    app = app_for(run20k)

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            ops = app.screen.query_one(OpList)
            await _until(lambda: ops.current is not None)
            # the first ops at once, the rest still being decoded; G goes to the last of them
            assert len(ops.shown) == main_screen.FIRST_OPS < OPS
            assert f"The first {main_screen.FIRST_OPS} fused ops" in str(
                app.screen.query_one(Banner).render()
            )
            await pilot.press("G")
            assert ops.current.name == f"autofuse_{main_screen.FIRST_OPS - 1}_Mul_Add"
            outlined.set()
            await _until(lambda: len(ops.shown) == OPS)
            assert ops.current.name == f"autofuse_{OPS - 1}_Mul_Add"  # ... and follows to the last of all
            await pilot.press("g")
            assert app.screen.inspection is None and len(ops.shown) == OPS
            assert "in file order for now" in str(app.screen.query_one(Banner).render())
            await pilot.press("G")
            assert ops.current.name == f"autofuse_{OPS - 1}_Mul_Add"
            await pilot.press("up", "up")
            assert ops.current.name == f"autofuse_{OPS - 3}_Mul_Add" and app.screen.inspection is None
            gate.set()
            await settle(pilot)
            assert app.screen.inspection is not None and len(ops.shown) == OPS
            assert ops.current.name == f"autofuse_{OPS - 3}_Mul_Add"  # the loaded list keeps the op
            assert "in file order" not in str(app.screen.query_one(Banner).render())

    try:
        asyncio.run(main())
    finally:
        gate.set()
        outlined.set()


def test_a_filter_typed_while_the_run_loads_applies_at_once_and_stays(tmp_path, monkeypatch):
    root = write_synthetic(tmp_path, 30, dumped=2)
    real_load, gate = RunView.load, threading.Event()

    def held_load(*args, **kwargs):
        gate.wait()
        return real_load(*args, **kwargs)

    monkeypatch.setattr(RunView, "load", held_load)
    app = app_for(root)
    matching = ["autofuse_2_Mul_Add", *(f"autofuse_{i}_Mul_Add" for i in range(20, 30))]

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            ops = app.screen.query_one(OpList)
            await _until(lambda: ops.current is not None)
            await pilot.press("slash", *"autofuse_2")
            assert app.screen.inspection is None
            assert ops.shown == matching  # the outline is filtered as the filter is typed
            await pilot.press("enter", "down")
            assert ops.current.name == "autofuse_20_Mul_Add"
            gate.set()
            await settle(pilot)
            assert app.screen.inspection is not None
            assert ops.shown == matching and ops.current.name == "autofuse_20_Mul_Add"
            assert app.screen.query_one("#filter").value == "autofuse_2"
            await pilot.press("escape")
            assert len(ops.shown) == 30 and ops.current.name == "autofuse_20_Mul_Add"

    try:
        asyncio.run(main())
    finally:
        gate.set()
