"""The inspector's commands: ``fpinspect open`` (a dump pair), ``fpinspect launch`` (straight on
its Tasks pane) and ``fpinspect open-result`` (one result). The ``fpinspect`` group lists them by
module name, so the CLI package never imports the inspector. Textual is imported only when the
app runs."""

from __future__ import annotations

from pathlib import Path

import click

from ..experiments.backends.probe import CHOICES
from ..experiments.runs import DEFAULT_RUNS_DIR, RUNS_DIR_ENV
from ..experiments.settings import PROFILES
from ..reports.options import compare_options

runs_dir_option = click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=RUNS_DIR_ENV,
    default=DEFAULT_RUNS_DIR,
    show_default=True,
    help=f"results directory: one folder per run (also ${RUNS_DIR_ENV})",
)


def _run_app(ctx: click.Context, **settings) -> None:
    from .app import AppSettings, make_app

    app = make_app(AppSettings(None, **settings))
    problem = app.run()
    if app.return_code:
        if problem:
            click.echo(f"fpinspect: {problem}", err=True)
        ctx.exit(app.return_code)


@click.command("launch")
@click.argument("task", required=False)
@click.option(
    "--device",
    type=click.Choice(CHOICES),
    default="cpu",
    show_default=True,
    help="the device the runs go to (the pane lists which are available)",
)
@click.option(
    "--profile",
    type=click.Choice(PROFILES),
    default="quick",
    show_default=True,
    help="full = the test plan's settings; quick = scaled for a 2-core CPU",
)
@runs_dir_option
@click.pass_context
def launch_command(ctx: click.Context, task: str | None, device: str, profile: str, runs_dir: Path) -> None:
    """Run the test plan's tasks from the terminal app, watching them live.

    Opens the Tasks pane with TASK highlighted (see `fpinspect tasks`): enter runs it,
    x cancels, h lists recorded runs (t tags one as a baseline), o opens any result.json, q quits
    (stopping every run).
    Runs go at niceness +10, so the app stays responsive ($FPINSPECT_RUN_NICE: 0-19, 0 = off).
    """
    from ..experiments.registry import TASK_IDS, UnknownTask, canonical_id

    try:
        task_id = canonical_id(task) if task else None
    except UnknownTask:
        click.echo(f"fpinspect launch: unknown task {task!r}; choose one of {', '.join(TASK_IDS)}.", err=True)
        ctx.exit(2)
    _run_app(ctx, start="tasks", task=task_id, device=device, profile=profile, runs_dir=runs_dir)


@click.command("open-result")
@click.argument("path", type=click.Path(path_type=Path))
@runs_dir_option
@click.pass_context
def open_result_command(ctx: click.Context, path: Path, runs_dir: Path) -> None:
    """Show a result.json (or a run folder) in the terminal app's result view.

    Any result written by `fpinspect run --out`, the Tasks pane, or another machine.
    escape goes to the Tasks pane, q quits.
    """
    from ..experiments.runs import ResultError, load_result

    try:
        load_result(path)
    except ResultError as exc:
        click.echo(f"fpinspect open-result: {exc}", err=True)
        ctx.exit(2)
    _run_app(ctx, start="result", result=path, runs_dir=runs_dir)


@click.command("open")
@click.argument("graph", required=False, metavar="[GRAPH]")
@click.argument("data", required=False, metavar="[DATA]")
@click.option(
    "--close-graph",
    metavar="G",
    help="dump graph (atc JSON or ge_proto_*.txt, or a folder of them) of the run with auto-fusion off",
)
@click.option("--close-data", metavar="D", help="datadump .npy folder of the run with auto-fusion off")
@compare_options()
@runs_dir_option
@click.pass_context
def open_command(
    ctx: click.Context,
    graph: str | None,
    data: str | None,
    close_graph: str | None,
    close_data: str | None,
    settings,
    runs_dir,
) -> None:
    """Inspect a fusion-on / fusion-off dump pair in the terminal.

    GRAPH is the dump graph (atc JSON or ge_proto_*.txt) of the run with auto-fusion on (or a run folder holding
    dumpgraph_af_open/), DATA its datadump folder. A folder of several graphs (GE's dump of
    every compiled graph, per process) is read with DATA: each leaf's dumps choose their graph. The fusion-off side is found by name
    (..._af_open -> ..._af_close) unless --close-graph / --close-data give it. Without
    arguments the bundled sample dumps open; without a fusion-off side the graph opens for
    browsing. Data folders that are dump trees of several ranks, graphs or steps open on an
    overview of the run: a grid of ranks × graphs at one step, each cell a leaf pair's worst
    verdict and introduced ops, compared in turn (s/S: other steps; l: the list of leaf pairs
    and of those left out); enter opens a leaf, escape comes back. Keys: ? for help, t for the
    test plan's tasks, q to quit.
    """
    from ..dumps.runs.sources import SourceError, resolve

    try:
        sources = resolve(graph, data, close_graph, close_data)
    except SourceError as exc:
        click.echo(f"fpinspect: {exc}", err=True)
        ctx.exit(2)
    from .app import AppSettings, make_app

    app = make_app(AppSettings(sources, runs_dir=runs_dir, compare=settings))
    problem = app.run()
    if app.return_code:
        if problem:
            click.echo(f"fpinspect: {problem}", err=True)
        ctx.exit(app.return_code)
