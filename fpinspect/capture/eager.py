"""The fusion-off run: every operator its own eager kernel, every result rounded to the
model's dtype before the next operator reads it (what GE runs with autofuse off)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .errors import CaptureError, first_line
from .trace import Op, TracedGraph, ValueRef

#: ``progress(stage, done, total)``
Progress = Callable[[str, int, int], None]

#: What an eager kernel raises for inputs it cannot handle (a dtype, a device, a shape).
KERNEL_ERRORS = (RuntimeError, NotImplementedError, ValueError, TypeError, IndexError)


def call_kernel(graph: TracedGraph, op: Op, env: dict[ValueRef, torch.Tensor]) -> None:
    """Run one operator on ``env`` and store its outputs there."""
    try:
        outputs = graph.call(op, env)
    except KERNEL_ERRORS as exc:
        raise CaptureError(f"operator {op.node.target} ({op.name}) failed: {first_line(exc)}") from None
    env.update(zip(op.refs(), outputs))


def source_values(graph: TracedGraph) -> dict[ValueRef, torch.Tensor]:
    """Model inputs, weights and constants, keyed by the tensor they are."""
    return {ValueRef(name, 0): value for name, value in graph.sources.items()}


def run_eager(graph: TracedGraph, progress: Progress | None = None) -> dict[ValueRef, torch.Tensor]:
    """Every tensor of the graph as eager PyTorch computes it, op by op."""
    env = source_values(graph)
    kernels = [op for op in graph.ops if not op.is_source]
    with torch.no_grad():
        for done, op in enumerate(kernels, 1):
            call_kernel(graph, op, env)
            if progress:
                progress("fusion off: eager ops", done, len(kernels))
    return env
