"""What users tripped over in the Tasks pane and the result views."""

from __future__ import annotations

import dataclasses

from launchkit import FakeClock, drive, sample_report, tasks_app, watch_a_running_run, write_result
from textual.widgets import Static

from fpinspect.experiments.results import Table
from fpinspect.tui.screens.confirm import ConfirmScreen
from fpinspect.tui.screens.open_result import open_result_file
from fpinspect.tui.screens.result import ResultScreen
from fpinspect.tui.widgets.long_table import LongTable


def text(widget) -> str:
    return " ".join(line.text.strip() for line in widget.render_lines(widget.region.reset_offset))


def test_the_cancel_question_shows_its_text_and_the_keys(tmp_path):
    clock = FakeClock()
    app = tasks_app(tmp_path / "runs", clock=clock, task="S")

    async def scenario(pilot):
        run = watch_a_running_run(pilot.app.screen, clock)
        await pilot.press("x")
        await pilot.pause()
        confirm = pilot.app.screen
        assert isinstance(confirm, ConfirmScreen)
        shown = text(confirm.query_one(Static))
        assert f"Cancel {run.label}?" in shown and "y: yes" in shown and "n / escape: no" in shown
        await pilot.press("n")

    drive(app, scenario)


def _open(pilot, path):
    open_result_file(pilot.app, path)
    return pilot.app.screen


def test_a_result_of_several_formats_names_them_all(tmp_path):
    report = sample_report("D")
    report = dataclasses.replace(report, settings={"dtypes": ["float16", "bfloat16"], "seed": 7})
    path = write_result(tmp_path / "d", report)

    async def scenario(pilot):
        screen = _open(pilot, path)
        await pilot.pause()
        head = text(screen.query_one(".result-head", Static))
        assert "float16, bfloat16, seed 7" in head, head

    drive(tasks_app(tmp_path / "runs"), scenario)


def test_a_table_of_150_000_rows_shows_and_scrolls_to_its_end(tmp_path):
    rows = tuple((i, i * 0.5, f"op_{i}") for i in range(150_000))
    report = dataclasses.replace(
        sample_report(), tables=[Table("Every element", ("index", "ulp", "op"), rows)]
    )
    path = write_result(tmp_path / "big", report)

    async def scenario(pilot):
        screen = _open(pilot, path)
        await pilot.pause()
        assert isinstance(screen, ResultScreen)
        table = screen.query_one(LongTable)
        shown = text(table)
        assert "index" in shown and "op_0 " in shown and "op_149999" not in shown
        table.focus()
        await pilot.press("end")
        await pilot.pause()
        assert "149999  74999.5  op_149999" in text(table)
        assert text(table).startswith("index")  # the header stays in view

    drive(tasks_app(tmp_path / "runs"), scenario, timeout=60)
