"""Recompute a computation in float64 on the CPU: the golden reference of task S.

Torch is imported only when the graph or the inputs are torch objects, so importing
:mod:`fpinspect.numerics` never loads it.
"""

from __future__ import annotations

import copy
import sys

import numpy as np

from .dtypes import is_supported


def _tree_map(fn, obj):
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(_tree_map(fn, o) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_tree_map(fn, o) for o in obj)
    if isinstance(obj, dict):
        return {k: _tree_map(fn, v) for k, v in obj.items()}
    return fn(obj)


def _tree_any(pred, obj) -> bool:
    if isinstance(obj, (list, tuple)):
        return any(_tree_any(pred, o) for o in obj)
    if isinstance(obj, dict):
        return any(_tree_any(pred, v) for v in obj.values())
    return pred(obj)


def _is_torch_object(obj) -> bool:
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    return isinstance(obj, (torch.Tensor, torch.nn.Module))


def _numpy_to64(x):
    if isinstance(x, (np.ndarray, np.generic)) and is_supported(x.dtype):
        return np.asarray(x, dtype=np.float64)
    return x


def _torch_reference(graph, inputs):
    import torch

    def to64(x):
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu()
            return x.double() if x.is_floating_point() else x
        if isinstance(x, np.ndarray):
            return to64(torch.from_numpy(np.asarray(_numpy_to64(x))))
        return x

    if isinstance(graph, torch.nn.Module):
        graph = copy.deepcopy(graph).cpu().double()
        if isinstance(graph, torch.fx.GraphModule):
            _retarget_float_dtypes(graph)
    args = _tree_map(to64, tuple(inputs))
    with torch.no_grad():
        out = graph(*args)
    return _tree_map(to64, out)


def _retarget_float_dtypes(gm) -> None:
    """Make explicit float casts inside an FX graph (``.to(torch.float16)``,
    ``aten._to_copy(dtype=...)``) produce float64, so no intermediate is rounded."""
    import torch

    def fix(v):
        if isinstance(v, torch.dtype) and v.is_floating_point:
            return torch.float64
        if isinstance(v, (list, tuple)):
            return type(v)(fix(i) for i in v)
        return v

    for node in gm.graph.nodes:
        node.args = fix(node.args)
        node.kwargs = {k: fix(v) for k, v in node.kwargs.items()}
    gm.recompile()


def fp64_reference(graph, inputs, *, kind: str = "auto"):
    """Evaluate ``graph`` on ``inputs`` entirely in float64 on the CPU.

    ``graph`` may be a callable on torch tensors, a ``torch.nn.Module`` (parameters and
    buffers are converted to float64 on a copy), a ``torch.fx.GraphModule`` (its explicit
    float casts are retargeted to float64 as well), or a callable on numpy arrays.
    ``inputs`` is a sequence of positional arguments (a single array is accepted too).
    Floating inputs are cast to float64 — exact for every supported format — and integer
    inputs (indices) are passed unchanged.

    ``kind`` chooses the world: ``"torch"``, ``"numpy"``, or ``"auto"`` (torch when the
    graph or any input is a torch object). Returns float64 results of the matching kind,
    with the structure (tuple, list, dict) the graph returned.

    fp64 is not exact: the reference carries a relative error of about ``cond * 2**-53``,
    negligible for float16 / bfloat16 / float32 outputs unless the problem is very
    ill-conditioned.
    """
    if not isinstance(inputs, (list, tuple)):
        inputs = (inputs,)
    if kind not in ("auto", "torch", "numpy"):
        raise ValueError(f"kind must be 'auto', 'torch' or 'numpy', not {kind!r}")
    use_torch = kind == "torch" or (
        kind == "auto" and (_is_torch_object(graph) or _tree_any(_is_torch_object, inputs))
    )
    if use_torch:
        return _torch_reference(graph, inputs)
    out = graph(*_tree_map(_numpy_to64, tuple(inputs)))
    return _tree_map(_numpy_to64, out)
