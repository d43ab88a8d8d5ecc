"""``fpinspect report``: a comparison as one self-contained HTML page."""

from __future__ import annotations

import json
import os

import click

from .output import check_destination, report_file
from .usage import UsageProblem


@click.command("report")
@click.argument("source", metavar="RUN_DIR|REPORT.json")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="the HTML file to write")
def report_command(source: str, out: str) -> None:
    """Write a comparison as one HTML file that opens offline in any browser.

    RUN_DIR is a run folder (dumpgraph_af_open/, dumpgraph_af_close/, datadump_af_open/,
    datadump_af_close/), compared now; REPORT.json a saved `fpinspect compare --format json`
    report. The page: the summary and the op to look at first, a sortable and filterable table
    of the records, and a card per fused op with its metrics, replay, ULP histogram and worst
    elements.
    """
    from ..reports.html import render

    check_destination(out)
    if os.path.isdir(source):
        report, bins = _compared(source)
        title = f"fpinspect: {os.path.basename(os.path.normpath(source))}"
    else:
        report, bins, title = _saved(source), None, f"fpinspect: {os.path.basename(source)}"
    with report_file(out) as f:
        f.write(render(report, bins, title))
    click.echo(f"wrote {out}")


def _saved(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except FileNotFoundError:
        raise UsageProblem(f"report {path} does not exist.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UsageProblem(f"report {path} is not a readable JSON report ({exc}).") from None
    if not isinstance(report, dict) or not isinstance(report.get("records"), list):
        raise UsageProblem(f"report {path} has no records: give a `fpinspect compare --format json` report.")
    if not all(
        isinstance(r, dict) and {"fused_op", "kind", "fused_index"} <= set(r) for r in report["records"]
    ):
        raise UsageProblem(f"report {path} has records without fused_op, kind and fused_index.")
    return report


def _compared(folder: str):
    from ..dumps.compare import DumpComparison
    from ..dumps.drilldown import ulp_bins
    from ..dumps.errors import InputError
    from ..dumps.runfolder import run_folder
    from ..replay.run import run_with_replay

    try:
        report = run_with_replay(DumpComparison(*run_folder(folder)), compare_input=True)
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
    bins = {}
    for rec in report.records:
        if rec.result is not None and rec.result.compared and rec.result.stats is not None:
            b = ulp_bins(rec.result.stats)
            bins[rec.plan.key] = (b.counts.tolist(), list(b.lower), b.integer)
    return report.to_json(), bins
