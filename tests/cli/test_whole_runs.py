"""`report`, `switches` and `repro` take a whole run, as `compare` does: a run folder whose data
folders are rank/step trees, or a saved report of one. Where one leaf is needed it is chosen with
--ranks/--graphs/--steps, and without them the command names the leaves (report, repro) or
answers for the whole run (switches: the introduced ops of every leaf, by graph)."""

from __future__ import annotations

import html
import json
import re
import shutil

import pytest
from click.testing import CliRunner
from runtrees import CULPRIT, STAMP, write_run

from fpinspect.cli import main

LEAVES = "rank 0, graph ge_default_1/1, step 1; rank 1, graph ge_default_1/1, step 1"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("run"))


@pytest.fixture(scope="module")
def saved(run_dir, tmp_path_factory):
    """The whole run's saved ``compare --format json`` report."""
    path = tmp_path_factory.mktemp("saved") / "run.json"
    r = cli("compare", run_dir, "--format", "json", "-o", path)
    assert r.exit_code == 0, r.output
    return path


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _verdicts(page: str) -> list[str]:
    return re.findall(r'<tr class="(pass|warn|fail|none)"', page)


def _leaf_section(page: str, label: str) -> str:
    """The section of the whole-run ``page`` of the leaf ``label`` (up to the next one)."""
    start = page.index(f"<h1>{html.escape(label)} ")
    end = page.find('<section class="leaf"', start)
    return page[start : None if end < 0 else end]


@pytest.mark.parametrize("source", ["run_dir", "saved"])
def test_report_of_a_whole_run_is_its_grid_then_each_leaf(source, request, tmp_path):
    src = request.getfixturevalue(source)
    out = tmp_path / "all.html"
    r = cli("report", src, "--out", out)
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    grid = page[page.index('<table id="grid">') : page.index("</table>", page.index('<table id="grid">'))]
    # the rank × graph grid: a row per rank, each cell the leaf's worst verdict and introduced op
    rows = re.findall(r"<tr><th>(\d+)</th>(.*?)</tr>", grid, re.S)
    assert [rank for rank, _ in rows] == ["0", "1"] and "<th>ge_default_1/1</th>" in grid
    for _, cell in rows:
        assert 'class="badge fail">fail<' in cell and f"introduced: {CULPRIT}" in cell
    # the run's summary: the op introduced, on every rank; the steps left out and why
    assert re.search(rf"<td>{CULPRIT}</td><td>ge_default_1/1</td><td>0, 1</td>\s*<td>every rank</td>", page)
    assert "step 0: earlier than the latest step" in page
    # then each leaf's records, as the one-leaf page has them
    for rank in ("0", "1"):
        one = tmp_path / f"rank{rank}.html"
        assert cli("report", src, "--out", one, "--ranks", rank).exit_code == 0
        section = _leaf_section(page, f"rank {rank}, graph ge_default_1/1, step 1")
        assert _verdicts(section) == _verdicts(one.read_text(encoding="utf-8")) and "fail" in _verdicts(
            section
        )
        assert f"op-{CULPRIT}" in section


