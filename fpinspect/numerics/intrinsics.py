"""Scalar operations of the compiled kernels written straight as LLVM instructions.

numba compiles ``max(a, b)`` and ``np.float64(v).view(np.int64)`` through ``@overload``
implementations: each distinct argument type costs a compile pipeline of its own (type
inference, lowering, LLVM) on a first call, ~0.05 s apiece. These ``@intrinsic`` versions
emit their one or two instructions where they are called, with the same results.
"""

from __future__ import annotations

import operator

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


def _bitcast(result):
    """An intrinsic: the bit pattern of a number converted to float64, as ``result`` (int64 or
    uint64), or a 64-bit integer's bits read as float64 (``result`` float64)."""
    source = types.float64 if isinstance(result, types.Integer) else types.int64

    def typer(typingctx, v):
        if not isinstance(v, (types.Integer, types.Float)):
            return None

        def codegen(context, builder, sig, args):
            value = context.cast(builder, args[0], sig.args[0], source)
            return builder.bitcast(value, context.get_value_type(result))

        return result(v), codegen

    return typer


#: ``np.float64(v).view(np.int64)``.
float_bits = intrinsic(_bitcast(types.int64))
#: ``np.float64(v).view(np.uint64)``.
float_ubits = intrinsic(_bitcast(types.uint64))
#: ``np.int64(b).view(np.float64)``.
bits_float = intrinsic(_bitcast(types.float64))

__all__ = ["bits_float", "float_bits", "float_ubits", "imax", "imin"]
