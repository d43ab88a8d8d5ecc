"""``fpinspect switches CAPTURE_DIR --for inductor``: the regions to leave unfused, the code that
does it, and the capture run again without them."""

from __future__ import annotations

import os

from .output import echo
from .usage import UsageProblem, require_torch


def untrusted_model(run_dir: str, model: str | None) -> str | None:
    """Why the capture in ``run_dir`` cannot run again with ``model`` (``--model``, or ``None``)
    without running code only its capture.json names; ``None`` when it can (or the spec is
    unreadable, which the run itself reports)."""
    from ..capture.errors import CaptureError
    from ..capture.spec import CaptureSpec

    try:
        spec = CaptureSpec.read(run_dir)
    except CaptureError:
        return None
    try:
        spec.to_run(model, run_dir)
    except CaptureError as exc:
        return str(exc)
    return None


def inductor_switches_of(
    run_dir: str, fmt: str, settings, introduced: list[str] | None = None, model: str | None = None
) -> dict:
    """Inductor's switches for the capture in ``run_dir``: printed (with ``fmt`` text) and
    returned as JSON. ``introduced`` are the comparison's introduced fused ops, when known (else
    the capture is compared with ``settings``);
    ``model`` the model the user named (``--model``)."""
    require_torch("fpinspect switches --for inductor runs the capture again and")
    from ..capture.errors import CaptureError
    from ..capture.spec import CaptureSpec
    from ..capture.switches import capture_switches
    from ..dumps.errors import InputError
    from ..dumps.runs.runfolder import CONFIRM_FILE, last_confirmation
    from .capture import _Progress
    from .switches import compared_run
    from .tree import one_leaf

    try:
        CaptureSpec.read(run_dir).to_run(model, run_dir)  # refused before anything is run
        if introduced is None:
            introduced = compared_run(one_leaf(run_dir, None, None, None), settings).summary().introduced
    except (CaptureError, InputError) as exc:
        raise UsageProblem(f"{str(exc).rstrip('.')}.") from None
    if not last_confirmation(run_dir) and os.path.exists(os.path.join(run_dir, CONFIRM_FILE)):
        echo(f"fpinspect: note: {CONFIRM_FILE} is not a readable confirm result: ignored.", err=True)
    try:
        with _Progress() as progress:
            result, stale = capture_switches(run_dir, introduced, progress, model)
    except CaptureError as exc:
        raise UsageProblem(f"{exc}.") from None
    doc = {"introduced": introduced, "stale": stale, **result.to_json()}
    if fmt == "text":
        _echo(result, stale)
    return doc


def _echo(result, stale: list[str]) -> None:
    if stale:
        echo(f"note: confirm.json names {', '.join(stale)}, which this capture has no region of (stale)")
    b = result.baseline
    echo(
        f"As captured: final outputs {b.vs_eager:.3g} eps from eager ({b.verdict}), {b.vs_fp64:.3g} from float64."
    )
    if not result.regions:
        echo("No fused op introduced an error and confirm.json confirms none: nothing to leave unfused.")
        return
    for r in result.regions:
        ops = ", ".join(f"{op} ({path or 'the model'})" for op, path in r.ops)
        echo(f"\n{r.name} (region {r.index}: {ops}): {'; '.join(r.reasons)}")
        if r.submodule is not None:
            echo(
                f"  torch.compiler.disable on {r.submodule.path} ({r.submodule.type}), before torch.compile:"
            )
            for line in r.code.splitlines():
                echo(f"      {line}")
            echo(f"  side effects: {r.side_effects}")
        for note in r.notes:
            echo(f"  note: {note}")
    echo(f"\nThe capture's own exclusion:\n  {result.capture_command}")
    c = result.check
    verdict = (
        "verified: within eager's thresholds"
        if result.verified
        else "NOT verified: still beyond eager's thresholds"
    )
    echo(
        f"Check, the capture run again with {', '.join(r.name for r in result.regions)} unfused: final "
        f"outputs {c.vs_eager:.3g} eps from eager ({c.verdict}), {c.vs_fp64:.3g} from float64 -> {verdict}"
    )
