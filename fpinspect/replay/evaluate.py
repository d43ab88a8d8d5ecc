"""Evaluate a subgraph of original ops in one of two arithmetics.

* :data:`EAGER` — what an op-by-op framework does: each op computes in float32 (float64
  when any of its float tensors is float32 or wider) and rounds every output to the dtype
  the graph declares.
* :data:`FP64` — the truth for the same inputs: float64 throughout, nothing rounded
  (float-to-float casts are the identity; casts to integers still truncate).

Memory: a subgraph made only of elementwise ops, and of norms, softmax and reductions that
leave axis 0 alone, is evaluated in blocks of rows, so no intermediate is larger than a block
(a row's reduction sees its whole axis); others are evaluated whole. Only the requested outputs are kept, and a float64 result of a tensor declared
in a format of at most 11 bits of precision (float16, bfloat16, float8) is kept as float32:
that last rounding (2**-24 relative) is 2**-13 of the tensor's own ULP, invisible in errors
measured in its eps or ULPs, and halves the memory of the truth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..dumps.formats.ge_types import numpy_dtype_name
from ..numerics import dtype_of, float_format, is_supported
from .ops import ELEMENTWISE, OPS, ROWS_INDEPENDENT, OpCall, Unsupported
from .subgraph import Subgraph, logical_shape

EAGER, FP64 = "eager", "fp64"
MODES = (EAGER, FP64)

#: Elements per block when a subgraph is evaluated in blocks of rows.
BLOCK = 1 << 20

Key = tuple[str, int]  #: (op name, output index)


def _dtype(ge_dtype: str | None) -> np.dtype | None:
    name = numpy_dtype_name(ge_dtype)
    if name is None:
        return None
    try:
        return dtype_of(name) if not is_supported(name) else float_format(name).dtype
    except TypeError:
        return None


def _is_float(dt: np.dtype | None) -> bool:
    return dt is not None and (dt.kind == "f" or is_supported(dt))


def compute_dtype(mode: str, dtypes: list[np.dtype | None]) -> np.dtype:
    """The arithmetic of one op: float64 in fp64 mode or when a float tensor is float32 or
    wider, else float32 (half-precision ops compute in float32, as eager frameworks do)."""
    if mode == FP64:
        return np.dtype(np.float64)
    wide = any(_is_float(d) and float_format(d).p >= 24 for d in dtypes)
    return np.dtype(np.float64 if wide else np.float32)


def round_to(value: np.ndarray, dtype: np.dtype | None, mode: str) -> np.ndarray:
    """An op output in its declared dtype (eager), or kept exact (fp64: floats stay float64).

    Float to integer truncates toward zero with NaN as 0, as GE's Cast does; booleans are
    ``value != 0``.
    """
    value = np.asarray(value)
    if dtype is None:
        return value
    if _is_float(dtype):
        return value.astype(np.float64 if mode == FP64 else dtype, copy=False)
    if dtype.kind == "b":
        return value.astype(bool)
    if value.dtype.kind == "f":
        value = np.trunc(np.nan_to_num(value, nan=0.0))
    return value.astype(dtype)


def truth_dtype(declared: np.dtype | None) -> np.dtype:
    """How a float64 result of a tensor declared ``declared`` is kept (see the module docstring)."""
    narrow = _is_float(declared) and float_format(declared).p <= 11
    return np.dtype(np.float32 if narrow else np.float64)


def _kept(sub: Subgraph, key: Key, value: np.ndarray, mode: str) -> np.ndarray:
    if mode != FP64 or value.dtype != np.float64:
        return value
    return value.astype(truth_dtype(_dtype(sub.op(key[0]).output_desc[key[1]].dtype)), copy=False)


def run_op(
    op, inputs: list[np.ndarray | None], mode: str, *, row_block: tuple[int, int] | None = None
) -> list[np.ndarray]:
    """The outputs of original op ``op`` (an :class:`~fpinspect.dumps.formats.graph.OpInfo`).

    ``row_block = (full rows, block rows)``: the op is evaluated on a block of rows, so
    output shapes whose first dim is the full row count are scaled to the block.
    Raises :class:`Unsupported` for an op type without a semantic or one it refuses.
    """
    fn = OPS.get(op.type)
    if fn is None:
        raise Unsupported(f"op type {op.type} has no replay semantic")
    out_dtypes = [_dtype(d.dtype) for d in op.output_desc]
    in_dtypes = [_dtype(d.dtype) if d is not None else None for d in op.input_desc]
    compute = compute_dtype(mode, in_dtypes + out_dtypes + [None if v is None else v.dtype for v in inputs])
    values = [
        None if v is None else (v.astype(compute, copy=False) if _is_float(v.dtype) else np.asarray(v))
        for v in inputs
    ]
    out_shapes = [logical_shape(d) for d in op.output_desc]
    in_shapes = [None if d is None else logical_shape(d) for d in op.input_desc]
    if row_block is not None:
        full, rows = row_block
        out_shapes = [(rows, *s[1:]) if s and s[0] == full else s for s in out_shapes]
        in_shapes = [None if s is None else ((rows, *s[1:]) if s and s[0] == full else s) for s in in_shapes]
    layouts = [None if d is None else (d.origin_format or d.layout) for d in op.input_desc]
    call = OpCall(op.name, op.type, dict(op.attrs), values, in_shapes, out_shapes, compute, layouts)
    try:
        with np.errstate(all="ignore"):
            outs = fn(call)
    except (ValueError, IndexError, TypeError, ArithmeticError, MemoryError) as exc:
        # inputs that do not fit the op's semantics (shapes that do not broadcast, an index
        # out of range): this op cannot be replayed, the comparison goes on
        raise Unsupported(f"{op.type} {op.name}: {type(exc).__name__}: {exc}") from None
    if len(outs) < len(op.output_desc):
        raise Unsupported(
            f"{op.type} {op.name}: the semantic gives {len(outs)} outputs, the graph {len(op.output_desc)}"
        )
    result = []
    for i in range(len(op.output_desc)):
        y = np.asarray(outs[i])
        want = out_shapes[i]
        if tuple(y.shape) != tuple(want):
            if y.size != int(np.prod(want)):
                raise Unsupported(
                    f"{op.type} {op.name}: output {i} came out {y.shape}, the graph says {tuple(want)}"
                )
            y = y.reshape(want)
        result.append(round_to(y, out_dtypes[i], mode))
    return result


@dataclass
class Evaluation:
    """The requested outputs of one evaluation, by (op, output index)."""

    mode: str
    outputs: dict[Key, np.ndarray]


def _rows_independent(op) -> bool:
    """Whether each output row of ``op`` depends only on the same row of its inputs."""
    if op.type in ELEMENTWISE:
        return True
    test = ROWS_INDEPENDENT.get(op.type)
    if test is None:
        return False
    shapes = OpCall(
        op.name,
        op.type,
        dict(op.attrs),
        [None] * len(op.input_desc),
        [None if d is None else logical_shape(d) for d in op.input_desc],
        [logical_shape(d) for d in op.output_desc],
        input_layouts=[None if d is None else (d.origin_format or d.layout) for d in op.input_desc],
    )
    try:
        return bool(test(shapes))
    except Unsupported:
        return False


def _blockable(sub: Subgraph, bound: dict[Key, np.ndarray], wanted: list[Key]) -> int | None:
    """The row count to block on, or None when the subgraph must be evaluated whole: every op
    elementwise or leaving axis 0 alone, every tensor with the same rank and row count (or a
    broadcast one)."""
    if not wanted or not all(_rows_independent(op) for op in sub.ops):
        return None
    shapes = {logical_shape(sub.op(k[0]).output_desc[k[1]]) for k in wanted}
    if len(shapes) != 1:
        return None
    (shape,) = shapes
    if not shape or shape[0] <= 1 or int(np.prod(shape)) <= BLOCK:
        return None
    rows, rank = shape[0], len(shape)
    for op in sub.ops:
        for d in op.output_desc:
            s = logical_shape(d)
            if len(s) != rank or s[0] != rows:
                return None
    for v in bound.values():
        if v.ndim == rank and v.shape[0] not in (1, rows):
            return None
    return rows


def evaluate(
    sub: Subgraph,
    bound: dict[Key, np.ndarray],
    mode: str,
    wanted: list[Key],
    cancelled: Callable[[], bool] | None = None,
) -> Evaluation:
    """Evaluate ``sub`` with its boundary inputs ``bound`` (``(producer, index) -> array``)
    and return the outputs ``wanted``. Raises :class:`Unsupported`."""
    rows = _blockable(sub, bound, wanted)
    if rows is None:
        return Evaluation(mode, _evaluate_whole(sub, bound, mode, wanted, None, cancelled))
    width = max(1, int(np.prod(logical_shape(sub.op(wanted[0][0]).output_desc[wanted[0][1]])[1:])))
    step = max(1, BLOCK // width)
    out: dict[Key, np.ndarray] = {}
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        part = {k: (v[lo:hi] if v.ndim and v.shape[0] == rows and rows > 1 else v) for k, v in bound.items()}
        got = _evaluate_whole(sub, part, mode, wanted, (rows, hi - lo), cancelled)
        for k, v in got.items():
            if k not in out:
                out[k] = np.empty((rows, *v.shape[1:]), dtype=v.dtype)
            out[k][lo:hi] = v
    return Evaluation(mode, out)


def _evaluate_whole(
    sub: Subgraph, bound: dict[Key, np.ndarray], mode: str, wanted: list[Key], row_block, cancelled
) -> dict[Key, np.ndarray]:
    values: dict[Key, np.ndarray] = {}
    remaining = dict(sub.uses)  # internal consumers left per value, so finished ones are freed
    keep = set(wanted)
    for op in sub.ops:
        if cancelled is not None and cancelled():
            raise Unsupported("replay cancelled")
        ins = []
        for ref in op.inputs:
            if ref is None:
                ins.append(None)
                continue
            key = (ref.op, ref.index)
            ins.append(values[key] if key in values else bound.get(key))
        outs = run_op(op, ins, mode, row_block=row_block)
        for i, y in enumerate(outs):
            values[(op.name, i)] = y
        for ref in op.inputs:
            if ref is None:
                continue
            key = (ref.op, ref.index)
            if key in remaining:
                remaining[key] -= 1
                if remaining[key] == 0 and key not in keep:
                    values.pop(key, None)
    return {k: _kept(sub, k, values[k], mode) for k in wanted}
