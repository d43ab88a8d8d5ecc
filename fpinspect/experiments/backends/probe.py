"""Which devices can run experiments here: ``python -m fpinspect.experiments.backends.probe``.

Each device's own availability check (opening its backend: torch, a C++ compiler for the
CPU's fused kernels, a GPU and Triton for cuda, torch_npu and a card for npu) runs in a
child process, so the caller never imports torch. The child prints one JSON object,
device name → None when usable, else the one-sentence reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: Devices a run can be sent to, in the order a picker lists them.
CHOICES = ("cpu", "cuda", "npu")


def check_here() -> dict[str, str | None]:
    """Open each backend in this process and report why one cannot be used."""
    from . import BackendUnavailable, open_backend

    out: dict[str, str | None] = {}
    for name in CHOICES:
        try:
            with tempfile.TemporaryDirectory(prefix="fpinspect-probe-") as tmp:
                open_backend(name, Path(tmp))
            out[name] = None
        except BackendUnavailable as exc:
            out[name] = str(exc)
        except ImportError as exc:
            out[name] = f"device {name!r} is not available: {exc}"
    return out


def probe_devices(timeout: float = 120.0) -> dict[str, str | None]:
    """:func:`check_here` in a child process; every device gets the child's failure as its
    reason when the child cannot answer."""
    import fpinspect

    root = str(Path(fpinspect.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    try:
        out = subprocess.run(
            [sys.executable, "-m", "fpinspect.experiments.backends.probe"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        found = json.loads(out.stdout.strip().splitlines()[-1])
        return {name: found.get(name, "not checked") for name in CHOICES}
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired) as exc:
        why = "the check timed out" if isinstance(exc, subprocess.TimeoutExpired) else "the check failed"
        return {name: f"device {name!r} could not be checked: {why}" for name in CHOICES}


if __name__ == "__main__":
    result = check_here()
    sys.stdout.flush()
    print(json.dumps(result))
