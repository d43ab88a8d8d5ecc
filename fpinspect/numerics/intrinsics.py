"""Scalar operations of the compiled kernels written straight as LLVM instructions.

numba compiles ``max(a, b)`` and ``np.float64(v).view(np.int64)`` through ``@overload``
implementations: each distinct argument type costs a compile pipeline of its own (type
inference, lowering, LLVM) on a first call. These ``@intrinsic`` versions
emit their one or two instructions where they are called, with the same results.
"""

from __future__ import annotations

import operator

from llvmlite import ir
from numba.core import types
from numba.core.typing import signature
from numba.extending import intrinsic


def _select(op):
    """An intrinsic ``(a, b) -> b if op(b, a) else a`` in the unified type of ``a`` and ``b``:
    Python's and numba's ``max`` (``op`` is ``>``) and ``min`` (``<``) of two numbers,
    NaN included (a NaN ``b`` is never taken; a NaN ``a`` is kept)."""

    def typer(typingctx, a, b):
        if not all(isinstance(t, (types.Integer, types.Float, types.Boolean)) for t in (a, b)):
            return None
        ty = typingctx.unify_types(a, b)
        if ty is None:
            return None

        def codegen(context, builder, sig, args):
            x = context.cast(builder, args[0], sig.args[0], ty)
            y = context.cast(builder, args[1], sig.args[1], ty)
            pred = context.get_function(op, signature(types.boolean, ty, ty))(builder, (y, x))
            return builder.select(pred, y, x)

        return ty(a, b), codegen

    return typer


#: ``max(a, b)`` of two numbers.
imax = intrinsic(_select(operator.gt))
#: ``min(a, b)`` of two numbers.
imin = intrinsic(_select(operator.lt))


@intrinsic
def where(typingctx, cond, a, b):
    """``a if cond else b`` as one LLVM ``select``, in the unified type of ``a`` and ``b``. numba
    lowers a conditional expression to branches, and a loop of a few of them (four masked
    minima of one bucket's values, say) may then not vectorise."""
    if not all(isinstance(t, (types.Integer, types.Float, types.Boolean)) for t in (cond, a, b)):
        return None
    ty = typingctx.unify_types(a, b)
    if ty is None:
        return None

    def codegen(context, builder, sig, args):
        c = context.cast(builder, args[0], sig.args[0], types.boolean)
        x = context.cast(builder, args[1], sig.args[1], ty)
        y = context.cast(builder, args[2], sig.args[2], ty)
        return builder.select(c, x, y)

    return ty(cond, a, b), codegen


def _bitcast(source, result):
    """An intrinsic: a number converted to ``source`` and its bits read as ``result``."""

    def typer(typingctx, v):
        if not isinstance(v, (types.Integer, types.Float)):
            return None

        def codegen(context, builder, sig, args):
            value = context.cast(builder, args[0], sig.args[0], source)
            return builder.bitcast(value, context.get_value_type(result))

        return result(v), codegen

    return typer


#: ``np.float64(v).view(np.int64)``.
float_bits = intrinsic(_bitcast(types.float64, types.int64))
#: ``np.float64(v).view(np.uint64)``.
float_ubits = intrinsic(_bitcast(types.float64, types.uint64))
#: ``np.int64(b).view(np.float64)``.
bits_float = intrinsic(_bitcast(types.int64, types.float64))
#: ``np.int32(b).view(np.float32)``.
bits_float32 = intrinsic(_bitcast(types.int32, types.float32))


_I64 = ir.IntType(64)
_MAG_BITS = ir.Constant(_I64, 0x7FFFFFFFFFFFFFFF)


def _flip_negatives(builder, b):
    """``b ^ ((b >> 63) & 0x7FFF...)``: a negative float64's magnitude bits inverted, so that
    integer order is value order; its own inverse."""
    return builder.xor(b, builder.and_(builder.ashr(b, ir.Constant(_I64, 63)), _MAG_BITS))


@intrinsic
def order_key(typingctx, v):
    """An int64 monotone in a float64's value over all signs (-0 just below +0; NaNs at the
    ends): its bit pattern with a negative number's magnitude bits inverted. Integer
    minima and maxima of keys vectorise where float ones would not."""
    if not isinstance(v, (types.Integer, types.Float)):
        return None

    def codegen(context, builder, sig, args):
        value = context.cast(builder, args[0], sig.args[0], types.float64)
        return _flip_negatives(builder, builder.bitcast(value, _I64))

    return types.int64(v), codegen


@intrinsic
def from_order_key(typingctx, k):
    """The float64 whose :func:`order_key` is ``k``."""
    if not isinstance(k, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        key = context.cast(builder, args[0], sig.args[0], types.int64)
        return builder.bitcast(_flip_negatives(builder, key), ir.DoubleType())

    return types.float64(k), codegen
