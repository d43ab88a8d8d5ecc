"""``fpinspect switches CAPTURE_DIR --for inductor``: the regions to leave unfused, the code that
does it, and the capture run again without them."""

from __future__ import annotations

import click

from .usage import UsageProblem, require_torch


def inductor_switches_of(run_dir: str, fmt: str, introduced: list[str] | None = None) -> dict:
    """Inductor's switches for the capture in ``run_dir``: printed (with ``fmt`` text) and
    returned as JSON. ``introduced`` are the comparison's introduced fused ops, when known."""
    require_torch("fpinspect switches --for inductor runs the capture again and")
    from ..capture.errors import CaptureError
    from ..capture.spec import CaptureSpec
    from ..capture.switches import capture_switches
    from ..dumps.errors import InputError
    from ..dumps.runfolder import run_folder
    from .capture import _Progress
    from .switches import compared_run

    try:
        CaptureSpec.read(run_dir)
        if introduced is None:
            introduced = compared_run(run_folder(run_dir)).summary()["introduced"]
    except (CaptureError, InputError) as exc:
        raise UsageProblem(f"{str(exc).rstrip('.')}.") from None
    try:
        with _Progress() as progress:
            result, stale = capture_switches(run_dir, introduced, progress)
    except CaptureError as exc:
        raise UsageProblem(f"{exc}.") from None
    doc = {"introduced": introduced, "stale": stale, **result.to_json()}
    if fmt == "text":
        _echo(result, stale)
    return doc


def _echo(result, stale: list[str]) -> None:
    if stale:
        click.echo(
            f"note: confirm.json names {', '.join(stale)}, which this capture has no region of (stale)"
        )
    b = result.baseline
    click.echo(
        f"As captured: final outputs {b.vs_eager:.3g} eps from eager ({b.verdict}), {b.vs_fp64:.3g} from float64."
    )
    if not result.regions:
        click.echo(
            "No fused op introduced an error and confirm.json confirms none: nothing to leave unfused."
        )
        return
    for r in result.regions:
        ops = ", ".join(f"{op} ({path or 'the model'})" for op, path in r.ops)
        click.echo(f"\n{r.name} (region {r.index}: {ops}): {'; '.join(r.reasons)}")
        if r.submodule is not None:
            click.echo(
                f"  torch.compiler.disable on {r.submodule.path} ({r.submodule.type}), before torch.compile:"
            )
            for line in r.code.splitlines():
                click.echo(f"      {line}")
            click.echo(f"  side effects: {r.side_effects}")
        for note in r.notes:
            click.echo(f"  note: {note}")
    click.echo(f"\nThe capture's own exclusion:\n  {result.capture_command}")
    c = result.check
    verdict = (
        "verified: within eager's thresholds"
        if result.verified
        else "NOT verified: still beyond eager's thresholds"
    )
    click.echo(
        f"Check, the capture run again with {', '.join(r.name for r in result.regions)} unfused: final "
        f"outputs {c.vs_eager:.3g} eps from eager ({c.verdict}), {c.vs_fp64:.3g} from float64 -> {verdict}"
    )
