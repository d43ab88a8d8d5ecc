"""`fpinspect open` on two dump trees of several ranks: the run's overview, a grid of ranks ×
graphs at one step (s/S: other steps) or a list of every leaf pair and what was left out (l);
enter opens a leaf in the inspector, escape comes back."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from pathlib import Path

import pytest
from harness import SIZE, app_for, drive, settle
from runtrees import CULPRIT, SAMPLE, STAMP, write_trees
from test_inspector import text_of
from textual.widgets import DataTable, Static

from fpinspect.inspection.pipeline import Inspection
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


def _rows(pilot, table: str = "#runs-table") -> list[list[str]]:
    table = pilot.app.screen.query_one(table, DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def _grid(pilot) -> list[list[str]]:
    return _rows(pilot, "#runs-grid")


async def _open(pilot, *keys: str) -> tuple[str, str]:
    """Press ``keys`` (the last one opens a leaf): the fusion-on data folder opened, and the
    app's subtitle naming the leaf."""
    await pilot.press(*keys)
    await settle(pilot)
    return pilot.app.screen.sources.open_data, pilot.app.sub_title


def _help(pilot) -> str:
    return "\n".join(text_of(s) for s in pilot.app.screen.query(Static))


def test_the_grid_shows_each_rank_and_graph_at_the_latest_step_and_s_changes_the_step(trees):
    seen = {}

    async def scenario(pilot):
        seen["screen"] = pilot.app.screen
        seen["grid"] = _grid(pilot)
        seen["title"] = text_of(pilot.app.screen.query_one("#runs-title", Static))
        await pilot.press("S")
        seen["step 0"] = _grid(pilot)
        seen["title 0"] = text_of(pilot.app.screen.query_one("#runs-title", Static))
        seen["opened"], seen["sub_title"] = await _open(pilot, "down", "enter")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("s")
        seen["step 1 again"] = _grid(pilot)

    drive(_app(trees), scenario)
    assert isinstance(seen["screen"], RunsScreen)
    assert seen["grid"] == [["0", "fail · 1 introduced"], ["1", "fail · 1 introduced"]]
    assert seen["title"].startswith("step 1 (2 of 2; s/S: other steps) · 4 leaf pairs compared, 0 left out")
    # rank 1's fused kernel is exact at step 0: a rank-specific failure
    assert seen["step 0"][0] == ["0", "fail · 1 introduced"] and seen["step 0"][1][1].endswith(
        "· 0 introduced"
    )
    assert seen["title 0"].startswith("step 0 (1 of 2;")
    assert Path(seen["opened"]) == trees / "on" / STAMP / "1" / "ge_default_1" / "1" / "0"
    assert seen["sub_title"] == "rank 1, graph ge_default_1/1, step 0"
    assert seen["step 1 again"] == seen["grid"]


def test_l_lists_every_leaf_pair_and_what_was_left_out(tmp_path):
    write_trees(tmp_path)
    shutil.rmtree(tmp_path / "off" / STAMP / "1")  # rank 1 has no fusion-off dumps
    seen = {}

    async def scenario(pilot):
        seen["grid"] = _grid(pilot)
        await pilot.press("l")
        seen["list"] = _rows(pilot)
        await pilot.press("enter")
        await settle(pilot)
        seen["opened"] = pilot.app.screen.sources.open_data
        await pilot.press("escape", "l")
        seen["back"] = pilot.app.screen.query_one("#runs-grid").display

    drive(_app(tmp_path), scenario)
    assert seen["grid"] == [["0", "fail · 1 introduced"]]
    assert [row[:5] for row in seen["list"][:2]] == [
        ["0", "ge_default_1/1", "0", "fail", "1"],
        ["0", "ge_default_1/1", "1", "fail", "1"],
    ]
    assert seen["list"][2][5] == "skipped rank 1: the fusion-off tree has no rank 1"
    assert Path(seen["opened"]) == tmp_path / "on" / STAMP / "0" / "ge_default_1" / "1" / "0"
    assert seen["back"]


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
        seen["second"], seen["second sub_title"] = await _open(pilot, "down", "enter")
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
    assert "Open the leaf pair of the cell in the inspector" in seen["overview help"]
    assert "Show the grid at the previous step" in seen["overview help"]
    assert Path(seen["second"]) == trees / "on" / STAMP / "1" / "ge_default_1" / "1" / "1"
    assert seen["second sub_title"] == "rank 1, graph ge_default_1/1, step 1"


