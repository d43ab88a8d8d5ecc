"""``fpinspect open``: the click command. Textual is imported only when the app runs."""

from __future__ import annotations

import click

from .fusion_options import compare_unfused_option, fused_types_option, type_list
from .launch import runs_dir_option


@click.command("open")
@click.argument("graph", required=False, metavar="[GRAPH]")
@click.argument("data", required=False, metavar="[DATA]")
@click.option(
    "--close-graph",
    metavar="G",
    help="dump graph (atc JSON or ge_proto_*.txt) of the run with auto-fusion off",
)
@click.option("--close-data", metavar="D", help="datadump .npy folder of the run with auto-fusion off")
@fused_types_option
@compare_unfused_option
@runs_dir_option
@click.pass_context
def open_command(
    ctx: click.Context,
    graph: str | None,
    data: str | None,
    close_graph: str | None,
    close_data: str | None,
    fused_types: tuple[str, ...],
    compare_unfused: bool,
    runs_dir,
) -> None:
    """Inspect a fusion-on / fusion-off dump pair in the terminal.

    GRAPH is the dump graph (atc JSON or ge_proto_*.txt) of the run with auto-fusion on (or a run folder holding
    dumpgraph_af_open/), DATA its datadump folder. The fusion-off side is found by name
    (..._af_open -> ..._af_close) unless --close-graph / --close-data give it. Without
    arguments the bundled sample dumps open; without a fusion-off side the graph opens for
    browsing. Keys: ? for help, t for the test plan's tasks, q to quit.
    """
    from ..tui.sources import SourceError, resolve

    try:
        sources = resolve(graph, data, close_graph, close_data)
    except SourceError as exc:
        click.echo(f"fpinspect: {exc}", err=True)
        ctx.exit(2)
    from ..tui.app import Settings, make_app

    app = make_app(
        Settings(
            sources, runs_dir=runs_dir, fused_types=type_list(fused_types), compare_unfused=compare_unfused
        )
    )
    problem = app.run()
    if app.return_code:
        if problem:
            click.echo(f"fpinspect: {problem}", err=True)
        ctx.exit(app.return_code)