def test_report_of_a_whole_run_says_why_a_cell_was_left_out(run_dir, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    shutil.rmtree(run / "datadump_af_close" / STAMP / "1")  # rank 1 dumped with fusion on only
    out = tmp_path / "run.html"
    r = cli("report", run, "--out", out)
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    rows = dict(re.findall(r"<tr><th>(\d+)</th>(.*?)</tr>", page, re.S))
    assert 'class="badge fail">fail<' in rows["0"]
    assert "left out: rank 1: the fusion-off tree has no rank 1" in rows["1"] and "badge" not in rows["1"]


def test_report_of_a_whole_run_escapes_what_it_shows(saved, tmp_path):
    evil = "<script>alert(1)</script>"
    text = saved.read_text(encoding="utf-8").replace(CULPRIT, evil)
    source = tmp_path / "evil.json"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "evil.html"
    r = cli("report", source, "--out", out)
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    assert evil not in page and f"introduced: {html.escape(evil)}" in page


@pytest.mark.parametrize(
    ("where", "value", "said"),
    [
        (("summary", "introduced"), "autofuse_2", "Expected `array`, got `str` - at `$.summary.introduced`"),
        (
            ("summary", "scope", "skipped", 0),
            1,
            "Expected `object`, got `int` - at `$.summary.scope.skipped[0]`",
        ),
        (
            ("runs", 0, "summary", "thresholds"),
            5,
            "Expected `object`, got `int` - at `$.runs[0].summary.thresholds`",
        ),
    ],
)
def test_report_of_a_saved_whole_run_names_a_wrong_typed_field(saved, tmp_path, where, value, said):
    # read back into the report's types, as a leaf's report is: the field is named, no page is
    # drawn with it left out
    report = json.loads(saved.read_text(encoding="utf-8"))
    inner = report
    for key in where[:-1]:
        inner = inner[key]
    inner[where[-1]] = value
    source = tmp_path / "edited.json"
    source.write_text(json.dumps(report), encoding="utf-8")
    r = cli("report", source, "--out", tmp_path / "edited.html")
    assert r.exit_code == 2
    assert r.stderr == f"fpinspect: report {source} is damaged: {said}.\n"
    assert not (tmp_path / "edited.html").exists()


@pytest.mark.parametrize("source", ["run_dir", "saved"])
def test_report_of_a_whole_run_reports_the_leaf_chosen(source, request, tmp_path):
    src = request.getfixturevalue(source)
    r = cli("report", src, "--out", tmp_path / "some.html", "--steps", "all")
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith("fpinspect: ") and "--ranks" in r.output

    pages = {}
    for rank in ("0", "1"):
        out = tmp_path / f"rank{rank}.html"
        r = cli("report", src, "--out", out, "--ranks", rank)
        assert r.exit_code == 0, r.output
        pages[rank] = _verdicts(out.read_text(encoding="utf-8"))
    assert pages["0"] and pages["0"] == pages["1"]  # both ranks fail alike at step 1


def test_report_of_an_earlier_step_of_one_rank(run_dir, tmp_path):
    out = tmp_path / "healed.html"
    r = cli("report", run_dir, "--out", out, "--ranks", "1", "--steps", "0")
    assert r.exit_code == 0, r.output
    failing = cli("report", run_dir, "--out", tmp_path / "failing.html", "--ranks", "0", "--steps", "0")
    assert failing.exit_code == 0, failing.output
    # rank 1's culprit is exact at step 0: fewer failing rows than rank 0's at that step
    healed = _verdicts(out.read_text(encoding="utf-8")).count("fail")
    assert healed < _verdicts((tmp_path / "failing.html").read_text(encoding="utf-8")).count("fail")


@pytest.mark.parametrize("source", ["run_dir", "saved"])
def test_switches_of_a_whole_run_are_those_of_the_introduced_ops_by_graph(source, request):
    src = request.getfixturevalue(source)
    r = cli("switches", src, "--for", "autofuse", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["introduced"] == [CULPRIT]  # op names, not the run summary's objects
    (graph,) = doc["graphs"]
    assert graph["graph"] == "ge_default_1/1" and graph["introduced"] == [CULPRIT]
    assert graph["autofuse_flags"].startswith("--enable_autofuse=true")
    text = cli("switches", src, "--for", "autofuse")
    assert text.exit_code == 0 and text.output.startswith("graph ge_default_1/1:\n" + CULPRIT)


def test_switches_of_one_chosen_leaf(run_dir):
    r = cli("switches", run_dir, "--for", "autofuse", "--format", "json", "--ranks", "1", "--steps", "0")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["introduced"] == []  # that leaf's culprit is exact


def test_repro_of_a_whole_run_takes_the_leaf_chosen(run_dir, tmp_path):
    r = cli("repro", run_dir, CULPRIT, "--out", tmp_path / "b0")
    assert r.exit_code == 2 and LEAVES in r.output
    r = cli("repro", run_dir, CULPRIT, "--out", tmp_path / "b1", "--ranks", "0")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "b1" / "bundle.npz").is_file() and (tmp_path / "b1" / "repro.py").is_file()
