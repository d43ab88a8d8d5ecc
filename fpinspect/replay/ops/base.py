"""What one op semantic receives and returns, and the registry of op types.

An op semantic is a function ``fn(call: OpCall) -> list[np.ndarray]`` that computes the
outputs of one GE op from its input values, in the arithmetic of ``call.compute``
(float32 or float64; the evaluator casts floating inputs to it and rounds the outputs
afterwards). Registering it under its GE type names (:func:`semantics`) is all it takes
to add an op type. Attributes use GE's names and defaults
(``shared/reference/ge_op_semantics.md``); float attributes are float32, as GE stores them.

Where a shape parameter (axes, perm, begin ...) is neither an attribute nor a known
input value, the semantic infers it from the input and output shapes, or raises
:class:`Unsupported` saying why it cannot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Unsupported(Exception):
    """The op cannot be replayed; the message says why (one sentence, no trailing period)."""


@dataclass
class OpCall:
    """One op to evaluate.

    ``inputs[k]`` is the value of data input ``k`` (``None`` when unconnected or when its
    value is not known, as for a shape constant of a structure-only graph). Floating values
    are already in ``compute``; integer and boolean values are as dumped.
    ``input_shapes[k]`` / ``output_shapes[i]`` are the logical (origin) shapes of the graph,
    ``input_layouts[k]`` the origin format of input ``k`` (``"NCHW"``, ``"ND"`` or ``None``).
    """

    name: str
    type: str
    attrs: dict[str, Any]
    inputs: list[np.ndarray | None]
    input_shapes: list[tuple[int, ...] | None]
    output_shapes: list[tuple[int, ...]]
    compute: np.dtype = field(default_factory=lambda: np.dtype(np.float64))
    input_layouts: list[str | None] = field(default_factory=list)

    def x(self, k: int = 0) -> np.ndarray:
        """Input ``k``, which the op needs."""
        v = self.inputs[k] if k < len(self.inputs) else None
        if v is None:
            raise Unsupported(f"{self.type} {self.name}: input {k} has no value")
        return v

    def has(self, k: int) -> bool:
        return k < len(self.inputs) and self.inputs[k] is not None

    def out_shape(self, i: int = 0) -> tuple[int, ...]:
        if i >= len(self.output_shapes):
            raise Unsupported(f"{self.type} {self.name}: the graph gives no shape for output {i}")
        return self.output_shapes[i]

    def in_shape(self, k: int = 0) -> tuple[int, ...]:
        if self.has(k):
            return tuple(self.inputs[k].shape)
        s = self.input_shapes[k] if k < len(self.input_shapes) else None
        if s is None:
            raise Unsupported(f"{self.type} {self.name}: the graph gives no shape for input {k}")
        return s

    def const(self, value: float) -> np.generic:
        """A float scalar in the compute type, after GE's float32 storage of float attrs."""
        return self.compute.type(np.float32(value))

    def float_attr(self, name: str, default: float | None = None) -> np.generic:
        """Float attribute ``name`` (float32, then the compute type); required if no default."""
        value = self.attrs.get(name, default)
        if value is None:
            raise Unsupported(f"{self.type} {self.name}: attribute {name!r} is not in the graph")
        return self.const(float(value))

    def int_attr(self, name: str, default: int | None = None) -> int | None:
        value = self.attrs.get(name, default)
        return None if value is None else int(value)

    def ints(self, name: str, k: int | None = None) -> list[int] | None:
        """A list-of-int parameter: input ``k``'s value if known, else attribute ``name``.

        GE takes shape parameters as const inputs (``Transpose``'s perm) or as attributes
        (``TransposeD``); structure-only dump graphs hold neither value, so ``None`` then.
        """
        if k is not None and self.has(k):
            return [int(v) for v in np.asarray(self.inputs[k]).reshape(-1)]
        value = self.attrs.get(name)
        if value is None:
            return None
        if isinstance(value, (list, tuple)):
            return [int(v) for v in value]
        return [int(value)]


Semantic = Callable[[OpCall], list[np.ndarray]]

#: GE op type -> its semantic. Filled by the modules of this package via :func:`semantics`.
OPS: dict[str, Semantic] = {}

#: Op types whose every output element depends only on the same element of its inputs
#: (after broadcasting): a subgraph of these can be evaluated in row blocks.
ELEMENTWISE: set[str] = set()

#: Op types that reduce along some axes (norms, softmax, reductions), with a test of one call
#: (given shapes and attributes only) that says whether it leaves axis 0 alone: then each row
#: of the output depends only on the same row of the inputs, and row blocks work too.
ROWS_INDEPENDENT: dict[str, Callable[[OpCall], bool]] = {}


def semantics(
    *types: str, elementwise: bool = False, rows_independent: Callable[[OpCall], bool] | None = None
) -> Callable[[Semantic], Semantic]:
    """Register ``fn`` as the semantic of each GE op type in ``types``."""

    def register(fn: Semantic) -> Semantic:
        for t in types:
            if t in OPS:
                raise ValueError(f"op type {t} registered twice")
            OPS[t] = fn
            if elementwise:
                ELEMENTWISE.add(t)
            if rows_independent is not None:
                ROWS_INDEPENDENT[t] = rows_independent
        return fn

    return register


def norm_axes(axes: list[int], rank: int, what: str) -> tuple[int, ...]:
    """Axes in ``[-rank, rank)`` as sorted non-negative axes."""
    out = []
    for a in axes:
        if not -rank <= a < max(rank, 1):
            raise Unsupported(f"{what}: axis {a} is out of range for rank {rank}")
        out.append(a % rank if rank else 0)
    return tuple(sorted(set(out)))


def reduced_axes(
    in_shape: tuple[int, ...], out_shape: tuple[int, ...], what: str
) -> tuple[tuple[int, ...], bool]:
    """The axes a reduction ``in_shape -> out_shape`` removed, and whether dims were kept.

    Kept dims (equal rank): the axes where the output is 1 and the input is not. Dropped
    dims: the ways of deleting ``rank_in - rank_out`` dims that leave ``out_shape``; they
    must agree on which dims of size > 1 are reduced (reducing a size-1 dim changes
    nothing), else :class:`Unsupported` says the axes are ambiguous.
    """
    from itertools import combinations

    rin, rout = len(in_shape), len(out_shape)
    if rin == rout:
        if any(o not in (1, i) for i, o in zip(in_shape, out_shape)):
            raise Unsupported(f"{what}: output shape {out_shape} is not a reduction of {in_shape}")
        return tuple(a for a, (i, o) in enumerate(zip(in_shape, out_shape)) if o == 1 and i != 1), True
    if rout > rin:
        raise Unsupported(f"{what}: output shape {out_shape} has more dims than input {in_shape}")
    found: set[tuple[int, ...]] = set()
    for drop in combinations(range(rin), rin - rout):
        kept = tuple(d for a, d in enumerate(in_shape) if a not in drop)
        if kept == tuple(out_shape):
            found.add(tuple(a for a in drop if in_shape[a] != 1))
    if not found:
        raise Unsupported(f"{what}: output shape {out_shape} is not a reduction of {in_shape}")
    if len(found) > 1:
        raise Unsupported(
            f"{what}: the graph has no axes and {in_shape} -> {out_shape} could reduce any of {sorted(found)}"
        )
    return found.pop(), False
