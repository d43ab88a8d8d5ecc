"""Device backends and the ``--device`` choice.

``auto`` takes the first available of npu, cuda, cpu. Opening a backend imports torch
(and torch_npu for npu), so it happens in the experiment's child process.
"""

from __future__ import annotations

from pathlib import Path

from .base import Backend, BackendUnavailable

DEVICES = ("auto", "cpu", "cuda", "npu")
AUTO_ORDER = ("npu", "cuda", "cpu")


def _open(name: str, workdir: Path | None) -> Backend:
    if name == "cpu":
        from .cpu import CpuBackend

        return CpuBackend()
    if name == "cuda":
        from .cuda import CudaBackend

        return CudaBackend()
    if name == "npu":
        from .npu import NpuBackend

        return NpuBackend(workdir)
    raise BackendUnavailable(f"unknown device {name!r}; choose one of {', '.join(DEVICES)}")


def open_backend(name: str, workdir: Path | None = None) -> Backend:
    """The backend for ``name`` (one of :data:`DEVICES`); raises :class:`BackendUnavailable`
    with a one-sentence reason. ``workdir`` is where the NPU's kernel dumps appear."""
    if name != "auto":
        return _open(name, workdir)
    reasons = []
    for candidate in AUTO_ORDER:
        try:
            return _open(candidate, workdir)
        except BackendUnavailable as exc:
            reasons.append(str(exc))
    raise BackendUnavailable("no device is available: " + "; ".join(reasons))


__all__ = ["AUTO_ORDER", "DEVICES", "Backend", "BackendUnavailable", "open_backend"]
