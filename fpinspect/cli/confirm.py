"""``fpinspect confirm``: prove a culprit at the model's outputs by leaving fused regions unfused."""

from __future__ import annotations

import click

from ..reports.options import compare_options
from .output import echo, indented_json
from .usage import UsageProblem, model_option, require_torch


@click.command("confirm")
@click.argument("run_dir", metavar="CAPTURE_DIR")
@click.option(
    "--regions",
    default="introduced",
    show_default=True,
    help="introduced (the fused ops compare names), failing (those that fail or warn), all, or a list of "
    "region names or numbers (2,autofuse_5_Add)",
)
@click.option(
    "--bisect", is_flag=True, help="also find a smallest set of regions whose unfusing fixes the outputs"
)
@model_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@compare_options(replay=True)
def confirm_command(run_dir: str, regions: str, bisect: bool, model: str | None, fmt: str, settings) -> None:
    """Run a captured model again with fused regions left unfused, and measure its final outputs.

    CAPTURE_DIR is a folder written by `fpinspect capture` (its capture.json says how to run the
    model again; a model factory it names runs only when given with --model). Each chosen region
    is run as the only fused one (every other op eager, so the other regions' rounding cannot
    hide or mimic it): it is confirmed when that makes the final outputs fail against eager
    (judged in the narrowest format they pass through) and moves them further from float64 than
    eager is; fusion helps when it moves them closer. Unfusing it alone (as a switch would) is
    measured too. The verdicts are checked against the comparison's localisation, and every
    region where the two disagree is named. --bisect finds a smallest set of regions whose
    unfusing brings the outputs within thresholds (culprits that only fail together). Regions
    the capture itself left unfused (capture --unfuse) are not measured again.

    The result is also written to CAPTURE_DIR/confirm.json (replacing an earlier one), where
    `fpinspect switches --for inductor` and the inspector read it.
    """
    require_torch("fpinspect confirm")
    from ..capture.confirm import cross_check

    log = None if fmt == "json" else (lambda line: echo(line, err=True))
    result, report, chosen = ablate(run_dir, regions, settings, bisect=bisect, log=log, model=model)
    disagreements = cross_check(report.localisation, result)
    _keep(run_dir, result.to_json())
    if fmt == "json":
        echo(indented_json({**result.to_json(), "disagreements": [d.to_json() for d in disagreements]}))
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
            f"  {r.name}: fused alone {r.only.vs_eager:.3g} eps from eager ({r.only.verdict}), "
            f"{r.only.vs_fp64:.3g} from float64; unfused alone {r.alone.vs_eager:.3g} eps ({r.alone.verdict})"
            f"{removed} -> {r.verdict}"
        )
    if result.truth_note():
        echo(f"Note: {result.truth_note()}.")
    if disagreements:
        echo("Where the comparison and the ablation disagree:")
        for d in disagreements:
            echo(f"  {d.sentence()}")
    elif result.regions:
        echo("The comparison and the ablation agree on every region run.")
    if bisect:
        found = (
            "no set of these regions"
            if result.minimal_set is None
            else ", ".join(result.minimal_set) or "none"
        )
        echo(f"smallest set whose unfusing fixes the outputs: {found}")
    echo(f"{result.runs} model runs, {result.seconds:.1f} s")


def ablate(
    run_dir: str,
    regions: str,
    settings,
    *,
    bisect: bool = False,
    log=None,
    report=None,
    model: str | None = None,
):
    """``(confirmation, report, chosen)``: the capture in ``run_dir`` run again with the regions
    ``regions`` names (``--regions``) unfused, and the comparison ``report`` of its dumps (computed
    with ``settings`` unless given) that ``introduced`` and the cross-check read; the outputs are
    judged by the settings' thresholds. ``model``: the model
    the user named (``--model``); a factory only capture.json names is refused, never run."""
    from ..capture.confirm import Ablation, confirm
    from ..capture.errors import CaptureError
    from ..capture.inject import Injection
    from ..capture.spec import CaptureSpec
    from ..dumps.errors import InputError
    from ..inspection.pipeline import Inspection
    from ..inspection.runs import RunError, leaf_inputs
    from .capture import _Progress, captured

    try:
        spec = CaptureSpec.read(run_dir).to_run(model, run_dir)
        injections = [Injection.parse(i) for i in spec.inject]
        if report is None:
            try:
                inputs = leaf_inputs(run_dir)
                report = Inspection.load(inputs.graphs, inputs.data, settings).report()
            except (InputError, RunError) as exc:
                raise CaptureError(str(exc)) from None
        with _Progress() as progress:
            cap = captured(spec, progress)
        unfused = cap.unfused(spec.unfuse)
        chosen = _chosen(regions, report, cap)
        left = [cap.regions[i].name for i in chosen if i in unfused]
        if left and regions not in ("all", "introduced", "failing"):  # named by the user: say why
            echo(
                f"fpinspect: note: the capture already leaves {', '.join(left)} unfused: not measured.",
                err=True,
            )
        chosen = [i for i in chosen if i not in unfused]
        ablation = Ablation(cap, injections, settings.thresholds, unfused=unfused)
        return confirm(ablation, chosen, bisect=bisect, log=log), report, chosen
    except CaptureError as exc:
        raise UsageProblem(f"{exc}.") from None


def _chosen(text: str, report, cap) -> list[int]:
    """The region numbers ``--regions`` names: ``introduced`` (by ``report``), ``failing`` (its
    failing and warned ops), ``all``, or a list."""
    from ..capture.errors import CaptureError

    by_name = {r.name: r.region.index for r in cap.regions}
    if text == "all":
        return [r.region.index for r in cap.regions]
    if text in ("introduced", "failing"):
        loc = report.localisation
        names = (
            [o.name for o in loc.introduced]
            if text == "introduced"
            else [o.name for o in loc.ops if o.verdict in ("fail", "warn")]
        )
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
    """The result beside the capture (``confirm.json``), where the inspector shows it on each op
    (:func:`~fpinspect.dumps.runs.runfolder.keep_confirmation`, as the inspector's ``v`` keeps it), with
    the mode ``open`` would give it; a folder that cannot take it is said, not fatal."""
    import os

    from ..dumps.runs.runfolder import CONFIRM_FILE, keep_confirmation
    from .output import _umask

    try:
        path = keep_confirmation(run_dir, result)
        os.chmod(path, 0o666 & ~_umask())  # its temporary file was made private
    except OSError as exc:
        where = os.path.join(run_dir, CONFIRM_FILE)
        echo(
            f"fpinspect: warning: the result is not kept: cannot write {where} ({exc.strerror or exc}).",
            err=True,
        )
        return
    echo(f"fpinspect: wrote {path} (read by switches --for inductor and the inspector)", err=True)
