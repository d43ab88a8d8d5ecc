"""Names read from graph and dump files, and text read from results, never become markup in the
HTML reports: an op named ``"><img src=x onerror=alert(1)>`` is shown as written wherever the
page names it, and adds no element and no attribute to the page."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_escape_sequences import OP, renamed_sample

from fpinspect.cli import main
from fpinspect.dumps.formats.datadump import normalise_name
from fpinspect.experiments.results import Table, TaskReport, Verdict

NAMES = {
    "attribute": 'autofuse_2_"><img src=x onerror=alert(1)>Add',
    "script": "autofuse_2_<script>alert(1)</script>Add",
    "entity": "autofuse_2_&lt;b&gt;'Add",
}


class _Page(HTMLParser):
    """The elements of a page, where a text is shown (the innermost element around each piece
    of text holding it) and in which attributes."""

    def __init__(self, needle: str):
        super().__init__(convert_charrefs=True)
        self.needle, self.tags, self.shown, self.attributes = needle, [], [], set()
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in ("br", "input", "meta", "img", "rect"):
            self._open.append(tag)
        self.attributes |= {(tag, k) for k, v in attrs if v and self.needle in v}

    def handle_endtag(self, tag):
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]

    def handle_data(self, data):
        if self.needle in data:
            self.shown.append((self._open[-1], data))


def _parse(text: str, needle: str) -> _Page:
    page = _Page(needle)
    page.feed(text)
    page.close()
    return page


@pytest.fixture(params=list(NAMES))
def hostile_page(request, tmp_path):
    name = NAMES[request.param]
    folder = renamed_sample(tmp_path / "run", OP, name)
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", str(folder), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out.read_text("utf-8"), name


def test_an_op_name_is_shown_as_written_wherever_the_comparison_page_names_it(hostile_page):
    text, name = hostile_page
    page = _parse(text, name)
    # no element of the name's: only the page's own script, and no image at all
    assert page.tags.count("script") == 1 and "img" not in page.tags
    assert name not in text  # every '<', '"' and '&' of it written as an entity
    assert page.attributes == {("div", "id")}  # the card's anchor, op-NAME
    shown = [(tag, " ".join(data.split())) for tag, data in page.shown]
    # the summary's sentence and the introduced list
    lead = f"Look first at {name} (AscBackend): output 0 vs add: fusion itself changed"
    assert any(tag == "p" and data.startswith(lead) for tag, data in shown)
    assert shown.count(("td", name)) == 1 + 6  # introduced; the records' table: 2 outputs, 4 inputs
    assert ("h2", name) in shown  # the card's heading
    # the fused dump files of its compared records (its two outputs at least), named as the
    # dumper writes the name
    in_files = normalise_name(name)
    assert in_files not in text
    files = [data for tag, data in _parse(text, in_files).shown if tag == "code"]
    assert len(files) >= 2 and all(Path(f).name.startswith(f"AscBackend.{in_files}.") for f in files)


def test_text_read_from_a_result_is_shown_as_written_in_the_plan_page(tmp_path):
    evil = NAMES["attribute"] + NAMES["script"]
    report = TaskReport(
        task="C3",
        title=evil,
        claim=evil,
        profile="quick",
        environment={"device": "cpu", "torch": "2.13.0", "device_name": evil},
        settings={"dtype": "float16", "seed": 1234},
        data={},
        verdicts=[Verdict(evil, "expected", evil, True)],
        tables=[Table(evil, ("a", evil), ((1, evil),))],
    )
    folder = tmp_path / "results" / "C3"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(report.to_dict()), "utf-8")
    out = tmp_path / "plan.html"
    r = CliRunner().invoke(main, ["report", "--plan", str(folder.parent), "--out", str(out)])
    assert r.exit_code == 0, r.output
    page = _parse(out.read_text("utf-8"), evil)
    assert "script" not in page.tags and "img" not in page.tags and not page.attributes
    # the index's device name; the claim; where it was measured; the verdict's topic and
    # measurement; the table's title, column and cell
    assert [tag for tag, _ in page.shown] == ["td", "p", "p", "td", "td", "h3", "th", "td"]
