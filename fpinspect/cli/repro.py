"""``fpinspect repro``: a bundle that reproduces one fused op's numbers with numpy alone (and, for a
capture, with torch)."""

from __future__ import annotations

import os

import click

from ..capture.spec import FILE as CAPTURE_FILE
from ..reports.options import compare_options
from .output import check_new_folder
from .tree import leaf_options, one_leaf
from .usage import INSTALL_TORCH, UsageProblem, model_option, torch_missing


@click.command("repro")
@click.argument("run_dir", metavar="RUN_DIR|CAPTURE_DIR")
@click.argument("op", metavar="OP")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="the bundle's folder")
@click.option("--force", is_flag=True, help="write the bundle into an --out folder that already holds files")
@model_option
@compare_options()
@leaf_options
def repro_command(
    run_dir: str,
    op: str,
    out: str,
    force: bool,
    model: str | None,
    settings,
    ranks: str | None,
    graphs_chosen: str | None,
    steps: str | None,
) -> None:
    """Write a repro bundle of fused op OP of the run folder RUN_DIR.

    The bundle holds the op's inputs and outputs on both sides (bundle.npz), the fusion-off
    subgraph it replaced (subgraph.json) and repro.py, which needs only numpy: it recomputes
    the eager and float64 replays and prints the fused, eager and float64 errors beside the
    report's. For a capture (a folder written by `fpinspect capture`) also repro_torch.py, which
    needs torch and numpy: it runs the op's region eagerly and under torch.compile on the saved
    inputs and prints the same figures (it traces the model again: a model factory that
    capture.json names runs only when given with --model). An --out folder that already holds
    files is refused unless --force. Where the data folders are dump trees of several ranks,
    graphs or steps, --ranks, --graphs and --steps choose the leaf.
    """
    from ..dumps.errors import InputError
    from ..inspection.pipeline import Inspection
    from ..replay.repro import ReproError, write_bundle

    check_new_folder(out, force)
    inputs = one_leaf(run_dir, ranks, graphs_chosen, steps)
    try:
        manifest = write_bundle(Inspection.load(inputs.graphs, inputs.data, settings).comparison, op, out)
    except (InputError, ReproError) as exc:
        raise UsageProblem(str(exc)) from None
    scripts = [f"python {out}/repro.py"]
    if os.path.isfile(os.path.join(run_dir, CAPTURE_FILE)):
        if _torch_script(run_dir, manifest, out, model):
            scripts.append(f"python {out}/repro_torch.py")
    click.echo(
        f"wrote {out}: {len(manifest['ops'])} original ops, {len(manifest['outputs'])} outputs; "
        f"run: {' or '.join(scripts)}"
    )


def _torch_script(run_dir: str, manifest: dict, out: str, model: str | None) -> bool:
    """Write the capture's repro_torch.py into the bundle; where it cannot be, say why and go on:
    the numpy bundle stands on its own."""
    if torch_missing():
        why = f"it needs PyTorch ({INSTALL_TORCH})"
    else:
        from ..capture.errors import CaptureError
        from ..capture.repro_torch import write_torch_script
        from ..replay.repro import ReproError

        try:
            write_torch_script(run_dir, manifest, out, model)
            return True
        except (CaptureError, ReproError) as exc:
            why = str(exc)
    click.echo(f"fpinspect: warning: no repro_torch.py: {why}", err=True)
    return False
