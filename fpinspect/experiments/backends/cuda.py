"""CUDA: eager ATen/cuBLAS kernels versus Inductor's Triton kernels.

Cold starts also move Triton's kernel cache (``TRITON_CACHE_DIR``), which otherwise
follows the Inductor cache only when unset (torch_fusion.md §1.3).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from .base import BackendUnavailable
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
