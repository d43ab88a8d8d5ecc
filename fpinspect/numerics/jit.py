"""numba's ``njit`` as fpinspect uses it: compiled once, cached on disk where that is possible.

numba keys a cached kernel on its own source file only, but the kernels inline functions of
other modules of this package (:mod:`.decode`, :mod:`.intrinsics`, :mod:`.ulp`): an edit there
would leave the cached kernels as they were. So the cache lives in a folder named by a digest of
every module here (:data:`CACHE_ROOT`): any edit starts a fresh one. It is beside the sources
(``__pycache__``) where that is writable, else in the user's cache folder, or under
``NUMBA_CACHE_DIR`` when that is set. Where none is writable numba refuses ``cache=True`` at
import time; fpinspect then compiles in memory on first use in each process instead of failing.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import sys
import tempfile

import numba

_HERE = os.path.dirname(os.path.abspath(__file__))


def _sources_digest() -> str:
    """A digest of the names and bytes of every module of this package."""
    digest = hashlib.sha1()
    for name in sorted(n for n in os.listdir(_HERE) if n.endswith(".py")):
        with open(os.path.join(_HERE, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()[:16]


def _cache_parent() -> str:
    """The folder that holds the cache folders of every version of these sources."""
    if numba.config.CACHE_DIR:
        return os.path.join(numba.config.CACHE_DIR, "fpinspect")
    beside = os.path.join(_HERE, "__pycache__")
    try:  # writable?
        os.makedirs(beside, exist_ok=True)
        tempfile.TemporaryFile(dir=beside).close()
        return beside
    except OSError:
        user_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(user_cache, "fpinspect")


#: Where the compiled kernels of these sources are kept.
CACHE_ROOT = os.path.join(_cache_parent(), f"kernels-{_sources_digest()}")


def njit(fn=None, **options):
    """``numba.njit``; with ``cache=True`` cached in :data:`CACHE_ROOT` unless no cache folder is
    writable."""

    def wrap(f):
        if not options.get("cache"):
            return numba.njit(**options)(f)
        saved, numba.config.CACHE_DIR = numba.config.CACHE_DIR, CACHE_ROOT  # read as it decorates
        try:
            return numba.njit(**options)(f)
        except RuntimeError:  # "cannot cache function ...: no locator available"
            return numba.njit(**{**options, "cache": False})(f)
        finally:
            numba.config.CACHE_DIR = saved

    return wrap(fn) if fn is not None else wrap


def _cache_folder(source: str) -> str:
    """Where numba keeps the cache of the kernels of ``source`` under :data:`CACHE_ROOT`: a folder
    named by the source folder's name and the SHA-1 of its path, as numba names it."""
    here = os.path.dirname(os.path.abspath(source))
    return os.path.join(CACHE_ROOT, f"{os.path.basename(here)}_{hashlib.sha1(here.encode()).hexdigest()}")


def is_cached(kernel) -> bool:
    """Whether the cache has an index of ``kernel``'s compiled code that is newer than its source
    (numba drops an older one): a few ``stat`` calls, nothing compiled or loaded."""
    fn = kernel.py_func
    source = sys.modules[fn.__module__].__file__
    stem = os.path.splitext(os.path.basename(source))[0]
    since = os.stat(source).st_mtime
    indexes = glob.glob(os.path.join(_cache_folder(source), f"{stem}.{fn.__qualname__}-*.nbi"))
    return any(os.stat(index).st_mtime >= since for index in indexes)


def forget_other_versions() -> list[str]:
    """Delete the cache folders of other versions of these sources (a checkout that was edited,
    or an install upgraded in place), and numba's own cache files beside them from before these
    folders; return their paths."""
    parent, mine = os.path.dirname(CACHE_ROOT), os.path.basename(CACHE_ROOT)
    gone = [p for p in glob.glob(os.path.join(parent, "kernels-*")) if os.path.basename(p) != mine]
    gone += glob.glob(os.path.join(_HERE, "__pycache__", "*.nb[ci]"))
    for path in gone:
        shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)
    return gone


#: How the statistics kernels compile: no GIL, cached, numpy's error model (no exception on a
#: division by zero).
KERNEL = dict(nogil=True, cache=True, error_model="numpy")
#: A kernel called only from compiled code: no wrappers to call it from Python.
SUB = dict(KERNEL, no_cpython_wrapper=True, no_cfunc_wrapper=True)
