"""``fpinspect report``: a comparison, or the whole test plan, as one self-contained HTML page."""

from __future__ import annotations

import os

import click

from .output import check_destination, read_report, report_file
from .usage import UsageProblem


@click.command("report")
@click.argument("source", metavar="RUN_DIR|REPORT.json", required=False)
@click.option(
    "--plan",
    "plan_dir",
    metavar="RESULTS_DIR",
    help="report the whole test plan from the tasks' result.json files under RESULTS_DIR",
)
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="the HTML file to write")
@click.option(
    "--markdown",
    type=click.Path(dir_okay=False),
    help="with --plan: also write the report as Markdown to this file",
)
def report_command(source: str | None, plan_dir: str | None, out: str, markdown: str | None) -> None:
    """Write a comparison, or the whole test plan, as one HTML file that opens offline in any browser.

    RUN_DIR is a run folder (dumpgraph_af_open/, dumpgraph_af_close/, datadump_af_open/,
    datadump_af_close/), compared now; REPORT.json a saved `fpinspect compare --format json`
    report. The page: the summary and the op to look at first, a sortable and filterable table
    of the records, and a card per fused op with its metrics, replay, ULP histogram and worst
    elements.

    --plan RESULTS_DIR (instead of a source): every task's result.json under RESULTS_DIR (as
    `fpinspect run all` or `fpinspect run TASK --out RESULTS_DIR/TASK` leave them) in one page:
    which tasks ran where and which are missing, the plan's §12 tables of A and B ready to paste,
    the §6.1 list of fusion switches from B's and E's counter-examples, and per task its
    expectation against the measurement, its tables and figures.
    """
    if (source is None) == (plan_dir is None):
        raise UsageProblem("give either RUN_DIR|REPORT.json or --plan RESULTS_DIR.")
    if markdown is not None and plan_dir is None:
        raise UsageProblem("--markdown goes with --plan.")
    if plan_dir is not None:
        write_plan_report(plan_dir, out, markdown)
        return
    from ..reports.html import render

    check_destination(out)
    if os.path.isdir(source):
        page = _compared(source, f"fpinspect: {os.path.basename(os.path.normpath(source))}")
    else:
        page = render(_saved(source), None, f"fpinspect: {os.path.basename(source)}")
    with report_file(out) as f:
        f.write(page)
    click.echo(f"wrote {out}")


def write_plan_report(results_dir: str, out: str, markdown: str | None) -> None:
    """Write the plan's report of ``results_dir`` to ``out`` (and ``markdown``); each task
    without a result is named on stderr."""
    from pathlib import Path

    from ..reports.plan import PlanError, collect, render_html, render_markdown

    check_destination(out)
    check_destination(markdown)
    try:
        plan = collect(results_dir)
    except PlanError as exc:
        raise UsageProblem(str(exc)) from None
    for problem in plan.problems:
        click.echo(f"fpinspect report: {problem}", err=True)
    with report_file(out) as f:
        f.write(render_html(plan))
    click.echo(f"wrote {out}")
    if markdown is not None:
        with report_file(markdown) as f:
            f.write(render_markdown(plan, Path(markdown).absolute().parent))
        click.echo(f"wrote {markdown}")


def _saved(path: str) -> dict:
    report = read_report(path)
    if not isinstance(report.get("records"), list):
        raise UsageProblem(f"report {path} has no records: give a `fpinspect compare --format json` report.")
    if not all(
        isinstance(r, dict) and {"fused_op", "kind", "fused_index"} <= set(r) for r in report["records"]
    ):
        raise UsageProblem(f"report {path} has records without fused_op, kind and fused_index.")
    return report


def _compared(folder: str, title: str) -> str:
    from ..dumps.compare import DumpComparison
    from ..dumps.errors import InputError
    from ..dumps.runfolder import run_folder
    from ..reports.html import compared_page

    try:
        return compared_page(DumpComparison(*run_folder(folder)), title)
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
