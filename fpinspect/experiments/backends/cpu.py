"""CPU: eager ATen kernels versus Inductor's C++/OpenMP code (torch_fusion.md §3)."""

from __future__ import annotations

import platform
import shutil
import subprocess
from typing import Any

from .base import BackendUnavailable, CodegenVariant
from .inductor import InductorBackend


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return cxx
    return out.stdout.splitlines()[0] if out.stdout else cxx


class CpuBackend(InductorBackend):
    name = "cpu"
    device = "cpu"

    def __init__(self):
        import torch._inductor.config as config

        cxx = config.cpp.cxx
        candidates = [c for c in (cxx if isinstance(cxx, (list, tuple)) else (cxx,)) if c]
        found = [shutil.which(c) for c in candidates]
        if not any(found):
            raise BackendUnavailable(
                f"Inductor's CPU backend needs a C++ compiler and none of {', '.join(candidates)} is on PATH"
            )
        self.cxx = next(f for f in found if f)

    def synchronize(self) -> None:
        """CPU kernels finish before they return."""

    def codegen_variants(self) -> list[CodegenVariant]:
        """Vector code (the default ISA) or scalar code (``cpp.simdlen = 1``), each with
        this process's thread count and with one thread (torch_fusion.md §3.3: simdlen and
        threads are the CPU's practical reduction-order levers)."""
        import torch

        n = torch.get_num_threads()
        scalar = {"cpp.simdlen": 1}
        out = [
            CodegenVariant(f"vector code on {n} threads"),
            CodegenVariant(f"scalar code on {n} threads", scalar),
        ]
        if n > 1:
            out += [
                CodegenVariant("vector code on 1 thread", threads=1),
                CodegenVariant("scalar code on 1 thread", scalar, 1),
            ]
        return out

    def describe(self) -> dict[str, Any]:
        import torch
        from torch._inductor.cpu_vec_isa import pick_vec_isa

        return {
            "device_name": _cpu_model(),
            "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "inductor_isa": str(pick_vec_isa()) or "scalar",
            "cxx": _compiler_version(self.cxx),
            **self._common_facts(),
        }
