"""Acting from the inspector, keyboard only: from `fpinspect open sample_dumps/regression` (and
from a leaf of a whole run's grid) reach the culprit, see its switches and copy them, write its
repro bundle and the HTML report, and tag a baseline; then check the files and the store."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from harness import app_for, drive, settle, until
from test_inspector import text_of
from textual.widgets import Input, Label, Static

from fpinspect.cli import main as cli
from fpinspect.inspection import CompareSettings
from fpinspect.store import ResultsDB
from fpinspect.tui.screens.prompt import PathPrompt
from fpinspect.tui.screens.switches import SwitchesScreen
from fpinspect.tui.widgets.op_list import OpList

SAMPLE = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps" / "regression"
CULPRIT = "autofuse_2_Add_LayerNorm"
WIDE = (160, 48)


@pytest.fixture
def db(tmp_path, monkeypatch) -> Path:
    """Outputs go to the working folder (the sample is inside the package); the store is a tmp file."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "results.sqlite"
    monkeypatch.setenv("FPINSPECT_DB", str(path))
    return path


def _panel_text(panel) -> str:
    return "\n".join(text_of(line) for line in panel.query("#switches-text > Static"))


async def _answer(pilot, text: str | None = None) -> str:
    """Accept (or replace) the prompt's prefilled answer; the default it offered."""
    prompt = pilot.app.screen
    assert isinstance(prompt, PathPrompt)
    box = prompt.query_one(Input)
    default = box.value
    if text is not None:
        box.value = text
    await pilot.press("enter")
    await settle(pilot)
    return default


async def _act_on_culprit(pilot, seen: dict) -> None:
    await pilot.press("i")
    seen["op"] = pilot.app.screen.query_one(OpList).current.name
    await pilot.press("f")
    panel = pilot.app.screen
    assert isinstance(panel, SwitchesScreen)
    seen["switches"] = _panel_text(panel)
    await pilot.press("y")
    seen["clipboard"] = pilot.app.clipboard
    await pilot.press("escape", "R")
    seen["repro"] = await _answer(pilot)
    await pilot.press("H")
    seen["report"] = await _answer(pilot)
    await pilot.press("b")
    seen["tag"] = await _answer(pilot, "before-upgrade")
    seen["notes"] = list(pilot.app.told)


def test_from_the_culprit_to_its_switches_repro_report_and_baseline(db, tmp_path):
    seen = {}
    drive(app_for(SAMPLE), lambda pilot: _act_on_culprit(pilot, seen), size=WIDE)
    assert seen["op"] == CULPRIT
    # the switches: each flag, what else it touches, and the line to paste
    assert "--autofuse_disable_pass=reduce" in seen["switches"]
    assert "also touches:" in seen["switches"]
    # the line fpinspect switches prints, on the clipboard
    printed = CliRunner().invoke(cli, ["switches", str(SAMPLE), "--for", "autofuse"], catch_exceptions=False)
    export = printed.output.strip().splitlines()[-1]
    assert export.startswith("export AUTOFUSE_FLAGS=") and seen["clipboard"] == export
    assert export in seen["switches"]
    file = tmp_path / f"regression-{CULPRIT}-switches.txt"
    assert seen["clipboard"] in file.read_text()
    # the capture's Inductor side: what confirm proved, and the command that verifies a switch
    assert "fpinspect switches" in seen["switches"] and "--for inductor" in seen["switches"]
    # the repro bundle, in a new folder beside the run (here: the working folder), and its command
    repro = Path(seen["repro"]).resolve()
    assert repro == tmp_path / f"regression-{CULPRIT}-repro"
    manifest = json.loads((repro / "subgraph.json").read_text())
    assert manifest["op"] == CULPRIT and (repro / "repro.py").is_file() and (repro / "bundle.npz").is_file()
    assert any(f"python {repro / 'repro.py'}" in n for n in seen["notes"]), seen["notes"]
    if importlib.util.find_spec("torch") is not None:  # a capture of a built-in demo: the torch script too
        assert (repro / "repro_torch.py").is_file()
        assert any(f"python {repro / 'repro_torch.py'}" in n for n in seen["notes"])
    # the HTML report
    report = Path(seen["report"]).resolve()
    assert report == tmp_path / "regression-report.html"
    assert CULPRIT in report.read_text() and any(str(report) in n for n in seen["notes"])
    # the baseline: recorded as compare --record does, and tagged
    with ResultsDB(db) as store:
        (run,) = store.runs()
        assert run.kind == "compare" and store.baseline_names(run.id) == ["before-upgrade"]
        summary = store.row_table(run.id, "summary")[0]
    assert summary["introduced"] == [CULPRIT]
    assert any("tagged it before-upgrade" in n for n in seen["notes"])


