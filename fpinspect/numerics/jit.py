"""numba's ``njit`` as fpinspect uses it: compiled once, cached on disk where that is possible.

numba keeps compiled kernels in ``__pycache__`` beside the source, or, when the install is
read-only, in the user's cache folder (``~/.cache/numba``), or in ``NUMBA_CACHE_DIR`` when
set. Where none is writable numba refuses ``cache=True`` at import time; fpinspect then
compiles in memory on first use in each process instead of failing.
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys

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


def _cache_folders(source: str) -> list[str]:
    """Where numba may keep the cache of the kernels of ``source``, as numba names them: beside the
    source, or in ``NUMBA_CACHE_DIR`` / the user's cache folder under the source folder's name and
    the SHA-1 of its path."""
    here = os.path.dirname(os.path.abspath(source))
    sub = f"{os.path.basename(here)}_{hashlib.sha1(here.encode()).hexdigest()}"
    if numba.config.CACHE_DIR:
        return [os.path.join(numba.config.CACHE_DIR, sub)]
    user_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [os.path.join(here, "__pycache__"), os.path.join(user_cache, "numba", sub)]


def is_cached(kernel) -> bool:
    """Whether numba's disk cache has an index of ``kernel``'s compiled code that is newer than its
    source (numba drops an older one): a few ``stat`` calls, nothing compiled or loaded."""
    fn = kernel.py_func
    source = sys.modules[fn.__module__].__file__
    stem = os.path.splitext(os.path.basename(source))[0]
    name = f"{stem}.{fn.__qualname__}-*.nbi"
    since = os.stat(source).st_mtime
    return any(
        os.stat(index).st_mtime >= since
        for folder in _cache_folders(source)
        for index in glob.glob(os.path.join(folder, name))
    )


#: How the statistics kernels compile: no GIL, cached, numpy's error model (no exception on a
#: division by zero).
KERNEL = dict(nogil=True, cache=True, error_model="numpy")
#: A kernel called only from compiled code: no wrappers to call it from Python.
SUB = dict(KERNEL, no_cpython_wrapper=True, no_cfunc_wrapper=True)
