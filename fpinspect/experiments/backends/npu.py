"""Ascend NPU: eager torch_npu single operators versus GE graph mode with AutoFuse.

Written from the documented interfaces (``shared/reference/torch_fusion.md`` §4):

* AutoFuse is switched by the environment variable ``AUTOFUSE_FLAGS``, items
  ``--key=value`` separated by ``;``. ``--enable_autofuse=true`` turns on element-wise and
  broadcast fusion; reductions are fused only with ``--autofuse_enable_pass=reduce``,
  which the tasks need (A's layer norm, C2's sums). GE reads the variable when it starts,
  so it is set before ``torch_npu`` is imported.
* ``AUTOFUSE_DFX_FLAGS="--codegen_compile_debug=true;--debug_dir=DIR"`` keeps the
  generated kernels: a ``kernel_meta_*`` folder with the kernel source appears in the
  working directory (the child process runs in its own work directory).
* GE graph mode through TorchAir: ``torchair.CompilerConfig()`` with ``mode =
  "max-autotune"`` (FX → Ascend IR → GE compile), ``torchair.get_npu_backend(...)`` as the
  ``torch.compile`` backend. TorchAir ships inside torch_npu: import torch_npu first.
* Compiled operators are cached under ``$ASCEND_CACHE_PATH/kernel_cache`` (default
  ``$HOME/atc_data``); a cold start points ``ASCEND_CACHE_PATH`` at an empty directory.

Eager runs are plain torch_npu operators outside GE, so AutoFuse does not touch them.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import Backend, BackendUnavailable, Compiled, KernelSource, normalise_source

#: Files of a ``kernel_meta_*`` folder that hold generated kernel or tiling source.
KERNEL_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".hpp")


@dataclass(frozen=True)
class AutofuseConfig:
    """The AutoFuse switches the NPU backend sets for its process."""

    enable: bool = True
    #: Extended fusion passes (documented values: ``reduce``, ``concat``).
    enable_passes: tuple[str, ...] = ("reduce",)
    #: Where AscGraph dumps go; None keeps generated kernels off.
    debug_dir: Path | None = None

    def flags(self) -> str:
        """The value of ``AUTOFUSE_FLAGS``."""
        items = [f"--enable_autofuse={'true' if self.enable else 'false'}"]
        if self.enable and self.enable_passes:
            items.append(f"--autofuse_enable_pass={','.join(self.enable_passes)}")
        return ";".join(items)

    def dfx_flags(self) -> str | None:
        """The value of ``AUTOFUSE_DFX_FLAGS``, or None when nothing is to be kept."""
        if self.debug_dir is None:
            return None
        return f"--codegen_compile_debug=true;--debug_dir={self.debug_dir}"

    def env(self) -> dict[str, str]:
        out = {"AUTOFUSE_FLAGS": self.flags()}
        dfx = self.dfx_flags()
        if dfx is not None:
            out["AUTOFUSE_DFX_FLAGS"] = dfx
        return out


def kernel_meta_sources(workdir: Path, seen: set[Path], paths: dict[str, str]) -> list[KernelSource]:
    """Kernel sources in ``kernel_meta*`` folders of ``workdir`` that are not in ``seen``.

    Names are paths relative to their ``kernel_meta*`` folder, whose own name varies
    from run to run; files are taken in sorted order so the hash does not depend on the
    file system.
    """
    out = []
    for folder in sorted(p for p in workdir.glob("kernel_meta*") if p.is_dir() and p not in seen):
        for f in sorted(folder.rglob("*")):
            if f.is_file() and f.suffix in KERNEL_SUFFIXES:
                text = f.read_text(encoding="utf-8", errors="replace")
                out.append(KernelSource(f.relative_to(folder).as_posix(), normalise_source(text, paths)))
    return out


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception as exc:  # torch_npu raises ImportError/OSError/RuntimeError without CANN
        raise BackendUnavailable(f"device 'npu' is not available: importing {name} failed ({exc})") from exc


class NpuBackend(Backend):
    name = "npu"
    device = "npu"

    def __init__(self, workdir: Path | None = None):
        if importlib.util.find_spec("torch_npu") is None:
            raise BackendUnavailable("device 'npu' is not available: torch_npu is not installed")
        self.workdir = Path(workdir or os.getcwd())
        self.autofuse = AutofuseConfig(debug_dir=self.workdir / "autofuse_debug")
        os.environ.update(self.autofuse.env())  # before torch_npu starts GE
        self.torch_npu = _import("torch_npu")
        if not self.torch_npu.npu.is_available():
            raise BackendUnavailable("device 'npu' is not available: torch_npu finds no NPU")
        self.torchair = _import("torchair")
        self.compiler_config = self.torchair.CompilerConfig()
        self.compiler_config.mode = "max-autotune"
        self.npu_backend = self.torchair.get_npu_backend(compiler_config=self.compiler_config)

    def fused(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import torch

        return torch.compile(fn, backend=self.npu_backend, fullgraph=True, dynamic=False)

    def compile(self, fn: Callable[..., Any], *args: Any) -> Compiled:
        seen = set(self.workdir.glob("kernel_meta*"))
        compiled = self.fused(fn)
        start = time.perf_counter()
        output = compiled(*args)
        self.synchronize()
        seconds = time.perf_counter() - start
        kernels = kernel_meta_sources(self.workdir, seen, self.paths_to_normalise())
        return Compiled(compiled, output, tuple(kernels), seconds)

    def synchronize(self) -> None:
        self.torch_npu.npu.synchronize()

    def describe(self) -> dict[str, Any]:
        return {
            "device_name": self.torch_npu.npu.get_device_name(),
            "torch_npu": getattr(self.torch_npu, "__version__", "unknown"),
            "compiler": "torchair GE graph mode",
            "torchair_mode": self.compiler_config.mode,
            "AUTOFUSE_FLAGS": os.environ.get("AUTOFUSE_FLAGS"),
            "AUTOFUSE_DFX_FLAGS": os.environ.get("AUTOFUSE_DFX_FLAGS"),
            "cache_dir": str(self.cache_dir()),
        }

    def cache_dir(self) -> Path:
        root = os.environ.get("ASCEND_CACHE_PATH")
        return Path(root) / "kernel_cache" if root else Path.home() / "atc_data"

    def compile_counters(self) -> dict[str, int]:
        """GE exposes no compile-cache counters; cold starts are shown by the cache folder."""
        return {}

    def cold_start_env(self, root: Path) -> dict[str, str]:
        (root / "ascend").mkdir(parents=True, exist_ok=True)
        return {"ASCEND_CACHE_PATH": str(root / "ascend")}

    def paths_to_normalise(self) -> dict[str, str]:
        return {**super().paths_to_normalise(), str(self.workdir): "<workdir>"}
