"""numba's ``njit`` as fpinspect uses it: compiled once, cached on disk where that is possible.

numba keeps compiled kernels in ``__pycache__`` beside the source, or, when the install is
read-only, in the user's cache folder (``~/.cache/numba``), or in ``NUMBA_CACHE_DIR`` when
set. Where none is writable numba refuses ``cache=True`` at import time; fpinspect then
compiles in memory on first use in each process instead of failing.
"""

from __future__ import annotations

import numba


def njit(fn=None, **options):
    """``numba.njit`` with ``cache=True`` unless no cache folder is writable."""

    def wrap(f):
        if options.get("cache"):
            try:
                return numba.njit(**options)(f)
            except RuntimeError:  # "cannot cache function ...: no locator available"
                return numba.njit(**{**options, "cache": False})(f)
        return numba.njit(**options)(f)

    return wrap(fn) if fn is not None else wrap


def argument_types(args) -> tuple:
    """The numba types of a call's arguments, as a call with them is compiled for (and as
    ``kernel.overloads`` is keyed)."""
    return tuple(numba.typeof(a, numba.core.typing.typeof.Purpose.argument) for a in args)


def each_once(calls: list) -> list:
    """``calls`` (``(kernel, arguments)`` pairs) without the repeats of a kernel for the same
    argument types, each kept where it is first listed."""
    seen: set = set()
    out = []
    for kernel, args in calls:
        key = (kernel, argument_types(args))
        if key not in seen:
            seen.add(key)
            out.append((kernel, args))
    return out
