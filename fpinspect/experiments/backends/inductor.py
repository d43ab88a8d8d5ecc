"""What the CPU and CUDA backends share: ``torch.compile`` with Inductor.

The fused kernels' source comes from ``torch._inductor.utils.run_and_get_code``: every
``name = async_compile.<kind>(...)`` call in the generated wrapper module is one kernel
(``cpp_pybinding`` with a C++ body on CPU, ``triton`` with a Triton body on CUDA).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .base import Backend, CodegenVariant, Compiled, KernelSource, normalise_source

_KERNEL_DEF = re.compile(
    r"^(?P<name>\w+) = async_compile\.\w+\((?P<head>.*?)'''(?P<body>.*?)'''", re.MULTILINE | re.DOTALL
)

#: Inductor settings that change numerics, kernel choice or caching (torch_fusion.md §1).
CONFIG_KEYS = (
    "deterministic",
    "max_autotune",
    "coordinate_descent_tuning",
    "emulate_precision_casts",
    "fx_graph_cache",
    "force_disable_caches",
    "split_reductions",
    "online_softmax",
    "compile_threads",
    "cpp.simdlen",
    "cpp.threads",
    "cpp.dynamic_threads",
    "cpp.enable_floating_point_contract_flag",
    "cpp.enable_unsafe_math_opt_flag",
    "triton.persistent_reductions",
    "triton.cooperative_reductions",
    "triton.multi_kernel",
    "triton.codegen_upcast_to_fp32",
)


_EXTERN_CALL = re.compile(r"\bextern_kernels\.(\w+)\(")


def parse_externs(wrapper_code: str) -> list[str]:
    """Names of the library kernels (``extern_kernels.mm``, ``.addmm``, ``.bmm``, …) one
    Inductor wrapper module calls, in first-call order."""
    return list(dict.fromkeys(_EXTERN_CALL.findall(wrapper_code)))


def parse_kernels(wrapper_code: str, paths: Mapping[str, str]) -> list[KernelSource]:
    """The kernels defined in one Inductor wrapper module, normalised, in order.

    A kernel's text is its ``async_compile`` call from the argument list (C++ argument
    types, Triton kernel name) to the end of the source string.
    """
    return [
        KernelSource(m["name"], normalise_source(m["head"] + m["body"], paths))
        for m in _KERNEL_DEF.finditer(wrapper_code)
    ]


def inductor_settings() -> dict[str, Any]:
    """The current values of :data:`CONFIG_KEYS` (keys this torch version lacks are left out)."""
    import torch._inductor.config as config

    out: dict[str, Any] = {}
    for key in CONFIG_KEYS:
        obj: Any = config
        for part in key.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            out[key] = obj if isinstance(obj, (bool, int, float, str)) else repr(obj)
    return out


class InductorBackend(Backend):
    def fused(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import torch

        return torch.compile(fn, backend="inductor", fullgraph=True, dynamic=False)

    def compile(self, fn: Callable[..., Any], *args: Any) -> Compiled:
        from torch._inductor.utils import run_and_get_code

        compiled = self.fused(fn)
        start = time.perf_counter()
        output, codes = run_and_get_code(compiled, *args)
        self.synchronize()
        seconds = time.perf_counter() - start
        paths = self.paths_to_normalise()
        kernels = tuple(k for code in codes for k in parse_kernels(code, paths))
        externs = tuple(dict.fromkeys(e for code in codes for e in parse_externs(code)))
        return Compiled(compiled, output, kernels, seconds, externs)

    @contextmanager
    def variant(self, v: CodegenVariant) -> Iterator[None]:
        """``v``'s Inductor options (with the FX graph cache off, whose key may not cover
        the thread count) and thread count, restored afterwards."""
        import torch
        import torch._inductor.config as config

        saved = torch.get_num_threads()
        options = {**v.options, "fx_graph_cache": False} if (v.options or v.threads) else {}
        try:
            if v.threads is not None:
                torch.set_num_threads(v.threads)
            with config.patch(options):
                yield
        finally:
            torch.set_num_threads(saved)

    def cache_dir(self) -> Path:
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        return Path(cache_dir())

    def compile_counters(self) -> dict[str, int]:
        from torch._dynamo.utils import counters

        c = counters["inductor"]
        return {
            "fx_graph_cache_hits": int(c["fxgraph_cache_hit"]),
            "fx_graph_cache_misses": int(c["fxgraph_cache_miss"]),
            "fx_graph_cache_bypasses": int(c["fxgraph_cache_bypass"]),
        }

    def cold_start_env(self, root: Path) -> dict[str, str]:
        (root / "inductor").mkdir(parents=True, exist_ok=True)
        return {"TORCHINDUCTOR_CACHE_DIR": str(root / "inductor")}

    def _common_facts(self) -> dict[str, Any]:
        import torch

        return {
            "compiler": "inductor",
            "inductor": inductor_settings(),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "cache_dir": str(self.cache_dir()),
        }
