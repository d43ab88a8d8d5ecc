"""`fpinspect open` on dump trees that do not fit each other or hold odd folders (a tree against a
flat folder, a backup copy `1.bak`): the inspector opens, as `compare` reads them."""

from __future__ import annotations

import shutil

from harness import app_for, drive
from runtrees import SAMPLE, STAMP, write_trees

from fpinspect.tui.screens.main import MainScreen
from fpinspect.tui.screens.runs import RunsScreen


def _screen(on, off) -> type:
    seen = {}

    async def scenario(pilot):
        seen["screen"] = type(pilot.app.screen)

    app = app_for(
        SAMPLE / "dumpgraph_af_open" / "Build.json",
        str(on),
        str(SAMPLE / "dumpgraph_af_close" / "Build.json"),
        str(off),
    )
    drive(app, scenario)
    return seen["screen"]


def test_a_tree_against_a_flat_folder_and_a_tree_with_an_odd_folder_open(tmp_path):
    trees = write_trees(tmp_path)
    shutil.copytree(SAMPLE / "datadump_af_close", tmp_path / "flat")
    assert _screen(trees / "on", tmp_path / "flat") is MainScreen  # the folders as they are
    model = trees / "on" / STAMP / "0" / "ge_default_1" / "1"
    shutil.copytree(model / "1", model / "1.bak")
    shutil.copytree(SAMPLE / "datadump_af_close", trees / "off" / "stray")
    assert _screen(trees / "on", trees / "off") is RunsScreen


def test_open_help_says_trees_open_on_a_grid():
    from click.testing import CliRunner

    from fpinspect.cli import main

    r = CliRunner().invoke(main, ["open", "-h"], terminal_width=100)
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "a grid of ranks × graphs at one step" in text and "one row per leaf pair" not in text
