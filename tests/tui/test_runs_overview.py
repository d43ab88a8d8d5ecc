"""`fpinspect open` on two dump trees of several ranks: the run's overview, one row per compared
leaf pair and one per leaf left out; enter opens a leaf in the inspector, escape comes back."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from harness import SIZE, app_for, drive, settle
from runtrees import CULPRIT, SAMPLE, STAMP, write_trees
from test_inspector import text_of
from textual.widgets import DataTable, Static

from fpinspect.replay import tree
from fpinspect.replay.run import run_with_replay
from fpinspect.tui.screens.main import MainScreen
from fpinspect.tui.screens.runs import RunsScreen
from fpinspect.tui.widgets.op_list import OpList


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    return write_trees(tmp_path_factory.mktemp("trees"))


def _app(trees: Path, **settings):
    return app_for(
        SAMPLE / "dumpgraph_af_open" / "Build.json",
        str(trees / "on"),
        str(SAMPLE / "dumpgraph_af_close" / "Build.json"),
        str(trees / "off"),
        **settings,
    )


def _rows(pilot) -> list[list[str]]:
    table = pilot.app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def _help(pilot) -> str:
    return "\n".join(text_of(s) for s in pilot.app.screen.query(Static))


def test_the_overview_lists_each_leaf_pair_and_what_was_left_out(trees):
    seen = {}

    async def scenario(pilot):
        seen["screen"] = pilot.app.screen
        seen["rows"] = _rows(pilot)

    drive(_app(trees), scenario)
    assert isinstance(seen["screen"], RunsScreen)
    compared, skipped = seen["rows"][:2], seen["rows"][2:]
    assert [row[:3] for row in compared] == [["0", "ge_default_1/1", "1"], ["1", "ge_default_1/1", "1"]]
    assert [row[3:] for row in compared] == [["fail", "1", "compared"]] * 2
    assert [row[5] for row in skipped] == [
        f"skipped rank {rank}, graph ge_default_1/1, step 0: earlier than the latest step both trees hold"
        " (--steps all compares them)"
        for rank in (0, 1)
    ]


def test_enter_opens_a_leaf_and_escape_comes_back(trees):
    seen = {}

    async def scenario(pilot):
        await pilot.press("enter")
        await settle(pilot)
        seen["leaf"] = pilot.app.screen
        seen["ops"] = pilot.app.screen.query_one(OpList).shown
        seen["sub_title"] = pilot.app.sub_title
        await pilot.press("question_mark")
        await pilot.pause()
        seen["leaf help"] = _help(pilot)
        await pilot.press("escape", "slash", "x", "escape")
        await settle(pilot)
        seen["filter cleared"] = pilot.app.screen
        await pilot.press("escape")
        await settle(pilot)
        seen["back"] = pilot.app.screen
        seen["back sub_title"] = pilot.app.sub_title
        await pilot.press("question_mark")
        await pilot.pause()
        seen["overview help"] = _help(pilot)
        await pilot.press("escape")
        await pilot.press("down", "enter")
        await settle(pilot)
        seen["second"] = pilot.app.screen.sources.open_data
        await pilot.press("backspace")
        await settle(pilot)
        seen["back again"] = pilot.app.screen

    drive(_app(trees), scenario)
    assert isinstance(seen["leaf"], MainScreen)
    assert CULPRIT in seen["ops"]
    assert seen["sub_title"] == "rank 0, graph ge_default_1/1, step 1"
    assert "Back to the run's overview (escape clears a filter first)" in seen["leaf help"]
    assert seen["filter cleared"] is seen["leaf"]
    assert isinstance(seen["back"], RunsScreen) and isinstance(seen["back again"], RunsScreen)
    assert seen["back sub_title"] == "regression"
    assert "Open the leaf pair in the inspector" in seen["overview help"]
    assert Path(seen["second"]) == trees / "on" / STAMP / "1" / "ge_default_1" / "1" / "1"


def test_q_quits_while_the_leaves_are_compared_and_the_comparing_stops(trees, monkeypatch):
    started = []

    def slow(*args, **kwargs):  # each leaf pair takes a while
        started.append(1)
        time.sleep(0.3)
        return run_with_replay(*args, **kwargs)

    monkeypatch.setattr(tree, "run_with_replay", slow)
    app = _app(trees)
    seen = {}

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            while not started:
                await asyncio.sleep(0.01)
            seen["status"] = _rows(pilot)[1][5]
            await pilot.press("down", "enter")
            seen["screen"] = pilot.app.screen
            await pilot.press("q")

    asyncio.run(main())
    assert app.return_code == 0
    assert seen["status"] == "comparing…"
    assert isinstance(seen["screen"], RunsScreen)  # a leaf still being compared does not open
    stopped = len(started)
    time.sleep(0.5)
    assert len(started) == stopped == 1, "the leaves were still being compared after the app returned"


def test_a_comparison_that_fails_is_said_in_its_rows(trees, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("the dump storage went away")

    monkeypatch.setattr(tree, "run_with_replay", broken)
    seen = {}

    async def scenario(pilot):
        seen["rows"] = _rows(pilot)[:2]
        await pilot.press("enter")
        seen["screen"] = pilot.app.screen

    drive(_app(trees), scenario)
    assert [row[3:] for row in seen["rows"]] == [
        ["not compared", "", "not compared: OSError: the dump storage went away"]
    ] * 2
    assert isinstance(seen["screen"], RunsScreen)


def test_one_leaf_pair_opens_the_inspector_as_before(trees):
    seen = {}

    async def scenario(pilot):
        seen["screen"] = pilot.app.screen

    on = trees / "on" / STAMP / "0" / "ge_default_1" / "1" / "1"
    off = trees / "off" / STAMP / "0" / "ge_default_1" / "1" / "1"
    drive(
        app_for(
            SAMPLE / "dumpgraph_af_open" / "Build.json",
            str(on),
            str(SAMPLE / "dumpgraph_af_close" / "Build.json"),
            str(off),
        ),
        scenario,
    )
    assert type(seen["screen"]) is MainScreen


def test_overview_snapshot(snap_compare, trees):
    assert snap_compare(_app(trees), terminal_size=SIZE, run_before=settle)
