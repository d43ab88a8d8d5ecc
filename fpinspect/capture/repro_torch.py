"""The PyTorch half of a capture's repro bundle: the fused op's region as torch code, and
``repro_torch.py`` (:mod:`.repro_torch_script`), which runs it eagerly and under ``torch.compile``
on the bundle's saved inputs.

The region's code is what :func:`~.fused.region_module` compiled for the capture: the region's
original ops as ``torch.export`` traced them (``torch.ops.aten.*`` calls with their arguments),
emitted by ``torch.fx`` as a ``forward`` function. The model is traced again (on the CPU; the code
does not depend on the device) to get it; nothing is compiled here.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..replay.repro import ReproError
from .errors import CaptureError
from .fused import region_module
from .inject import Injection
from .models import load_model
from .partition import Region, partition
from .pipeline import traced
from .spec import CaptureSpec

_SCRIPT = Path(__file__).resolve().parent / "repro_torch_script.py"


def _key(ref) -> str:
    return f"{ref.op}:{ref.index}"


def torch_region(spec: CaptureSpec, manifest: dict) -> dict:
    """The ``"torch"`` entry of the bundle's ``subgraph.json``: the region's code, which saved
    array feeds each of its inputs, which output each of its results is, the device and the
    simulated faults the capture planted in it. Raises :class:`CaptureError` when the model
    cannot be traced again or no region of it holds the bundle's ops."""
    module, inputs = load_model(spec.model, spec.seed)
    graph = traced(module, inputs, dtype=spec.dtype, device="cpu")
    members = [op["name"] for op in manifest["ops"]]
    region = next(
        (
            u
            for u in partition(graph)
            if isinstance(u, Region) and sorted(op.name for op in u.members) == sorted(members)
        ),
        None,
    )
    if region is None:
        raise CaptureError(
            f"the model traced again has no region of {', '.join(members)}: the capture is stale, capture it again"
        )
    saved = {f"{b['producer']}:{b['index']}" for b in manifest["boundary"]}
    feeds = [_key(ref) if ref in graph.value_nodes else None for ref in region.inputs]
    missing = [k for k in feeds if k is not None and k not in saved]
    if missing:
        raise CaptureError(f"the bundle holds no saved input {missing[0]} of the region")
    simulated = [i for i in spec.inject if Injection.parse(i).matches(region.index, manifest["op"])]
    return {
        "code": region_module(graph, region).code.strip() + "\n",
        "inputs": feeds,
        "outputs": [_key(ref) for ref in region.outputs],
        "device": spec.device,
        "dtype": spec.dtype,
        "simulated": simulated,
    }


def write_torch_script(
    run_dir: str | os.PathLike, manifest: dict, out: str | os.PathLike, model: str | None = None
) -> None:
    """Add the region's torch code to the bundle in ``out`` (``manifest`` is its ``subgraph.json``,
    from :func:`~fpinspect.replay.repro.write_bundle`) and write ``repro_torch.py`` beside it.
    ``model`` is the model the user named (``--model``): a factory only ``capture.json`` names is
    not run (:meth:`CaptureSpec.to_run`). Raises :class:`CaptureError` or
    :class:`~fpinspect.replay.repro.ReproError` (one sentence)."""
    manifest["torch"] = torch_region(CaptureSpec.read(run_dir).to_run(model, run_dir), manifest)
    folder = Path(out)
    try:
        (folder / "subgraph.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        shutil.copyfile(_SCRIPT, folder / "repro_torch.py")
    except OSError as exc:
        raise ReproError(f"cannot write the bundle to {folder} ({exc.strerror or exc})") from None