def test_nothing_is_written_inside_the_run_or_the_package(db, tmp_path):
    seen = {}

    async def scenario(pilot):
        await pilot.press("i", "R")
        await _answer(pilot, str(SAMPLE / "repro"))
        await pilot.press("H")
        await _answer(pilot, str(SAMPLE.parent / "report.html"))
        seen["notes"] = list(pilot.app.told)

    drive(app_for(SAMPLE), scenario, size=WIDE)
    assert not (SAMPLE / "repro").exists() and not (SAMPLE.parent / "report.html").exists()
    assert sum("inside the run" in n or "inside the fpinspect package" in n for n in seen["notes"]) == 2


def test_the_same_from_a_leaf_of_a_whole_runs_grid(db, tmp_path):
    from runtrees import SAMPLE as RUN_SAMPLE
    from runtrees import write_trees

    write_trees(tmp_path / "run")
    seen = {}

    async def scenario(pilot):
        await pilot.press("enter")  # rank 0's cell at the latest step
        await settle(pilot)
        await _act_on_culprit(pilot, seen)

    app = app_for(
        RUN_SAMPLE / "dumpgraph_af_open" / "Build.json",
        str(tmp_path / "run" / "on"),
        str(RUN_SAMPLE / "dumpgraph_af_close" / "Build.json"),
        str(tmp_path / "run" / "off"),
    )
    drive(app, scenario, size=WIDE)
    assert seen["op"] == CULPRIT and seen["clipboard"].startswith("export AUTOFUSE_FLAGS=")
    # beside the run: the folder holding its two dump trees
    assert Path(seen["repro"]).resolve().parent == tmp_path and (Path(seen["repro"]) / "repro.py").is_file()
    assert Path(seen["report"]).resolve().parent == tmp_path and Path(seen["report"]).is_file()
    with ResultsDB(db) as store:
        (run,) = store.runs()
        assert store.baseline_names(run.id) == ["before-upgrade"]


def test_h_on_the_grid_writes_the_whole_runs_report_and_says_so(db, tmp_path):
    from runtrees import SAMPLE as RUN_SAMPLE
    from runtrees import write_trees

    write_trees(tmp_path / "run")
    seen = {}

    async def scenario(pilot):
        await pilot.press("down", "H")  # whichever cell is highlighted: the whole run
        seen["question"] = text_of(pilot.app.screen.query_one(Label))
        seen["report"] = await _answer(pilot)
        seen["notes"] = list(pilot.app.told)

    app = app_for(
        RUN_SAMPLE / "dumpgraph_af_open" / "Build.json",
        str(tmp_path / "run" / "on"),
        str(RUN_SAMPLE / "dumpgraph_af_close" / "Build.json"),
        str(tmp_path / "run" / "off"),
    )
    drive(app, scenario, size=WIDE)
    report = Path(seen["report"]).resolve()
    assert report.parent == tmp_path and report.is_file()
    page = report.read_text(encoding="utf-8")
    # the grid (a row per rank, a cell per step: rank 1's culprit is exact at step 0), then each leaf
    grid = page[page.index('<table id="grid">') : page.index("</tbody></table>")]
    assert grid.count(f"introduced: {CULPRIT}") == 3 and grid.count('class="badge fail"') == 4
    for rank in ("0", "1"):
        for step in ("0", "1"):
            assert f"<h1>rank {rank}, graph ge_default_1/1, step {step} " in page
    assert "whole run" in seen["question"] and "4 leaf pairs" in seen["question"]
    assert any(str(report) in n and "whole run" in n for n in seen["notes"]), seen["notes"]


def test_copy_needs_no_clipboard_to_leave_a_file(db, tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "mine")  # a run outside the package: files go beside it
    seen = {}

    async def scenario(pilot):
        await pilot.press("i", "f", "y")
        seen["notes"] = list(pilot.app.told)

    drive(app_for(tmp_path / "mine"), scenario, size=WIDE)
    file = tmp_path / f"mine-{CULPRIT}-switches.txt"
    assert file.is_file() and any(str(file) in n for n in seen["notes"])


@pytest.fixture
def capture(tmp_path) -> Path:
    """A copy of the bundled capture: confirm keeps its result beside it, never in the package."""
    copy = tmp_path / "regression"
    shutil.copytree(SAMPLE, copy)
    return copy


