"""``fpinspect confirm``: prove a culprit at the model's outputs by leaving fused regions unfused."""

from __future__ import annotations

import click

from .capture import model_option
from .output import echo, indented_json
from .usage import UsageProblem, require_torch


@click.command("confirm")
@click.argument("run_dir", metavar="CAPTURE_DIR")
@click.option(
    "--regions",
    default="introduced",
    show_default=True,
    help="introduced (the fused ops compare names), all, or a list of region names or numbers (2,autofuse_5_Add)",
)
@click.option(
    "--bisect", is_flag=True, help="also find a smallest set of regions whose unfusing fixes the outputs"
)
@model_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def confirm_command(run_dir: str, regions: str, bisect: bool, model: str | None, fmt: str) -> None:
    """Run a captured model again with fused regions left unfused, and measure its final outputs.

    CAPTURE_DIR is a folder written by `fpinspect capture` (its capture.json says how to run the
    model again; a model factory it names runs only when given with --model). Each chosen region
    is unfused alone, its original ops running one by one as in the fusion-off run, every other
    region fused: a region is confirmed when that brings the final outputs back within
    thresholds of eager (or removes most of their deviation), and fusion helps when it moves
    them away from float64. --bisect finds a smallest set of regions
    whose unfusing brings the outputs within thresholds (for culprits that only fail together).
    Regions the capture itself left unfused (capture --unfuse) are not measured again.

    The result is also written to CAPTURE_DIR/confirm.json (replacing an earlier one), where
    `fpinspect switches --for inductor` and the inspector read it.
    """
    require_torch("fpinspect confirm")
    from ..capture.confirm import Ablation, confirm
    from ..capture.errors import CaptureError
    from ..capture.inject import Injection
    from ..capture.spec import CaptureSpec
    from .capture import _Progress, captured

    try:
        spec = CaptureSpec.read(run_dir).to_run(model, run_dir)
        injections = [Injection.parse(i) for i in spec.inject]
        with _Progress() as progress:
            cap = captured(spec, progress)
        unfused = cap.unfused(spec.unfuse)
        chosen = _chosen(regions, run_dir, cap)
        left = [cap.regions[i].name for i in chosen if i in unfused]
        if left and regions not in ("all", "introduced"):  # named by the user: say why not measured
            echo(
                f"fpinspect: note: the capture already leaves {', '.join(left)} unfused: not measured.",
                err=True,
            )
        chosen = [i for i in chosen if i not in unfused]
        ablation = Ablation(cap, injections, unfused=unfused)
        log = None if fmt == "json" else (lambda line: echo(line, err=True))
        result = confirm(ablation, chosen, bisect=bisect, log=log)
    except CaptureError as exc:
        raise UsageProblem(f"{exc}.") from None
    _keep(run_dir, result.to_json())
    if fmt == "json":
        echo(indented_json(result.to_json()))
        return
    b = result.baseline
    echo(
        f"all regions fused: {b.vs_eager:.3g} eps from eager ({b.verdict}), {b.vs_fp64:.3g} eps from float64"
    )
    if not chosen:
        echo("No region chosen: the comparison names no introduced fused op (try --regions all).")
    elif b.verdict == "pass":
        echo("The final outputs already pass eager's thresholds: no region needs confirming.")
    for r in result.regions:
        # a deviation within thresholds is no error that unfusing could remove
        removed = (
            ""
            if r.removed is None or b.verdict == "pass"
            else f", removes {max(r.removed, 0):.0%} of the deviation"
        )
        echo(
            f"  {r.name}: unfused alone {r.alone.vs_eager:.3g} eps from eager ({r.alone.verdict}), "
            f"{r.alone.vs_fp64:.3g} from float64{removed} -> {r.verdict}"
        )
    if bisect:
        found = (
            "no set of these regions"
            if result.minimal_set is None
            else ", ".join(result.minimal_set) or "none"
        )
        echo(f"smallest set whose unfusing fixes the outputs: {found}")
    echo(f"{result.runs} model runs, {result.seconds:.1f} s")


def _chosen(text: str, run_dir: str, cap) -> list[int]:
    """The region numbers ``--regions`` names."""
    from ..capture.errors import CaptureError

    by_name = {r.name: r.region.index for r in cap.regions}
    if text == "all":
        return [r.region.index for r in cap.regions]
    if text == "introduced":
        from ..dumps.compare import DumpComparison
        from ..dumps.errors import InputError
        from ..dumps.runfolder import run_folder
        from ..replay.run import run_with_replay

        try:
            names = run_with_replay(DumpComparison(*run_folder(run_dir))).summary()["introduced"]
        except InputError as exc:
            raise CaptureError(str(exc)) from None
        return [by_name[n] for n in names if n in by_name]
    out = []
    numbers = {str(i) for i in by_name.values()}
    for item in (t.strip() for t in text.split(",") if t.strip()):
        if item in by_name:
            out.append(by_name[item])
        elif item in numbers:
            out.append(int(item))
        else:
            listed = ", ".join(f"{i} {n}" for n, i in list(by_name.items())[:6])
            raise CaptureError(f"--regions {item!r} is no region of this capture (regions: {listed}, ...)")
    return out


def _keep(run_dir: str, result: dict) -> None:
    """The result beside the capture (``confirm.json``), where the inspector shows it on each op;
    written whole or not at all, and a folder that cannot take it is said, not fatal."""
    import os

    from ..dumps.runfolder import CONFIRM_FILE
    from .output import report_file

    path = os.path.join(run_dir, CONFIRM_FILE)
    try:
        with report_file(path) as f:
            f.write(indented_json(result) + "\n")
    except UsageProblem as exc:
        echo(f"fpinspect: warning: the result is not kept: {exc}", err=True)
        return
    echo(f"fpinspect: wrote {path} (read by switches --for inductor and the inspector)", err=True)
