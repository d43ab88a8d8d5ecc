"""What a new user tripped over in the inspector: a card ``enter`` opens that is not on screen,
a ``tab`` that lands nowhere useful, the help's markup, cut-off columns, the grid's silent cells."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness import app_for, drive, settle, until
from test_inspector import text_of
from textual.widgets import Static

from fpinspect.tui.screens.help import HelpScreen
from fpinspect.tui.screens.pair import PairScreen
from fpinspect.tui.widgets.op_detail import OpDetail, PairCard
from fpinspect.tui.widgets.op_list import OpList

SAMPLES = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps"
CULPRIT = "autofuse_2_Add_LayerNorm"
WIDE = (160, 48)


def _unclipped(detail: OpDetail) -> list[str]:
    """The cards of ``detail`` whose lines fit inside their container (none cut off)."""
    pairs = detail.query_one("#detail-pairs")
    return [
        card.plan.key
        for card in detail.cards
        if card.virtual_region_with_margin.bottom <= pairs.size.height and card.size.height > 1
    ]


def test_after_a_every_card_of_the_op_stays_whole(tmp_path):
    seen = {}

    async def scenario(pilot):
        await pilot.press("i")
        detail = pilot.app.screen.query_one(OpDetail)
        seen["before"] = [c.plan.key for c in detail.cards]
        await pilot.press("a")
        await settle(pilot)
        seen["after"] = _unclipped(detail)
        seen["picked"] = detail.picked(pilot.app.screen.inspection, CULPRIT).key
        seen["info"] = text_of(detail.query_one("#detail-info", Static))

    drive(app_for(SAMPLES / "regression"), scenario, size=WIDE)
    assert len(seen["before"]) == 6
    assert seen["after"] == seen["before"] and seen["picked"] in seen["after"]
    assert "Inputs (4)" in seen["info"]


def test_the_first_tab_from_the_list_lands_on_a_card_enter_opens():
    seen = {}

    async def scenario(pilot):
        await pilot.press("i", "tab")
        seen["focused"] = pilot.app.focused
        await pilot.press("enter")
        await settle(pilot)
        seen["screen"] = pilot.app.screen
        await pilot.press("escape", "shift+tab")
        seen["back"] = pilot.app.focused

    drive(app_for(SAMPLES / "regression"), scenario, size=WIDE)
    assert isinstance(seen["focused"], PairCard)
    assert isinstance(seen["screen"], PairScreen)
    assert isinstance(seen["back"], OpList)


def test_help_says_which_keys_move_the_bar():
    seen = {}

    async def scenario(pilot):
        await pilot.press("question_mark")
        screen = pilot.app.screen
        assert isinstance(screen, HelpScreen)
        seen["help"] = text_of(screen.query_one("#help-glossary", Static))

    drive(app_for(SAMPLES / "regression"), scenario, size=WIDE)
    assert "[ and ] move the bar" in seen["help"]
    assert "[/b]" not in seen["help"]


def _lines(pilot) -> list[str]:
    ops = pilot.app.screen.query_one(OpList)
    return [strip.text for strip in (ops.render_line(y) for y in range(len(ops.shown) + 1))]


def test_the_op_list_shows_whole_scores_and_causes_at_160_columns():
    seen = {}

    async def scenario(pilot):
        seen["lines"] = _lines(pilot)

    drive(app_for(SAMPLES / "more_accurate"), scenario, size=WIDE)
    row = seen["lines"][1]
    assert row.rstrip().endswith("more accurate") and row.endswith(" ")


def test_the_op_list_fits_a_score_of_twelve_characters():
    from fpinspect.dumps.engine.verdict import format_score

    seen = {}

    async def scenario(pilot):
        insp = pilot.app.screen.inspection
        name = insp.rows[0].name  # "1.23e-05 eps", the longest a score gets
        insp.findings[name] = dataclasses.replace(insp.findings[name], score=1.2345e-5)
        seen["lines"] = _lines(pilot)

    drive(app_for(SAMPLES / "regression"), scenario, size=WIDE)
    assert format_score(1.2345e-5) in seen["lines"][1]


def test_an_empty_cell_of_the_grid_says_why_it_is_empty(tmp_path):
    import shutil

    from runtrees import SAMPLE as RUN_SAMPLE
    from runtrees import STAMP, write_trees

    write_trees(tmp_path)
    shutil.rmtree(tmp_path / "off" / STAMP / "1" / "ge_default_1" / "1" / "0")  # rank 1 lost step 0 off
    seen = {}

    async def scenario(pilot):
        await pilot.press("S", "down", "right", "enter")  # step 0, rank 1's cell
        await pilot.pause()
        seen["notes"] = list(pilot.app.told)

    app = app_for(
        RUN_SAMPLE / "dumpgraph_af_open" / "Build.json",
        str(tmp_path / "on"),
        str(RUN_SAMPLE / "dumpgraph_af_close" / "Build.json"),
        str(tmp_path / "off"),
    )
    drive(app, scenario, size=WIDE)
    assert any(
        "no leaf pair at step 0" in n and "the fusion-off tree has no such step" in n for n in seen["notes"]
    ), seen["notes"]


def test_the_d_picker_lists_raw_dumps_and_says_convert_makes_npy_files(tmp_path):
    from fpinspect.tui.screens.pick import NpyTree, PickFilesScreen

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "Add.add_1.3.44.1783906987170021").write_bytes(b"\0" * 16)  # a raw dump's name
    (raw / "notes.txt").write_text("not a dump")
    seen = {}

    async def scenario(pilot):
        await pilot.app.push_screen(PickFilesScreen(str(raw)))
        tree = pilot.app.screen.query_one(NpyTree)
        await until(pilot, lambda: tree.root.children, timeout=20, what="the picker's listing")
        seen["listed"] = [str(node.label) for node in tree.root.children]
        await pilot.press("down", "enter")
        await pilot.pause()
        seen["notes"] = list(pilot.app.told)

    drive(app_for(SAMPLES / "regression"), scenario, size=WIDE)
    assert seen["listed"] == ["Add.add_1.3.44.1783906987170021"]
    assert any("raw device dump" in n and f"fpinspect convert {raw}" in n for n in seen["notes"]), seen


def test_card_lines_at_160_columns_wrap_no_phrase():
    from textual.geometry import Region

    seen = {}

    async def scenario(pilot):
        await pilot.press("i")
        card = pilot.app.screen.query_one(OpDetail).cards[0]
        region = Region(0, 0, card.outer_size.width, card.outer_size.height)
        seen["lines"] = [s.text.lstrip("▌█ ").rstrip() for s in card.render_lines(region)]

    drive(app_for(SAMPLES / "regression"), scenario, size=WIDE)
    lines = seen["lines"]
    assert "69.6% of elements >= 2 ULP apart > 30%" in lines  # one reason, one line
    assert "AscBackend.autofuse_2_Add_LayerNorm.18.0.1700000000000018.output.0.npy" in lines  # the file whole
    assert "fused vs its eager replay 2.33 eps fail · fidelity 0 ULP" in lines


def test_the_tasks_claims_are_whole_at_160_columns(tmp_path):
    from launchkit import drive as drive_tasks
    from launchkit import tasks_app
    from test_tasks_pane import text

    from fpinspect.experiments.registry import all_tasks

    seen = {}

    async def scenario(pilot):
        await pilot.pause()
        seen["table"] = text(pilot.app.screen.query_one("#task-table"))

    drive_tasks(tasks_app(tmp_path / "runs"), scenario, size=WIDE)
    shown = " ".join(seen["table"].split())
    first = all_tasks()[0]
    assert " ".join(first.claim.split()[-4:]) in shown, shown[:400]


def test_a_task_histograms_unit_is_never_cut():
    import asyncio

    from textual.app import App
    from textual.geometry import Region

    from fpinspect.experiments.results import Histogram
    from fpinspect.tui.widgets.charts import TaskHistogram

    bins = ("0", "1", "2", "3-4", "5-8", "9-16", "17-32", ">32")
    seen = {}

    class One(App):
        def compose(self):
            chart = TaskHistogram()
            chart.styles.width, chart.styles.height = 30, 8
            yield chart

    async def main():
        app = One()
        async with app.run_test(size=(60, 10)) as pilot:
            chart = app.query_one(TaskHistogram)
            chart.histogram = Histogram("h", "t", "ULP distance", bins, (5, 3, 2, 1, 1, 0, 0, 1))
            await pilot.pause()
            region = Region(0, 0, chart.outer_size.width, chart.outer_size.height)
            seen["lines"] = [s.text for s in chart.render_lines(region)]

    asyncio.run(main())
    assert any("ULP distance" in line for line in seen["lines"]), seen["lines"][-3:]


def test_a_cards_wrapped_line_goes_on_under_its_own_indent():
    from textual.geometry import Region

    seen = {}

    async def scenario(pilot):
        await pilot.press("i")
        card = pilot.app.screen.query_one(OpDetail).cards[0]
        region = Region(0, 0, card.outer_size.width, card.outer_size.height)
        seen["lines"] = [s.text.lstrip("▌█").rstrip() for s in card.render_lines(region)]

    drive(app_for(SAMPLES / "regression"), scenario, size=(80, 24))
    lines = seen["lines"]
    at = next(i for i, line in enumerate(lines) if "fusion itself changed the result" in line)
    start = lines[at].index("fusion")
    assert lines[at + 1][:start].strip() == "" and lines[at + 1][start:].startswith("replay, 2.33 eps"), lines


def test_the_clean_runs_score_is_whole_in_the_list_and_its_card_at_160_by_48():
    seen = {}

    async def scenario(pilot):
        seen["row"] = _lines(pilot)[1]
        seen["card"] = text_of(pilot.app.screen.query_one(OpDetail).cards[0])

    drive(app_for(SAMPLES / "clean"), scenario, size=WIDE)
    assert "0.00249 eps " in seen["row"] and "…" not in seen["row"], seen["row"]
    assert "pass  0.00249 eps" in seen["card"], seen["card"]