def test_v_confirms_the_culprit_and_keeps_the_verdict_beside_the_capture(db, capture, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(capture.parent / "inductor"))
    seen = {}

    async def scenario(pilot):
        await pilot.press("i", "v")
        # the banner says so while the confirm runs; a confirm whose model runs are cached can end
        # (3 runs in 0.2 s) before the first look, and then its sentence says it was done
        banner = pilot.app.screen.query_one("#banner")

        def running_or_done() -> bool:
            return "confirming" in text_of(banner) or any(t.startswith("Confirm: ") for t in pilot.app.told)

        try:
            await until(pilot, running_or_done, timeout=20, what="the confirming banner or its result")
        except AssertionError as exc:  # say what the user was told instead
            raise AssertionError(f"{exc}; the banner: {text_of(banner)!r}; told: {pilot.app.told}") from None
        seen["note"] = text_of(banner)
        await settle(pilot)
        seen["head"] = text_of(pilot.app.screen.query_one("#detail-head", Static))
        seen["notes"] = list(pilot.app.told)
        await pilot.press("f")
        seen["switches"] = _panel_text(pilot.app.screen)
        await pilot.press("i")  # Inductor's switch, verified by running the capture again
        await settle(pilot)
        seen["inductor"] = text_of(pilot.app.screen.query_one("#switches-inductor", Static))

    drive(app_for(capture), scenario, size=WIDE)
    assert (
        "torch.compiler.disable on" in seen["inductor"] or "the capture's own exclusion" in seen["inductor"]
    )
    assert f"rerun with {CULPRIT} unfused" in seen["inductor"] and "verified" in seen["inductor"]
    if "confirming" in seen["note"]:  # seen while it ran: what it confirms, and how to stop it
        assert "confirming autofuse_2_Add_LayerNorm" in seen["note"] and "x cancels" in seen["note"]
    else:  # done before the first look (model runs cached): no progress line is left behind
        assert "x cancels" not in seen["note"]
    kept = json.loads((capture / "confirm.json").read_text())
    assert [(r["name"], r["verdict"]) for r in kept["regions"]] == [(CULPRIT, "confirmed")]
    assert "confirmed at the model's outputs" in seen["head"]
    assert any(f"{CULPRIT}: confirmed" in n and str(capture / "confirm.json") in n for n in seen["notes"])
    assert "confirm.json: confirmed" in seen["switches"]
    # the file is the one fpinspect confirm --format json prints (the same spelling)
    assert (capture / "confirm.json").read_text().startswith('{\n  "baseline": {')


def test_x_cancels_a_confirm_and_nothing_is_kept(db, capture, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(capture.parent / "inductor"))
    seen = {}

    async def scenario(pilot):
        await pilot.press("i")
        # queued at once (Pilot.press waits for an idle CPU: for the confirm's end): x is answered
        # as soon as v has started the confirm, and v again while its model run under way ends
        for key in ("v", "x", "v"):
            pilot.app.simulate_key(key)
        await settle(pilot)  # the confirm's worker runs until its thread has stopped
        seen["notes"] = list(pilot.app.told)
        seen["note"] = text_of(pilot.app.screen.query_one("#banner"))

    drive(app_for(capture), scenario, size=WIDE)
    notes = seen["notes"]
    assert not (capture / "confirm.json").exists(), notes
    assert any(f"Confirming {CULPRIT}: cancelled; nothing was kept" in n for n in notes), notes
    assert any("stops after its model run under way: v again once it has" in n for n in notes), notes
    assert "x cancels" not in seen["note"] and "cancelling" not in seen["note"]


def test_a_capture_of_a_users_own_model_is_not_run_from_the_inspector(db, capture):
    spec = json.loads((capture / "capture.json").read_text())
    (capture / "capture.json").write_text(json.dumps({**spec, "model": "evil_module:factory"}))
    (capture / "evil_module.py").write_text("raise SystemExit('imported')\n")
    seen = {}

    async def scenario(pilot):
        await pilot.press("i", "v")
        await settle(pilot)
        seen["notes"] = list(pilot.app.told)

    drive(app_for(capture), scenario, size=WIDE)
    assert any(
        "a model of your own" in n and f"run fpinspect confirm {capture} from the command line" in n
        for n in seen["notes"]
    ), seen["notes"]
    assert not (capture / "confirm.json").exists()


def test_confirm_writes_nothing_into_a_bundled_sample(db):
    seen = {}

    async def scenario(pilot):
        await pilot.press("i", "v")
        await settle(pilot)
        seen["notes"] = list(pilot.app.told)

    drive(app_for(SAMPLE), scenario, size=WIDE)
    assert not (SAMPLE / "confirm.json").exists()
    assert any(
        "inside the fpinspect package" in n and "copy the folder elsewhere" in n for n in seen["notes"]
    )


def test_f_on_an_op_fusion_left_alone_says_no_switch_concerns_it(db):
    seen = {}

    async def scenario(pilot):
        screen = pilot.app.screen
        unfused = next(r.name for r in screen.inspection.rows if not r.name.startswith("autofuse"))
        screen.go_to(unfused)
        await pilot.press("f")
        seen["screen"] = pilot.app.screen
        seen["notes"] = list(pilot.app.told)
        seen["op"] = unfused

    drive(app_for(SAMPLE, compare=CompareSettings(compare_unfused=True)), scenario, size=WIDE)
    assert not isinstance(seen["screen"], SwitchesScreen)
    assert any(seen["op"] in n and "not a fused op" in n for n in seen["notes"]), seen["notes"]
