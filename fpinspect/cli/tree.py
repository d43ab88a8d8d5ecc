"""``fpinspect compare`` over whole dump trees: every rank, graph and step, one report for the run.

The per-leaf reports are today's (table, CSV rows, JSON records); the run adds which leaves were
compared and which were left out and why (``summary.scope``), and where each introduced op was
introduced across ranks and steps.
"""

from __future__ import annotations

import contextlib
import csv
import io
import shutil
import sys
import tempfile
from collections.abc import Iterator

import click

from .output import echo, report_file, write_json_object
from .usage import UsageProblem

ranks_option = click.option(
    "--ranks", help="ranks to compare in a dump tree, e.g. 0,2 or 0-3 (default: every rank)"
)
graphs_option = click.option(
    "--graphs",
    "graphs_chosen",
    help="graphs (model_name or model_name/model_id) to compare in a dump tree (default: every graph)",
)
steps_option = click.option(
    "--steps",
    help="steps to compare in a dump tree: all, or a list such as 3,5 (default: the latest step both trees hold)",
)


def compare_tree(scope, runs: Iterator, fmt: str, output: str | None, fail_on: str | None) -> None:
    """Write the run's report: ``runs`` yields each leaf pair's
    :class:`~fpinspect.inspection.leaves.LeafRun` as it is compared."""
    from ..dumps.runs.runtree import LeafOutcome, cross_run_summary

    outcomes: list[LeafOutcome] = []
    failing = False
    for warning in scope.warnings:
        click.echo(f"fpinspect: warning: {warning}", err=True)

    def each_run() -> Iterator:
        nonlocal failing
        for run in runs:
            if run.error is not None:
                echo(f"fpinspect: warning: {run.on.label()}: {run.error}", err=True)
                outcomes.append(LeafOutcome(run.on, error=run.error))
                yield run, None
                continue
            summary = run.report.summary()
            outcomes.append(LeafOutcome(run.on, summary=summary))
            for warning in summary.warnings:
                echo(f"fpinspect: warning: {run.on.label()}: {warning}", err=True)
            if fail_on:
                levels = ("warn", "fail") if fail_on == "warn" else ("fail",)
                failing |= any(r.verdict in levels for r in run.report.records) or not run.report.compared
            yield run, summary

    with report_file(output) as target, contextlib.ExitStack() as stack:
        out = target
        if output is None and fmt != "table":
            # JSON or CSV on stdout is for a program: it comes whole or not at all, as a file does
            # (a run stopped midway, by ctrl+c or a scheduler lost, leaves no half of it)
            out = stack.enter_context(
                tempfile.SpooledTemporaryFile(32 << 20, "w+", encoding="utf-8", newline="")
            )
        if fmt == "json":
            write_json_object(
                out, _json_fields(each_run(), lambda: cross_run_summary(scope, outcomes)), batch=1
            )
        elif fmt == "csv":
            _write_csv(each_run(), out)
        else:
            _write_tables(each_run(), out, output is None, lambda: cross_run_summary(scope, outcomes))
        if out is not target:
            out.seek(0)
            shutil.copyfileobj(out, target)
    if fail_on and (failing or any(o.error for o in outcomes) or not outcomes):
        sys.exit(1)


def _json_fields(runs: Iterator, summary) -> Iterator[tuple[str, object]]:
    """The run's JSON fields: ``runs`` (one object per leaf pair, written as it is compared), then
    the ``summary`` across them, made once every run is written."""
    from ..inspection.leaves import leaf_json

    yield "runs", (leaf_json(run, leaf_summary) for run, leaf_summary in runs)
    yield "summary", summary()


def _write_csv(runs: Iterator, out) -> None:
    """Today's CSV with the leaf's rank, graph and step in front of each row."""
    from ..reports.export import compare_csv

    writer = csv.writer(out)
    header = False
    for run, _ in runs:
        if run.report is None:
            continue
        text = io.StringIO()
        compare_csv(run.report, text)
        rows = csv.reader(io.StringIO(text.getvalue()))
        head = next(rows)
        if not header:
            writer.writerow(["rank", "graph", "step", *head])
            header = True
        labels = [run.on.rank, run.on.graph, run.on.step]
        for row in rows:
            writer.writerow([*labels, *row])


def _write_tables(runs: Iterator, out, terminal: bool, summary) -> None:
    from rich.table import Table

    from ..reports.format import printable
    from .render import compare_table, console, plain_console

    con = console() if terminal else plain_console(out)
    for run, _ in runs:
        con.rule(run.on.label())
        if run.report is None:
            con.print(f"[red]not compared[/]: {run.error}")
            continue
        con.print(compare_table(run.report))
    s = summary()
    con.rule("the whole run")
    verdicts = ", ".join(f"{n} {v}" for v, n in s.verdicts.items() if n)
    con.print(f"{s.runs} leaf pairs compared ({s.unreadable} unreadable); records: {verdicts or 'none'}")
    if s.introduced:
        t = Table(title="introduced", title_justify="left")
        for col in ("fused op", "graph", "ranks", "on", "first step"):
            t.add_column(col)
        for e in s.introduced:
            on = "-" if not e.ranks else "every rank" if e.everywhere else "some ranks"
            t.add_row(
                printable(e.op),
                printable(e.graph or "-"),
                ",".join(e.ranks) or "-",
                on,
                e.first_step or "-",
            )
        con.print(t)
    for skipped in s.scope.skipped:
        con.print(f"skipped {skipped.what}: {skipped.why}")


def leaf_options(command):
    """``--ranks``, ``--graphs`` and ``--steps``: the leaf of a whole run that a command needing one
    leaf takes (:func:`~fpinspect.inspection.runs.leaf_inputs`)."""
    return ranks_option(graphs_option(steps_option(command)))


def one_leaf(run: str, ranks: str | None, graphs: str | None, steps: str | None):
    """The one leaf pair of ``run`` (:func:`~fpinspect.inspection.runs.leaf_inputs`); one sentence
    naming the leaves to choose from when its data folders hold several."""
    from ..inspection.runs import RunError, leaf_inputs

    try:
        return leaf_inputs(run, ranks=ranks, graphs=graphs, steps=steps)
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
