"""`fpinspect compare RUN`: a run folder (or its fusion-on graph) instead of four options."""

import json
import os
import shutil

from click.testing import CliRunner

from fpinspect.cli import main

SAMPLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "sample_dumps", "regression"))


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _records(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["records"]


def test_a_run_folder_gives_what_the_four_options_give():
    flags = []
    for side, folder in (
        ("open-graph", "dumpgraph_af_open/Build.json"),
        ("close-graph", "dumpgraph_af_close/Build.json"),
        ("open-data", "datadump_af_open"),
        ("close-data", "datadump_af_close"),
    ):
        flags += [f"--af-{side}", f"{SAMPLE}/{folder}"]
    expected = _records(_run("compare", *flags, "--format", "json"))
    assert _records(_run("compare", SAMPLE, "--format", "json")) == expected
    graph = f"{SAMPLE}/dumpgraph_af_open/Build.json"
    assert _records(_run("compare", graph, "--format", "json")) == expected


def test_an_option_wins_over_what_the_run_folder_implies(tmp_path):
    shutil.copytree(f"{SAMPLE}/datadump_af_open", tmp_path / "same")
    records = _records(_run("compare", SAMPLE, "--af-close-data", tmp_path / "same", "--format", "json"))
    assert {r["fused_file"] is not None and r["origin_file"] is None for r in records} == {True}


def test_what_is_missing_is_named(tmp_path):
    r = _run("compare")
    assert r.exit_code == 2 and "give a run folder, or --af-open-graph" in r.output
    graph = tmp_path / "g.json"
    shutil.copy(f"{SAMPLE}/dumpgraph_af_open/Build.json", graph)
    r = _run("compare", graph)
    assert r.exit_code == 2 and "--af-close-graph, --af-open-data, --af-close-data" in r.output
    r = _run("compare", tmp_path / "nothing")
    assert r.exit_code == 2 and "does not exist" in r.output and "Traceback" not in r.output
