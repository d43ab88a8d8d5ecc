"""``report --plan`` on a results folder received from someone else: a figure name or a link
in it never makes the report embed or link a file from outside the folder, and text read from
``result.json`` never becomes a script, an image or a link in ``plan.md``."""

from __future__ import annotations

import base64
import json
import os

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from fpinspect.cli import main
from fpinspect.experiments.results import Histogram, Table, TaskReport, Verdict

PNG = b"\x89PNG\r\n\x1a\n"


def _result(folder, *, figure="h", claim="§1.2 (4)", cell="x", measured="measured") -> None:
    report = TaskReport(
        task="C3",
        title="rsqrt",
        claim=claim,
        profile="quick",
        environment={"device": "cpu", "torch": "2.13.0"},
        settings={"dtype": "float16", "seed": 1234},
        data={},
        verdicts=[Verdict("topic", "expected", measured, True)],
        tables=[Table("Plan table", ("a", "b"), ((1, cell),))],
        histograms=[Histogram(figure, "H", "x", ("0", "1"), (4, 1))],
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps(report.to_dict()), "utf-8")


def _plan(results, out):
    r = CliRunner().invoke(
        main,
        [
            "report",
            "--plan",
            str(results),
            "--out",
            str(out / "plan.html"),
            "--markdown",
            str(out / "plan.md"),
        ],
    )
    assert r.exit_code == 0, r.output
    return (out / "plan.html").read_text("utf-8"), (out / "plan.md").read_text("utf-8")


@pytest.fixture
def secret(tmp_path):
    """A PNG-signed file outside the results folder, and its base64 as a page would embed it."""
    path = tmp_path / "secret" / "key.png"
    path.parent.mkdir()
    path.write_bytes(PNG + b"private key material")
    return path, base64.b64encode(path.read_bytes()).decode("ascii")


def test_a_figure_inside_the_folder_is_embedded(tmp_path):
    _result(tmp_path / "results" / "C3")
    (tmp_path / "results" / "C3" / "figures").mkdir()
    (tmp_path / "results" / "C3" / "figures" / "h.png").write_bytes(PNG + b"drawn")
    html, md = _plan(tmp_path / "results", tmp_path)
    assert base64.b64encode(PNG + b"drawn").decode("ascii") in html
    assert "](results/C3/figures/h.png)" in md


def test_a_figure_name_climbing_out_of_the_folder_is_not_embedded(tmp_path, secret):
    folder = tmp_path / "results" / "C3"
    _result(folder, figure="../../../secret/key")
    (folder / "figures").mkdir()
    html, md = _plan(tmp_path / "results", tmp_path)
    assert secret[1] not in html and "secret" not in md
    assert "H: not drawn" in md


def test_a_link_out_of_the_folder_is_not_followed(tmp_path, secret):
    folder = tmp_path / "results" / "C3"
    _result(folder)
    (folder / "figures").mkdir()
    os.symlink(secret[0], folder / "figures" / "h.png")
    html, md = _plan(tmp_path / "results", tmp_path)
    assert secret[1] not in html and "](results/C3/figures/h.png)" not in md
    # nor a figures folder that is itself a link out
    os.unlink(folder / "figures" / "h.png")
    os.rmdir(folder / "figures")
    os.symlink(secret[0].parent, folder / "figures")
    (secret[0].parent / "h.png").write_bytes(secret[0].read_bytes())
    html, md = _plan(tmp_path / "results", tmp_path)
    assert secret[1] not in html and "figures/h.png" not in md


def test_markdown_from_results_is_escaped(tmp_path):
    _result(
        tmp_path / "results" / "C3",
        claim="<script>alert(1)</script>",
        cell="<img src=x onerror=alert(1)>",
        measured="[click](javascript:alert(1)) ![i](javascript:x) <javascript:alert(2)> `code` *bold*",
    )
    _, md = _plan(tmp_path / "results", tmp_path)
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    assert "<script" not in rendered and "<img" not in rendered
    assert 'href="javascript' not in rendered and "<a " not in rendered and "<em>" not in rendered
    # what was written is still what is shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "[click](javascript:alert(1))" in rendered


def test_no_results_of_b_and_e_is_not_called_no_counter_example(tmp_path):
    _result(tmp_path / "results" / "C3")
    html, md = _plan(tmp_path / "results", tmp_path)
    for text in (html, md):
        assert "No counter-example" not in text
        assert "B and E have no results: no counter-example can be listed." in text
