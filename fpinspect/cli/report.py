"""``fpinspect report``: a comparison, or the whole test plan, as one self-contained HTML page."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click
import msgspec

from ..reports.options import compare_options
from .output import check_destination, read_report, report_file
from .tree import leaf_options
from .usage import UsageProblem

if TYPE_CHECKING:
    from ..dumps.engine.report_types import SavedReport, SavedRun


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
@compare_options()
@leaf_options
def report_command(
    source: str | None,
    plan_dir: str | None,
    out: str,
    markdown: str | None,
    settings,
    ranks: str | None,
    graphs_chosen: str | None,
    steps: str | None,
) -> None:
    """Write a comparison, or the whole test plan, as one HTML file that opens offline in any browser.

    RUN_DIR is a run folder (dumpgraph_af_open/, dumpgraph_af_close/, datadump_af_open/,
    datadump_af_close/), compared now; REPORT.json a saved `fpinspect compare --format json`
    report. Where the data folders are dump trees of several ranks, graphs or steps (or the
    report is of such a whole run), the page is the whole run's: its rank × graph grid (each
    leaf's worst verdict and introduced ops; why a cell was left out), the ops introduced and on
    which ranks, then each leaf as below; --ranks, --graphs and --steps choose one leaf to report
    instead. The page of one leaf: the summary and the op to look at first, a sortable and filterable table
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
    import shlex
    import sys

    from ..reports.html import render, render_run

    check_destination(out)
    command = shlex.join(["fpinspect", *sys.argv[1:]])
    leaf = {"ranks": ranks, "graphs": graphs_chosen, "steps": steps}
    whole = not any(leaf.values())  # no leaf chosen: a whole run's page where RUN is one
    if os.path.isdir(source):
        title = f"fpinspect: {os.path.basename(os.path.normpath(source))}"
        page = (whole and _compared_run(source, title, command, settings)) or _compared(
            source, title, command, settings, leaf
        )
    else:
        if settings.not_for_saved(source):
            raise UsageProblem(settings.not_for_saved(source))
        title = f"fpinspect: {os.path.basename(source)}"
        report = read_report(source)
        if whole and isinstance(report, dict) and "runs" in report:
            page = render_run(_saved_run(report, source), None, title, command=command)
        else:
            page = render(_saved(source, leaf, report), None, title, command=command)
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


def _saved(path: str, leaf: dict, report: dict) -> SavedReport:
    """The one leaf's report of the saved report ``report`` (read from ``path``), checked."""
    from ..dumps.engine.report_types import saved_report
    from ..inspection.runs import RunError, saved_leaf

    try:
        report = saved_leaf(report, path, **leaf)
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
    _check_records(report, path)
    return _decoded(saved_report, report, path)


def _saved_run(report: dict, path: str) -> SavedRun:
    """The saved whole-run report ``report`` (read from ``path``), each compared leaf checked as
    :func:`_saved` checks one leaf's."""
    from ..dumps.engine.report_types import saved_run
    from ..inspection.runs import RunError, saved_leaves

    try:
        runs = saved_leaves(report, path)
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
    for run in runs:
        if run.get("error") is None:
            _check_records({"records": run.get("records")}, path)
    if not isinstance(report.get("summary"), dict | None):
        raise UsageProblem(f"report {path} is damaged: its summary is not an object.")
    return _decoded(saved_run, report, path)


def _check_records(report: dict, path: str) -> None:
    """One sentence where ``report`` (one leaf's, from ``path``) has no records the page can read."""
    if not isinstance(report.get("records"), list):
        raise UsageProblem(f"report {path} has no records: give a `fpinspect compare --format json` report.")
    if not all(
        isinstance(r, dict) and {"fused_op", "kind", "fused_index"} <= set(r) for r in report["records"]
    ):
        raise UsageProblem(f"report {path} has records without fused_op, kind and fused_index.")


def _decoded(decode, report: dict, path: str):
    """``decode(report)``: the saved report (from ``path``) as the types of the JSON contract
    (:mod:`fpinspect.dumps.engine.report_types`); a damaged or hand-edited field is one sentence naming
    it, never a traceback."""
    try:
        return decode(report)
    except msgspec.ValidationError as exc:
        raise UsageProblem(f"report {path} is damaged: {exc}.") from None


def _compared_run(folder: str, title: str, command: str, settings) -> str | None:
    """The page of the whole run ``folder`` (its data folders dump trees of several leaves),
    compared now; None where it holds one leaf pair (today's one-leaf page says all there is)."""
    from ..dumps.errors import InputError
    from ..inspection.leaves import inspect_leaves
    from ..inspection.runs import RunError, run_inputs
    from ..reports.html import compared_run_page

    try:
        inputs = run_inputs(folder)
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
    if inputs.scope is None:
        return None
    for warning in inputs.scope.warnings:
        click.echo(f"fpinspect: warning: {warning}", err=True)
    runs = inspect_leaves(inputs.scope.compared, inputs.choosers, settings, compare_input=True)
    try:
        return compared_run_page(inputs.scope, runs, title, command)
    except InputError as exc:
        raise UsageProblem(str(exc)) from None


def _compared(folder: str, title: str, command: str, settings, leaf: dict) -> str:
    from ..dumps.errors import InputError
    from ..inspection.pipeline import Inspection
    from ..reports.html import compared_page
    from .tree import one_leaf

    inputs = one_leaf(folder, leaf["ranks"], leaf["graphs"], leaf["steps"])
    try:
        return compared_page(Inspection.load(inputs.graphs, inputs.data, settings), title, command)
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
