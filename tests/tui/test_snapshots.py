"""Layout of the main screens, pinned as SVG snapshots (update with --snapshot-update after
reviewing the report). Data are seeded and file names carry fixed timestamps."""

from __future__ import annotations

import shutil

from harness import SIZE, app_for, settle

from fpinspect.tui.pairs import FilePair
from fpinspect.tui.screens.pair import PairScreen

WIDE = (160, 45)


def test_main_screen(snap_compare, regression):
    assert snap_compare(app_for(regression), press=["n"], terminal_size=SIZE, run_before=settle)


def test_main_screen_wide(snap_compare, regression):
    assert snap_compare(app_for(regression), press=["n"], terminal_size=WIDE, run_before=settle)


def test_main_screen_light_theme_clean_run(snap_compare, clean):
    assert snap_compare(app_for(clean, theme="textual-light"), terminal_size=SIZE, run_before=settle)


async def drill_into_first_failing(pilot) -> None:
    await settle(pilot)
    await pilot.press("n", "enter")
    await settle(pilot)


def test_drill_down(snap_compare, regression):
    assert snap_compare(app_for(regression), terminal_size=SIZE, run_before=drill_into_first_failing)


def test_drill_down_wide(snap_compare, regression):
    assert snap_compare(app_for(regression), terminal_size=WIDE, run_before=drill_into_first_failing)


def test_quick_diff(snap_compare, regression):
    a = regression / "datadump_af_open" / "AscBackend.autofuse_3_Tanh_Mul.3.44.1783906987170021.output.0.npy"
    b = regression / "datadump_af_close" / "Muls.Mul_6.3.44.1783906987170021.output.0.npy"

    async def before(pilot):
        await settle(pilot)
        await pilot.app.push_screen(PairScreen(FilePair(str(a), str(b))))
        await settle(pilot)

    assert snap_compare(app_for(regression), terminal_size=SIZE, run_before=before)


def test_help(snap_compare, regression):
    assert snap_compare(app_for(regression), press=["question_mark"], terminal_size=SIZE, run_before=settle)


def test_browsing_one_graph(snap_compare, regression, tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("browse", numbered=False)
    shutil.copytree(regression / "dumpgraph_af_open", root / "dumpgraph_af_open", dirs_exist_ok=True)
    monkeypatch.chdir(root)  # the banner's command then names the graph by a relative path
    assert snap_compare(app_for(root), terminal_size=SIZE, run_before=settle)
