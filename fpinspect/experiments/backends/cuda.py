"""CUDA: eager ATen/cuBLAS kernels versus Inductor's Triton kernels.

Cold starts also move Triton's kernel cache (``TRITON_CACHE_DIR``), which otherwise
follows the Inductor cache only when unset (torch_fusion.md §1.3).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from .base import BackendUnavailable, CodegenVariant
from .inductor import InductorBackend


def check_gpu() -> None:
    """Raise :class:`BackendUnavailable` (one sentence) unless torch sees a usable GPU."""
    import torch

    if not torch.cuda.is_available():
        why = "it was built without CUDA" if torch.version.cuda is None else "it finds no usable GPU"
        raise BackendUnavailable(f"device 'cuda' is not available: torch {torch.__version__} reports {why}")


class CudaBackend(InductorBackend):
    name = "cuda"
    device = "cuda"

    def __init__(self):
        check_gpu()
        if importlib.util.find_spec("triton") is None:
            raise BackendUnavailable(
                "device 'cuda' needs Triton for Inductor's fused kernels, and it is not installed"
            )

    def codegen_variants(self) -> list[CodegenVariant]:
        """The default, no split reductions, no persistent reductions (torch_fusion.md §6:
        the Triton reduction-order levers)."""
        return [
            CodegenVariant("default"),
            CodegenVariant("split_reductions off", {"split_reductions": False}),
            CodegenVariant("persistent_reductions off", {"triton.persistent_reductions": False}),
        ]

    def deterministic_mode(self) -> dict[str, Any]:
        """``torch.use_deterministic_algorithms(True)``, Inductor's ``deterministic`` (no
        numerics-changing autotuning) and the cuBLAS workspace setting deterministic
        cuBLAS needs (read when cuBLAS starts, so call this before the first matmul)."""
        import torch
        import torch._inductor.config as config

        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        out: dict[str, Any] = {
            "use_deterministic_algorithms": True,
            "CUBLAS_WORKSPACE_CONFIG": os.environ["CUBLAS_WORKSPACE_CONFIG"],
        }
        if hasattr(config, "deterministic"):
            config.deterministic = True
            out["inductor.deterministic"] = True
        return out

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def describe(self) -> dict[str, Any]:
        import torch
        import triton

        major, minor = torch.cuda.get_device_capability()
        return {
            "device_name": torch.cuda.get_device_name(),
            "capability": f"{major}.{minor}",
            "cuda": torch.version.cuda,
            "triton": triton.__version__,
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
            **self._common_facts(),
        }

    def cold_start_env(self, root: Path) -> dict[str, str]:
        (root / "triton").mkdir(parents=True, exist_ok=True)
        return {**super().cold_start_env(root), "TRITON_CACHE_DIR": str(root / "triton")}
