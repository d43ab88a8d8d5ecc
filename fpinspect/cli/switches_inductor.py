"""``fpinspect switches CAPTURE_DIR --for inductor``: the regions to leave unfused, the code that
does it, and the capture run again without them."""

from __future__ import annotations

import importlib.util

import click

from .output import indented_json
from .usage import UsageProblem


def inductor_command(run_dir: str, fmt: str) -> None:
    if importlib.util.find_spec("torch") is None:
        raise UsageProblem(
            "fpinspect switches --for inductor runs the capture again and needs PyTorch; "
            "install it with pip install 'fpinspect[experiments]'."
        )
    from ..capture.confirm import Ablation
    from ..capture.errors import CaptureError
    from ..capture.inject import Injection
    from ..capture.spec import CaptureSpec
    from ..capture.switches import chosen_regions, inductor_switches
    from ..dumps.errors import InputError
    from ..dumps.runfolder import last_confirmation, run_folder
    from .capture import _Progress, captured
    from .switches import compared_run

    try:
        spec = CaptureSpec.read(run_dir)
        folder = run_folder(run_dir)
    except (CaptureError, InputError) as exc:
        raise UsageProblem(f"{str(exc).rstrip('.')}.") from None
    introduced = compared_run(folder).summary()["introduced"]
    confirmation = last_confirmation(run_dir)
    try:
        injections = [Injection.parse(i) for i in spec.inject]
        with _Progress() as progress:
            cap = captured(spec, progress)
        ablation = Ablation(cap, injections, unfused=cap.unfused(spec.unfuse))
        chosen, stale = chosen_regions(
            {r.name: r.region.index for r in cap.regions}, introduced, confirmation
        )
        helps = {
            r.get("name")
            for r in confirmation.get("regions") or []
            if isinstance(r, dict) and r.get("verdict") == "fusion helps"
        }
        result = inductor_switches(ablation, chosen, spec, run_dir, helps)
    except CaptureError as exc:
        raise UsageProblem(f"{exc}.") from None
    if fmt == "json":
        click.echo(indented_json({"introduced": introduced, "stale": stale, **result.to_json()}))
        return
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
    names = ", ".join(r.name for r in result.regions)
    click.echo(
        f"Check, the capture run again with {names} unfused: final outputs {c.vs_eager:.3g} eps from "
        f"eager ({c.verdict}), {c.vs_fp64:.3g} from float64 -> "
        + (
            "verified: within eager's thresholds"
            if result.verified
            else "NOT verified: still beyond eager's thresholds"
        )
    )
