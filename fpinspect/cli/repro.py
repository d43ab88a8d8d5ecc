"""``fpinspect repro``: a bundle that reproduces one fused op's numbers with numpy alone."""

from __future__ import annotations

import click

from .usage import UsageProblem


@click.command("repro")
@click.argument("run_dir", metavar="RUN_DIR")
@click.argument("op", metavar="OP")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="the bundle's folder")
def repro_command(run_dir: str, op: str, out: str) -> None:
    """Write a repro bundle of fused op OP of the run folder RUN_DIR.

    The bundle holds the op's inputs and outputs on both sides (bundle.npz), the fusion-off
    subgraph it replaced (subgraph.json) and repro.py, which needs only numpy: it recomputes
    the eager and float64 replays and prints the fused, eager and float64 errors beside the
    report's.
    """
    from ..dumps.compare import DumpComparison
    from ..dumps.errors import InputError
    from ..dumps.runfolder import run_folder
    from ..replay.repro import ReproError, write_bundle

    try:
        comparison = DumpComparison(*run_folder(run_dir))
        manifest = write_bundle(comparison, op, out)
    except (InputError, ReproError) as exc:
        raise UsageProblem(str(exc)) from None
    click.echo(
        f"wrote {out}: {len(manifest['ops'])} original ops, {len(manifest['outputs'])} outputs; "
        f"run: python {out}/repro.py"
    )
