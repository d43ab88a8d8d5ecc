"""A device without its fusing compiler, for tasks that only move tensors to it (task S).

Opening it imports torch (and torch_npu for npu) but none of the compiler stacks, so a
task that runs no fused kernel starts in about the time torch takes to import.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from .base import BackendUnavailable
from .cpu import _cpu_model
from .cuda import check_gpu


class DeviceOnly:
    """``name`` and ``device`` as a :class:`~.base.Backend` has them, ``synchronize`` and
    ``describe``; no ``eager``/``fused``/``compile``."""

    def __init__(self, name: str):
        self.name = name
        self.device = name
        if name == "cuda":
            check_gpu()
        if name == "npu":
            if importlib.util.find_spec("torch_npu") is None:
                raise BackendUnavailable("device 'npu' is not available: torch_npu is not installed")
            if not importlib.import_module("torch_npu").npu.is_available():
                raise BackendUnavailable("device 'npu' is not available: torch_npu finds no NPU")
        if name not in ("cpu", "cuda", "npu"):
            raise BackendUnavailable(f"unknown device {name!r}")

    def synchronize(self) -> None:
        import torch

        if self.name == "cuda":
            torch.cuda.synchronize()
        elif self.name == "npu":
            torch.npu.synchronize()

    def describe(self) -> dict[str, Any]:
        import torch

        if self.name == "cuda":
            return {"device_name": torch.cuda.get_device_name(), "cuda": torch.version.cuda}
        if self.name == "npu":
            return {"device_name": torch.npu.get_device_name()}
        return {"device_name": _cpu_model(), "threads": torch.get_num_threads()}


def open_device(name: str) -> DeviceOnly:
    """The device ``name`` (``auto``: npu, then cuda, then cpu) without its compiler."""
    if name != "auto":
        return DeviceOnly(name)
    reasons = []
    for candidate in ("npu", "cuda", "cpu"):
        try:
            return DeviceOnly(candidate)
        except BackendUnavailable as exc:
            reasons.append(str(exc))
    raise BackendUnavailable("no device is available: " + "; ".join(reasons))
