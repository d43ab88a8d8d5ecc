"""Calls from one compiled kernel to another through a table of addresses, instead of numba's
direct calls: a *driver* (a kernel that walks blocks and calls the kernels doing the work)
compiles without its callees' code.

numba compiles a direct call to another kernel by linking the callee's whole compiled module
into the caller's and optimising the two again; a driver of a dozen block kernels redid all
of their LLVM work in its own compile, which no other process can share (measured: a driver
of four block kernels compiled in 0.70-0.80 s with direct calls, 0.29-0.30 s through
addresses). Through :func:`call`, the caller is typed with what the callee's slot says it
returns, without compiling the callee, and only loads its address from the table it is given
and calls it with numba's own calling convention, so arrays, tuples and error statuses pass as
in a direct call. A caller's callees are compiled where its table is made, for the calls the
kind of pair makes: one that a kind never calls is never compiled for it.

The table, one int64 array per driver and kind of call (:func:`table`), holds for each
callee slot (:func:`slot`) its address and a hash of the argument types it was compiled for;
the caller compares that hash with the one of its call site before calling, so a table built
for other types is a ``RuntimeError``, never a call into the wrong code.
"""

from __future__ import annotations

import zlib

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .jit import argument_types

#: ``id`` of each callee's dispatcher -> its slot in a table (module-level dispatchers: ids are
#: theirs), and what it returns (a numba type).
_SLOTS: dict[int, int] = {}
_RETURNS: dict[int, types.Type] = {}


def slot(kernel, returns: types.Type):
    """Give ``kernel`` its slot in every table, so that :func:`call` can call it; ``returns`` is
    the numba type it returns, which types a call without compiling it (a kernel a pair does
    not call is then never compiled for it); :func:`table` checks it. Returns ``kernel``."""
    _SLOTS.setdefault(id(kernel), len(_SLOTS))
    _RETURNS[id(kernel)] = returns
    return kernel


def _hash(argtypes: tuple) -> int:
    """A hash of numba argument types, the same in every process (``hash()`` of a string is not)."""
    return zlib.crc32(repr(tuple(argtypes)).encode()) & 0x7FFFFFFF


def table(calls) -> np.ndarray:
    """The table of ``calls`` (``(kernel, arguments)`` pairs, the arguments of the types the
    caller passes): each kernel compiled (or loaded from the cache, or found compiled) for
    those types, its address and types' hash in its slot; slots nobody fills stay 0 (a call
    through one is a ``RuntimeError``)."""
    out = np.zeros(2 * len(_SLOTS), dtype=np.int64)
    for kernel, args in calls:
        argtypes = argument_types(args)
        kernel.compile(argtypes)
        compiled = kernel.overloads[argtypes]
        if compiled.signature.return_type != _RETURNS[id(kernel)]:
            raise RuntimeError(
                f"{kernel.__name__} returns {compiled.signature.return_type}, "
                f"not the {_RETURNS[id(kernel)]} its slot says"
            )
        i = 2 * _SLOTS[id(kernel)]
        out[i] = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
        out[i + 1] = _hash(argtypes)
    return out


@intrinsic
def call(typingctx, fns, kernel, args):
    """``kernel(*args)`` (``args`` a tuple) through the table ``fns`` (:func:`table`): it returns
    what ``kernel``'s slot says, and calls the address in the slot once the slot's stamp is the
    one of these argument types (else ``RuntimeError``: no kernel for them in this table)."""
    dispatcher = kernel.dispatcher
    argtypes = tuple(args.types)
    restype = _RETURNS[id(dispatcher)]
    index = 2 * _SLOTS[id(dispatcher)]
    expected = _hash(argtypes)

    def codegen(context, builder, signature, llargs):
        data = context.make_array(signature.args[0])(context, builder, llargs[0]).data
        address = builder.load(builder.gep(data, [context.get_constant(types.intp, index)]))
        stamp = builder.load(builder.gep(data, [context.get_constant(types.intp, index + 1)]))
        matches = builder.icmp_signed("==", stamp, context.get_constant(types.int64, expected))
        with cgutils.if_unlikely(builder, builder.not_(matches)):
            context.call_conv.return_user_exc(
                builder,
                RuntimeError,
                (f"the kernel table has no {dispatcher.py_func.__name__} for these types",),
            )
        fnty = context.call_conv.get_function_type(restype, argtypes)
        callee = builder.inttoptr(address, fnty.as_pointer())
        values = cgutils.unpack_tuple(builder, llargs[2], len(argtypes))
        status, result = context.call_conv.call_function(builder, callee, restype, argtypes, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return restype(fns, kernel, args), codegen
