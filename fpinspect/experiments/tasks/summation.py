"""Summation orders and their error bounds, shared by task C2's versions and verdicts.

:func:`chunked_sum` is the explicit chunked reduction C2 compiles (a balanced tree inside each
chunk, then the chunk sums first to last, float32 accumulation); :func:`chunked_sum_in_dtype` the
same order rounded to the storage dtype at every addition; :func:`error_bound` Higham's bound
``γ_k · Σ|x|`` for that order. This order's bound factor ``log2(c) + n/c - 1`` *falls* as ``c``
grows (40, 25, 18 for 512, 1024, 2048 at n = 16384); the 1.3–1.6× growth per doubling of
ulp_spec.md §5(a) is for recursive summation inside each block (factor ``c + n/c - 2``), a
different order.
"""

from __future__ import annotations

import math

from fpinspect.numerics import float_format

#: Unit roundoff of the float32 accumulator.
U32 = 2.0**-24


def _tree_then_sequential(t, chunk: int):
    """Sum the rows of ``t`` [rows, n] in ``t``'s dtype: a balanced tree inside each chunk
    of ``chunk`` elements, then the chunk sums first to last. Returns [rows]."""
    t = t.reshape(t.shape[0], -1, chunk)
    while t.shape[-1] > 1:
        half = t.shape[-1] // 2
        t = t[..., :half] + t[..., half:]
    partials = t[..., 0]
    acc = partials[:, 0]
    for i in range(1, partials.shape[1]):
        acc = acc + partials[:, i]
    return acc


def chunked_sum(x, chunk: int):
    """The explicit chunked reduction of the module docstring with float32 accumulation:
    returns the float32 accumulator [1] and its rounding to ``x.dtype`` [1]."""
    acc = _tree_then_sequential(x.float(), chunk)
    return acc, acc.to(x.dtype)


def chunked_sum_in_dtype(x, chunk: int):
    """The same order as :func:`chunked_sum`, every addition rounded to ``x.dtype`` (no
    upcast): the emulation of a kernel that accumulates in the storage dtype. Returns the
    sum [1] in ``x.dtype``."""
    return _tree_then_sequential(x, chunk)


def framework_sum(x):
    import torch

    return x.sum(dim=-1, dtype=torch.float32), x.sum(dim=-1)


def additions_per_term(n: int, chunk: int | None) -> int:
    """The most additions any element passes through: ``log2(c)`` in its chunk's tree
    plus ``n/c - 1`` sequential chunk additions; ``n - 1`` (recursive summation, the
    worst case) when the order is unknown."""
    if chunk is None:
        return n - 1
    return int(math.log2(chunk)) + n // chunk - 1


def unit_roundoff(dtype: str) -> float:
    """``u = 2**-p`` of format ``dtype`` (``p`` counts the implicit bit): 2**-11 for float16."""
    return 2.0 ** -float_format(dtype).p


def error_bound(n: int, chunk: int | None, abs_sum: float, u: float = U32) -> float:
    """Higham's bound ``γ_k · Σ|x|`` (``γ_k = k·u / (1 - k·u)``; ``u`` of the accumulator,
    float32 unless given) on the accumulator's error for ``k`` = :func:`additions_per_term`."""
    k = additions_per_term(n, chunk)
    return k * u / (1 - k * u) * abs_sum


def framework_shapes(n: int) -> list[tuple[int, ...]]:
    """Views of the ``n`` elements the framework's own sum is observed at: [1, n], [n],
    and, when ``n`` allows, [n/128, 128]."""
    shapes: list[tuple[int, ...]] = [(1, n), (n,)]
    if n % 128 == 0 and n > 128:
        shapes.append((n // 128, 128))
    return shapes


def whole_sum(x):
    """The framework's own sum of every element: float32 accumulator and ``x.dtype`` result."""
    import torch

    return x.sum(dtype=torch.float32), x.sum()
