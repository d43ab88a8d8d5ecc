"""The inspector as users drive it: real key presses on real-format dumps."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from gefixtures import GraphBuilder, tensor, write_dump
from harness import SIZE, app_for, drive, settle
from network import build_cast_and_flatten
from textual.geometry import Region
from textual.widgets import Input, Static

from fpinspect.cli import main as cli
from fpinspect.dumps import DumpComparison
from fpinspect.dumps.formats.layouts import pack_layout
from fpinspect.tui.model import WORST
from fpinspect.tui.screens.main import MainScreen
from fpinspect.tui.screens.pair import PairScreen
from fpinspect.tui.screens.pick import PickFilesScreen
from fpinspect.tui.screens.warnings import WarningsScreen
from fpinspect.tui.widgets.banner import Banner
from fpinspect.tui.widgets.histogram import UlpHistogram
from fpinspect.tui.widgets.op_detail import OpDetail
from fpinspect.tui.widgets.op_list import OpList
from fpinspect.tui.widgets.profile import ProfileView
from fpinspect.tui.widgets.worst import WorstTable

INTRODUCED = "autofuse_2_Gelu_Mul"


def text_of(widget) -> str:
    """What a widget shows, as plain text (wrapped lines joined by spaces)."""
    lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
    return " ".join(line.text.strip() for line in lines)


def current(pilot) -> str | None:
    row = pilot.app.screen.query_one(OpList).current
    return row.name if row else None


def test_n_lands_on_the_failing_op_and_shows_its_originals(regression):
    async def scenario(pilot):
        screen = pilot.app.screen
        assert f"First introduced error: {INTRODUCED}" in text_of(screen.query_one(Banner))
        assert current(pilot) == "autofuse_1_Mul_Add"
        await pilot.press("n")
        assert current(pilot) == INTRODUCED
        detail = screen.query_one(OpDetail)
        originals = text_of(detail.query_one("#detail-originals", Static))
        assert "Gelu_3" in originals and "Mul_4" in originals and "← Add_2" in originals
        assert "introduced" in text_of(detail.query_one("#detail-head", Static))
        await pilot.press("n")
        assert current(pilot) == "autofuse_3_Tanh_Mul"
        await pilot.press("N")
        assert current(pilot) == INTRODUCED

    drive(app_for(regression), scenario)


def test_enter_shows_the_histogram_and_the_worst_elements(regression):
    async def scenario(pilot):
        await pilot.press("n", "enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PairScreen)
        bins = screen.query_one(UlpHistogram).bins
        assert bins is not None and bins.integer and bins.total == 64 * 256
        worst = screen.query_one(WorstTable)
        assert worst.row_count == 10
        assert [str(c.label) for c in worst.ordered_columns][:3] == ["index", "A", "B"]
        profile = "\n".join(text_of(s) for s in screen.query_one(ProfileView).query(Static))
        assert (
            "Where errors concentrate" in profile
            and "by row (64)" in profile
            and "by column (256)" in profile
        )
        assert "Mul_4:0" in text_of(screen.query_one("#pair-title", Static))
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, MainScreen)
        assert current(pilot) == INTRODUCED

    drive(app_for(regression), scenario)


def test_a_pair_card_drills_into_that_pair(regression):
    async def scenario(pilot):
        await pilot.press("n")
        cards = pilot.app.screen.query_one(OpDetail).cards
        assert [c.plan.kind for c in cards] == ["output", "input"]
        cards[1].focus()
        await pilot.press("enter")
        await settle(pilot)
        assert "input 0" in text_of(pilot.app.screen.query_one("#pair-title", Static))

    drive(app_for(regression), scenario)


def test_slash_filters_by_name_or_original_op(regression):
    async def scenario(pilot):
        screen = pilot.app.screen
        ops = screen.query_one(OpList)
        await pilot.press("slash", *"tanh")
        assert ops.shown == ["autofuse_3_Tanh_Mul"]
        await pilot.press(*["backspace"] * 4)
        await pilot.press(*"relu_8")  # an original op name finds its fused op
        assert ops.shown == ["autofuse_4_Add_Relu"]
        await pilot.press("enter")
        assert ops.has_focus
        await pilot.press("escape")
        assert len(ops.shown) == 4 and current(pilot) == "autofuse_4_Add_Relu"
        await pilot.press("slash", *"fail")  # a verdict word lists the failing ops
        assert len(ops.shown) == 3
        await pilot.press(*["backspace"] * 4, *"inherited")  # and a cause word, those of that cause
        inherited = [r.name for r in screen.inspection.rows if r.role == "inherited"]
        assert inherited and ops.shown == inherited

    drive(app_for(regression), scenario)


def test_i_p_c_and_s_move_around_the_graph(regression):
    async def scenario(pilot):
        await pilot.press("i")
        assert current(pilot) == INTRODUCED
        await pilot.press("p")
        assert current(pilot) == "autofuse_1_Mul_Add"
        await pilot.press("c")  # two consumers: a palette offers both
        await pilot.press(*"Relu", "enter")
        assert current(pilot) == "autofuse_4_Add_Relu"
        await pilot.press("s")
        assert pilot.app.screen.query_one(OpList).shown == [
            INTRODUCED,
            "autofuse_3_Tanh_Mul",
            "autofuse_4_Add_Relu",
            "autofuse_1_Mul_Add",
        ]

    drive(app_for(regression), scenario)


def test_d_diffs_two_files_chosen_in_the_picker(regression):
    async def scenario(pilot):
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(pilot.app.screen, PickFilesScreen)
        # the tree lists datadump_af_close, datadump_af_open, ...: open the second, pick its 2nd file
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        await pilot.press("down", "down", "enter")
        await pilot.press("tab", *"datadump_af_close/Adds.Add_2.3.44.1783906987170021.output.0.npy", "enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PairScreen)
        assert screen.subject.names == (
            "AscBackend.autofuse_1_Mul_Add.3.44.1783906987170021.output.0.npy",
            "Adds.Add_2.3.44.1783906987170021.output.0.npy",
        )
        assert screen.query_one(UlpHistogram).bins.total == 64 * 256
        assert screen.query_one(WorstTable).row_count == 10
        assert "cosine similarity" in text_of(screen.query_one("#pair-report", Static))

    drive(app_for(regression), scenario)


def test_q_quits_while_a_pair_is_being_computed(regression, monkeypatch):
    """Quitting stops the sweep: the pair it is in the middle of is the last one computed."""
    started, finished = threading.Event(), []
    original = DumpComparison.compute

    def slow(self, plan):
        if plan.comparable:
            started.set()
            time.sleep(1)
            finished.append(plan.key)
        return original(self, plan)

    monkeypatch.setattr(DumpComparison, "compute", slow)
    app = app_for(regression)

    async def main():
        async with app.run_test(size=SIZE) as pilot:
            while not started.is_set():
                await pilot.pause(0.05)
            assert any(w.group == "sweep" and w.is_running for w in app.workers)
            await pilot.press("q")

    asyncio.run(main())  # returns once every worker thread has returned
    assert app.return_code == 0
    assert len(finished) == 1


def test_browsing_one_graph_says_how_to_compare(regression, tmp_path):
    for folder in ("dumpgraph_af_open", "datadump_af_open"):
        shutil.copytree(regression / folder, tmp_path / folder)

    async def scenario(pilot):
        screen = pilot.app.screen
        banner = text_of(screen.query_one(Banner))
        assert "Browsing one graph" in banner and "--close-graph" in banner
        assert len(screen.query_one(OpList).shown) == 4
        await pilot.press("enter")
        assert isinstance(pilot.app.screen, MainScreen)
        cards = screen.query_one(OpDetail).cards
        assert "AscBackend.autofuse_1_Mul_Add" in text_of(cards[0])
        assert "Mul_1" in text_of(screen.query_one("#detail-originals", Static))

    drive(app_for(tmp_path / "dumpgraph_af_open" / "Build.json"), scenario)


def test_unreadable_graph_exits_with_one_sentence(tmp_path):
    (tmp_path / "dumpgraph_af_open").mkdir()
    bad = tmp_path / "dumpgraph_af_open" / "Build.json"
    bad.write_text("{not json", encoding="utf-8")
    app = app_for(bad)

    async def main():
        async with app.run_test() as pilot:
            await settle(pilot)

    asyncio.run(main())
    assert app.return_code == 2
    assert str(bad) in app.return_value and "not valid JSON" in app.return_value


def test_export_writes_what_compare_writes(regression, tmp_path):
    target = tmp_path / "records.csv"

    async def scenario(pilot):
        await pilot.press("ctrl+p", *"export csv", "enter")
        await settle(pilot)
        pilot.app.screen.query_one("#prompt-input", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)

    drive(app_for(regression), scenario)
    flags = []
    for side in ("open", "close"):
        flags += [
            f"--af-{side}-graph",
            str(regression / f"dumpgraph_af_{side}" / "Build.json"),
            f"--af-{side}-data",
            str(regression / f"datadump_af_{side}"),
        ]
    expected = CliRunner().invoke(cli, ["compare", *flags, "--compare-input", "--format", "csv"]).output
    assert list(csv.reader(io.StringIO(target.read_text()))) == list(csv.reader(io.StringIO(expected)))


def test_keys_can_be_remapped(regression):
    async def scenario(pilot):
        await pilot.press("f")
        assert current(pilot) == INTRODUCED

    drive(app_for(regression, keymap={"next-failing": "f"}), scenario)


def test_ten_thousand_ops_list_filter_and_scroll(big):
    async def scenario(pilot):
        ops = pilot.app.screen.query_one(OpList)
        assert len(ops.shown) == 10_000
        await pilot.press("end")
        assert current(pilot) == "autofuse_9999_Mul_Add"
        await pilot.press("n")  # wraps to the first failing op
        assert current(pilot) == "autofuse_3_Mul_Add"
        await pilot.press("slash", *"autofuse_512_", "enter")
        assert ops.shown == ["autofuse_512_Mul_Add"]

    drive(app_for(big), scenario)


def test_a_converted_pair_is_profiled_in_the_original_layout(tmp_path):
    """Fused output stored as NC1HWC0, original NCHW: the drill-down says so and names channels."""
    rng = np.random.default_rng(0)
    nchw = rng.standard_normal((2, 20, 3, 5)).astype(np.float16)
    off_value = nchw.copy()
    off_value[:, 7] += np.float16(0.5)  # channel 7 differs
    packed = pack_layout(nchw, "NCHW", "NC1HWC0")
    on = GraphBuilder().op("x", "Data", outputs=[tensor([4])])
    on.fused(
        "F",
        inputs=["x:0"],
        outputs=[
            tensor(
                packed.shape,
                layout="NC1HWC0",
                origin_format="NCHW",
                origin_shape=nchw.shape,
                origin_name="A",
                origin_index=0,
            )
        ],
        original=[("A", "Mul")],
    )
    off = GraphBuilder().op("x", "Data", outputs=[tensor([4])])
    off.op("A", "Mul", inputs=["x:0"], outputs=[tensor(nchw.shape, layout="NCHW")])
    on.write(tmp_path / "dumpgraph_af_open" / "Build.json")
    off.write(tmp_path / "dumpgraph_af_close" / "Build.json")
    write_dump(tmp_path / "datadump_af_open", "AscBackend", "F", "output", 0, packed)
    write_dump(tmp_path / "datadump_af_close", "Mul", "A", "output", 0, off_value)

    async def scenario(pilot):
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert "converted: fused NC1HWC0->NCHW" in text_of(screen.query_one("#pair-title", Static))
        profile = "\n".join(text_of(s) for s in screen.query_one(ProfileView).query(Static))
        assert "by channel (20): 7 100.00%" in profile

    drive(app_for(tmp_path), scenario, size=(160, 45))


SAMPLES = Path(__file__).resolve().parents[2] / "sample_dumps"


@pytest.fixture(scope="module")
def cast_and_flatten(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cast_and_flatten")
    build_cast_and_flatten(root)
    return root


@pytest.mark.parametrize("run", ["regression", "clean", "cast_and_flatten"])
def test_the_exported_json_is_what_compare_prints(run, cast_and_flatten, tmp_path):
    """The inspector's records come from its background sweep; exported, they must equal
    ``fpinspect compare --compare-input --worst 10 --format json`` on the same run, number for
    number (the inspector keeps the 10 worst elements of each pair, as ``diff`` lists)."""
    root = cast_and_flatten if run == "cast_and_flatten" else SAMPLES / run
    target = tmp_path / "records.json"
    app = app_for(root)

    async def scenario(pilot):
        assert pilot.app.screen.inspection.localisation is not None  # the sweep is done
        await pilot.press("ctrl+p", *"export json", "enter")
        await settle(pilot)
        pilot.app.screen.query_one("#prompt-input", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)

    drive(app, scenario)
    src = app.settings.sources
    flags = [
        "--af-open-graph",
        src.open_graph,
        "--af-close-graph",
        src.close_graph,
        "--af-open-data",
        src.open_data,
        "--af-close-data",
        src.close_data,
    ]
    printed = CliRunner().invoke(
        cli, ["compare", *flags, "--compare-input", "--worst", str(WORST), "--format", "json"]
    )
    assert printed.exit_code == 0, printed.output
    exported = json.loads(target.read_text())
    assert exported == json.loads(printed.output)
    assert exported["records"] and all(
        r["verdict"] is not None for r in exported["records"] if r["kind"] == "output"
    )


def test_a_pair_needing_a_cast_and_a_flattening_drills_down(cast_and_flatten):
    async def scenario(pilot):
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PairScreen)
        assert "compared as declared float16" in text_of(screen.query_one("#pair-title", Static))
        profile = "\n".join(text_of(s) for s in screen.query_one(ProfileView).query(Static))
        assert "not available" not in profile
        assert "16 of 128 elements (12.50%) are off" in profile
        assert "by element (128): 80 6.25%" in profile

    drive(app_for(cast_and_flatten), scenario, size=(160, 45))


def test_warnings_about_the_inputs_are_told_and_listed_with_w(regression, tmp_path):
    """What compare reports under ``sources.warnings`` reaches the screen: a notice once the run
    is read, and ``w`` lists every warning (here a dump folder's ``backup/``, ignored)."""
    run = tmp_path / "run"
    shutil.copytree(regression, run)
    backup = run / "datadump_af_open" / "backup"
    backup.mkdir()
    first = next((run / "datadump_af_open").glob("*.npy"))
    shutil.copy(first, backup / first.name)

    async def scenario(pilot):
        app = pilot.app
        told = list(app.told)
        assert any("1 warning about the inputs" in m and "backup: ignored" in m for m in told), told
        await pilot.press("w")
        screen = app.screen
        assert isinstance(screen, WarningsScreen)
        listed = "".join(text_of(screen.query_one("#warnings-list", Static)).split())  # wrapped
        assert "".join(f"{backup}: ignored, its name is not an iteration number".split()) in listed
        await pilot.press("escape")
        assert not isinstance(app.screen, WarningsScreen)

    drive(app_for(run), scenario)


def test_w_says_when_there_is_no_warning(regression):
    async def scenario(pilot):
        await pilot.press("w")
        assert not isinstance(pilot.app.screen, WarningsScreen)
        assert any("No warning about the inputs" in m for m in pilot.app.told)

    drive(app_for(regression), scenario)


def test_a_first_compile_of_the_kernels_is_told_in_a_notification(regression, monkeypatch):
    """The first time after an install the statistics kernels compile for seconds: the sweep says
    so (here the cache is made to look cold; the kernels themselves are warm)."""
    from fpinspect.numerics import warmup

    monkeypatch.setattr(warmup, "needs_compile", lambda: True)

    async def scenario(pilot):
        told = list(pilot.app.told)
        assert any(m.startswith("Compiling the numerics kernels once") for m in told), told

    drive(app_for(regression), scenario)
