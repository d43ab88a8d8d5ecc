"""Open ``.npy`` files safely: never unpickle, never read a whole large file up front."""

from __future__ import annotations

import os

import numpy as np

from ..numerics.chunks import NpyFile
from .errors import InputError


def open_npy(path) -> NpyFile:
    """Validate the header of a ``.npy`` file and return a chunked reader for it.

    Raises :class:`InputError` with code ``FILE_NOT_FOUND`` for a missing file and
    ``NPY_LOAD_ERROR`` for anything unreadable: not a ``.npy`` file, a corrupt header,
    object arrays (pickled data is refused, never loaded), or fewer data bytes than the
    header promises (a truncated file).
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(path, "file does not exist", "FILE_NOT_FOUND")
    if os.path.isdir(path):
        raise InputError(path, "is a folder, not a .npy file")
    try:
        with open(path, "rb") as f:
            try:
                version = np.lib.format.read_magic(f)
            except ValueError:
                raise InputError(path, "is not a .npy file (bad magic bytes)") from None
            try:
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
                elif version == (3, 0):  # utf-8 header; numpy has no public reader for it
                    shape, fortran, dtype = np.lib.format._read_array_header(f, version)
                else:
                    raise InputError(path, f"has unsupported .npy format version {version}")
            except (ValueError, SyntaxError, TypeError) as exc:
                raise InputError(path, f"has a corrupt .npy header ({exc})") from None
            offset = f.tell()
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if dtype.hasobject:
        raise InputError(path, "holds Python objects (pickled data), which fpinspect refuses to load")
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    actual = os.path.getsize(path) - offset
    if actual < expected:
        raise InputError(path, f"is truncated: the header promises {expected} data bytes, the file has {actual}")
    return NpyFile(path, shape, dtype, fortran, offset)


def load_npy(path, *, mmap: bool = True) -> np.ndarray:
    """The whole array (memory-mapped read-only by default), after :func:`open_npy`'s checks."""
    f = open_npy(path)
    try:
        return np.load(f.path, mmap_mode="r" if mmap and f.size else None, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise InputError(path, f"cannot be loaded ({exc})") from None