def test_q_quits_while_the_leaves_are_compared_and_the_comparing_stops(trees, monkeypatch):
    started = []
    release = threading.Event()

    def slow(*args, **kwargs):  # the first leaf pair is compared until the app has returned
        started.append(1)
        release.wait(10)
        return report(*args, **kwargs)

    report = Inspection.report
    monkeypatch.setattr(Inspection, "report", slow)
    app = _app(trees)
    seen = {}

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            while not started:
                await asyncio.sleep(0.01)
            seen["status"] = _grid(pilot)[1][1]
            await pilot.press("down", "enter")
            seen["screen"] = pilot.app.screen
            await pilot.press("q")

    asyncio.run(main())
    assert app.return_code == 0
    assert seen["status"] == "comparing…"
    assert isinstance(seen["screen"], RunsScreen)  # a leaf still being compared does not open
    release.set()
    time.sleep(0.5)
    assert len(started) == 1, "the leaves were still being compared after the app returned"


def test_a_comparison_that_fails_is_said_in_its_rows(trees, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("the dump storage went away")

    monkeypatch.setattr(Inspection, "report", broken)
    seen = {}

    async def scenario(pilot):
        seen["rows"] = _rows(pilot)
        seen["grid"] = _grid(pilot)
        await pilot.press("enter")
        seen["screen"] = pilot.app.screen

    drive(_app(trees), scenario)
    assert [row[3:] for row in seen["rows"]] == [
        ["not compared", "", "not compared: OSError: the dump storage went away"]
    ] * 4
    assert seen["grid"] == [["0", "not compared"], ["1", "not compared"]]
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


def _graph_folders(root: Path) -> tuple[str, str]:
    """Folders of graphs, one per side, as GE dumps them: the regression block's graph (the one
    the trees' dumps name) and the clean conv block's."""
    for side in ("open", "close"):
        for sample in ("regression", "clean"):
            folder = root / f"graphs_{side}" / f"pid_1{len(sample)}_deviceid_0"
            folder.mkdir(parents=True, exist_ok=True)
            graph_id = 1 if sample == "regression" else 2
            shutil.copyfile(
                SAMPLE.parent / sample / f"dumpgraph_af_{side}" / "Build.json",
                folder / f"ge_proto_0000000{graph_id}_graph_{graph_id}_Build.json",
            )
    return str(root / "graphs_open"), str(root / "graphs_close")


def test_folders_of_graphs_open_one_leaf_on_the_graph_its_dumps_name(trees, tmp_path):
    on_graphs, off_graphs = _graph_folders(tmp_path)
    leaf = Path(STAMP) / "0" / "ge_default_1" / "1" / "1"
    seen = {}

    async def scenario(pilot):
        seen["screen"] = pilot.app.screen
        seen["ops"] = pilot.app.screen.query_one(OpList).shown

    drive(
        app_for(on_graphs, str(trees / "on" / leaf), off_graphs, str(trees / "off" / leaf)),
        scenario,
    )
    assert type(seen["screen"]) is MainScreen
    assert CULPRIT in seen["ops"]


def test_folders_of_graphs_open_a_tree_on_its_grid(trees, tmp_path):
    on_graphs, off_graphs = _graph_folders(tmp_path)
    seen = {}

    async def scenario(pilot):
        seen["grid"] = _grid(pilot)

    drive(app_for(on_graphs, str(trees / "on"), off_graphs, str(trees / "off")), scenario)
    assert seen["grid"] == [["0", "fail · 1 introduced"], ["1", "fail · 1 introduced"]]
