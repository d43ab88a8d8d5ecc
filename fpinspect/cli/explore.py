"""``fpinspect explore``: a compared run in Google's Model Explorer, both graphs side by side."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading

import click

from ..reports.options import compare_options
from .output import indented_json
from .usage import UsageProblem


@click.command("explore")
@click.argument("run", metavar="RUN")
@click.option("--no-browser", is_flag=True, help="do not open the page in a browser (its address is printed)")
@click.option("--select", metavar="OP", help="the op selected when the page opens (fused or original)")
@compare_options(replay=True)
def explore_command(run: str, no_browser: bool, select: str | None, settings) -> None:
    """Show a run's fusion-on and fusion-off graphs side by side in Google's Model Explorer,
    with the comparison's verdicts on the nodes.

    RUN is a run folder (dumpgraph_af_open/, datadump_af_open/ and their af_close siblings) or
    its fusion-on graph, the other inputs found by name as `compare` finds them. Fused ops are
    coloured by their worst verdict and show their worst error in eps; each original op carries
    the colour of the fused op that replaced it and names it. The server runs on localhost, on a
    free port, until ctrl+c. Needs pip install 'fpinspect[explorer]'.
    """
    from ..explorer import missing

    problem = missing("fpinspect explore")
    if problem is not None:
        raise UsageProblem(problem)
    from ..dumps.errors import InputError
    from ..dumps.runs.leafgraphs import leaf_sources
    from ..explorer.run import StartFailed, explorer_run, start
    from ..inspection.pipeline import Inspection
    from ..inspection.runs import RunError, run_sources

    try:
        sources = run_sources(run)
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
    try:
        sources = leaf_sources(sources, warn=lambda w: click.echo(f"fpinspect: warning: {w}", err=True))
        inspection = Inspection.load(
            (sources.open_graph, sources.close_graph),
            {"open_data": sources.open_data, "close_data": sources.close_data},
            settings,
        )
        report = inspection.report()
        comparison = inspection.comparison
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
    if select is not None and not (
        comparison.open_model.has_op(select) or comparison.close_model.has_op(select)
    ):
        raise UsageProblem(f"--select {select}: no op of that name in either graph of {run}.")
    explored = explorer_run(sources.name, comparison, report, comparison.thresholds, select)
    import portpicker  # Model Explorer's own way to a free port

    folder = tempfile.mkdtemp(prefix="fpinspect-explore-")
    try:
        mapping = os.path.join(folder, "fusion-mapping.json")
        with open(mapping, "w", encoding="utf-8") as f:
            f.write(indented_json(explored.mapping) + "\n")
        try:
            url = start(explored, portpicker.pick_unused_port())
        except StartFailed as exc:
            raise UsageProblem(str(exc)) from None
        click.echo(url)
        click.echo(
            "fpinspect: the fusion mapping, for Model Explorer's Sync navigation > Upload mapping from "
            f"computer: {mapping}; ctrl+c stops the server",
            err=True,
        )
        if not no_browser:
            import webbrowser

            webbrowser.open(url)
        threading.Event().wait()  # the server's thread serves until ctrl+c
    finally:
        shutil.rmtree(folder, ignore_errors=True)
