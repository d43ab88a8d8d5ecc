"""``fpinspect capture``: the click command. Imports torch only when it runs, so the CLI
(and ``compare``, ``diff``, ``open``) keeps working where torch is not installed."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from ..capture.choices import DEVICES, DTYPE_NAMES, INJECT_KINDS, LAYOUT_MODES, SEED_MAX
from ..capture.errors import CaptureError
from .output import check_new_folder
from .usage import UsageProblem, require_torch


class _Progress:
    """Shows each stage of a capture as a rich progress bar on stderr."""

    def __init__(self) -> None:
        from rich.console import Console

        from .render import stage_bars

        self.bars = stage_bars(Console(stderr=True))
        self.stage: str | None = None
        self.total = 0
        self.task = None

    def __enter__(self) -> _Progress:
        self.bars.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bars.stop()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            if self.task is not None:  # the previous stage is over
                self.bars.update(self.task, completed=self.total)
            self.stage, self.total = stage, total
            self.task = self.bars.add_task(stage, total=total)
        self.bars.update(self.task, completed=done)


_INJECT_HELP = (
    "SIMULATED regression in one region (for demos and tests): REGION is a region name or number, KIND one of "
    + "; ".join(f"{k}: {v}" for k, v in INJECT_KINDS.items())
)


@click.command("capture")
@click.argument("model")
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(file_okay=False),
    help="folder for the dump pair (refused when it already holds a capture, unless --force)",
)
@click.option(
    "--force",
    is_flag=True,
    help="replace the capture already in --out (its four dump folders, capture.json and confirm.json)",
)
@click.option(
    "--device", type=click.Choice(DEVICES), default="cpu", show_default=True, help="where both runs execute"
)
@click.option(
    "--dtype",
    type=click.Choice(DTYPE_NAMES),
    default="float16",
    show_default=True,
    help="the model's dtype: eager rounds to it after every op, fused regions at their ends",
)
@click.option(
    "--storage-layouts",
    type=click.Choice(LAYOUT_MODES),
    default="plain",
    show_default=True,
    help="ascend: store 4-D activations as NC1HWC0 and matmul outputs as FRACTAL_NZ",
)
@click.option(
    "--raw",
    is_flag=True,
    help="write raw dump files as the device does (a header, then every "
    "tensor's bytes) instead of msaccucmp's .npy files",
)
@click.option("--inject", metavar="REGION=KIND", multiple=True, help=_INJECT_HELP + " (repeatable)")
@click.option(
    "--unfuse",
    metavar="REGION",
    multiple=True,
    help="leave this region (a name or number) unfused in the fusion-on run: its original ops run one "
    "by one, as fpinspect switches suggests (repeatable)",
)
@click.option(
    "--seed",
    type=click.IntRange(0, SEED_MAX),
    default=0,
    show_default=True,
    help="seed of the demo weights and inputs",
)
def capture_command(
    model: str,
    out: str,
    force: bool,
    device: str,
    dtype: str,
    storage_layouts: str,
    raw: bool,
    inject: tuple[str, ...],
    unfuse: tuple[str, ...],
    seed: int,
) -> None:
    """Capture a fusion-on / fusion-off dump pair from a PyTorch model.

    MODEL is a built-in demo (transformer, conv, encoder, rotary, mlp, cancellation) or
    package.module:factory, a function returning (module, example_inputs). The fusion-off
    run executes every operator on its own; the fusion-on run compiles each fusion region
    with torch.compile. The pair is written in GE's formats (Build.json graphs with the
    attributes GE gives each op; msaccucmp-style .npy dumps or, with --raw, raw device
    dumps) for fpinspect compare and fpinspect open.
    """
    require_torch("fpinspect capture")
    from ..capture.inject import Injection
    from ..capture.spec import FILE as CAPTURE_FILE
    from ..capture.spec import CaptureSpec
    from ..dumps.runs.runfolder import CONFIRM_FILE

    own = [f"{kind}_af_{side}" for kind in ("dumpgraph", "datadump") for side in ("open", "close")]
    check_new_folder(out, force, {*own, CAPTURE_FILE, CONFIRM_FILE})
    try:
        injections = [Injection.parse(i) for i in inject]
        spec = CaptureSpec(model, seed, dtype, device, [str(i) for i in injections], list(unfuse))
        with _Progress() as progress:
            cap = captured(spec, progress)
            pair = cap.write(
                Path(out),
                storage_layouts=storage_layouts,
                injections=injections,
                unfuse=unfuse,
                raw=raw,
                progress=progress,
            )
        spec.write(out)
        Path(out, CONFIRM_FILE).unlink(missing_ok=True)  # the ablation of the capture replaced
    except OSError as exc:
        raise UsageProblem(f"cannot write the capture to {out} ({exc.strerror or exc}).") from None
    except CaptureError as exc:
        raise UsageProblem(f"{exc}.") from None
    _report(cap, pair, spec, injections)


def captured(spec, progress=None):
    """:func:`fpinspect.capture.pipeline.capture_of` (torch is imported when it is called)."""
    from ..capture.pipeline import capture_of

    return capture_of(spec, progress)


def _report(cap, pair, spec, injections) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console(highlight=False)
    regions = len(cap.regions)
    con.print(
        f"Captured {escape(spec.model)} ({spec.dtype}, {spec.device}): {len(cap.graph.ops)} ops, "
        f"{regions} fusion region{'' if regions == 1 else 's'}."
    )
    table = Table(box=None)
    for title in ("region", "type"):
        table.add_column(title, no_wrap=True)
    # long fused-op names (autofuse_0_Reshape_TransposeD_...) fold rather than squeeze the originals
    table.add_column("fused op", overflow="fold", ratio=1)
    table.add_column("original ops", overflow="fold", ratio=1)
    for r in cap.regions:
        members = ", ".join(op.name for op in r.region.members)
        table.add_row(str(r.region.index), r.type, escape(r.name), escape(members))
    con.print(table)
    unfused = cap.unfused(spec.unfuse)
    for index in sorted(unfused):
        con.print(
            f"Region {index} ({escape(cap.regions[index].name)}) left unfused (--unfuse): its ops run one by one."
        )
    for injection in injections:
        target = cap.target(injection)
        if target.region.index in unfused:
            con.print(
                f"--inject {escape(str(injection))} does nothing: region {target.region.index} is left "
                "unfused, and the simulated fault lives in its fused kernel."
            )
            continue
        what = INJECT_KINDS[injection.kind]
        if injection.kind == "scale":
            what = f"outputs multiplied by {injection.factor:g} (a wrong constant)"
        con.print(
            f"[bold red]SIMULATED regression[/] in region {target.region.index} ({escape(target.name)}): "
            f"{what}. The graphs do not record it."
        )
        if injection in cap.inert:
            con.print(
                f"[bold]Warning[/]: --inject {escape(str(injection))} changed no value region "
                f"{target.region.index} writes (a scale of zeros stays zero): there is nothing to find."
            )
    con.print("Compare the two runs with:")
    con.print("  fpinspect compare " + shlex.join(pair.compare_args()), soft_wrap=True, markup=False)
