"""A verdict, and a failing op's role, look the same wherever they are shown: the terminal table,
the HTML page and Model Explorer's nodes take their colours from one palette."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from fpinspect.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps"


def run(*args, env=None):
    r = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert r.exit_code == 0, r.output
    return r.stdout


def test_the_page_and_model_explorer_colour_each_verdict_alike(tmp_path):
    nodes = json.loads(run("compare", SAMPLES / "regression", "--format", "model-explorer"))["Build"]
    records = json.loads(run("compare", SAMPLES / "regression", "--format", "json"))["records"]
    run("report", SAMPLES / "regression", "--out", tmp_path / "r.html")
    css = dict(
        re.findall(r"\.(pass|warn|fail|none)\{background:(#[0-9a-f]{6})\}", (tmp_path / "r.html").read_text())
    )
    verdict_of = {r["fused_op"]: r["verdict"] for r in records if r["kind"] == "output"}
    seen = set()
    for op, node in nodes["results"].items():
        assert node["bgColor"] == css[verdict_of[op]], op
        seen.add(verdict_of[op])
    assert seen == {"pass", "fail"}
    # the legend: below the warn limit, below the fail limit, beyond
    assert [t["bgColor"] for t in nodes["thresholds"]] == [css["pass"], css["warn"], css["fail"]]


def test_the_terminal_table_shows_a_more_accurate_op_as_the_inspector_does():
    """Bold, in the success colour (the inspector's ``more accurate``); the table had it plain."""
    out = run("compare", SAMPLES / "more_accurate", env={"FORCE_COLOR": "1", "COLUMNS": "120"})
    assert re.search(r"\x1b\[1;32(;\d+)*mmore accurate\x1b\[0m", out), out
    assert re.search(r"\x1b\[1;31(;\d+)*mfail", out)
