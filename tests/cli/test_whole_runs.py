"""`report`, `switches` and `repro` take a whole run, as `compare` does: a run folder whose data
folders are rank/step trees, or a saved report of one. Where one leaf is needed it is chosen with
--ranks/--graphs/--steps, and without them the command names the leaves (report, repro) or
answers for the whole run (switches: the introduced ops of every leaf, by graph)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from runtrees import CULPRIT, write_run

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


@pytest.mark.parametrize("source", ["run_dir", "saved"])
def test_report_of_a_whole_run_names_its_leaves_and_reports_the_one_chosen(source, request, tmp_path):
    src = request.getfixturevalue(source)
    r = cli("report", src, "--out", tmp_path / "all.html")
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith("fpinspect: ") and LEAVES in r.output and "--ranks" in r.output

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
