"""Open ``.npy`` files safely: never unpickle, never block, never read a whole large file up front."""

from __future__ import annotations

import ast
import errno
import io
import math
import os
import re
import stat
import struct
from functools import lru_cache

import numpy as np

from ...numerics.chunks import WHOLE_READ, NpyFile
from ..errors import InputError

#: numpy's own limit on the header of a ``.npy`` file it will parse without being told to trust it.
MAX_HEADER = 10_000
_INT64_MAX = (1 << 63) - 1


def regular_file_size(path: str, what: str = ".npy file") -> int:
    """The size of ``path`` if it is a regular file, else :class:`InputError` in one sentence.

    A missing file, a dangling link or a symbolic link loop, a folder, and a FIFO, socket or
    device (whose ``open`` could block forever or read endlessly) are all refused here, so
    callers only ever open regular files.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(path, "is a symbolic link loop", "FILE_NOT_FOUND") from None
        if os.path.lexists(path):
            if exc.errno == errno.ENOENT:
                raise InputError(
                    path, "is a symbolic link to a file that does not exist", "FILE_NOT_FOUND"
                ) from None
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
        raise InputError(path, "file does not exist", "FILE_NOT_FOUND") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(path, f"is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        kind = "FIFO" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode) else "device"
        raise InputError(path, f"is a {kind}, not a regular {what}")
    return st.st_size


def open_regular(path: str, what: str = ".npy file"):
    """``open(path, "rb")`` for a regular file only, without ever blocking on a FIFO."""
    fd, _ = _open_fd(path, what)
    return io.BufferedReader(os.fdopen(fd, "rb", buffering=0))


def _open_fd(path: str, what: str) -> tuple[int, int]:
    """:func:`open_regular` as a bare descriptor (no file object: :func:`open_npy` reads a small
    file in one system call and a file object cost it more than the read), and the file's size."""
    regular_file_size(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):  # swapped between stat and open
        os.close(fd)
        raise InputError(path, f"is not a regular {what}")
    return fd, st.st_size


def _header_v3(f) -> tuple[tuple, bool, np.dtype]:
    """Format 3.0: as 2.0 (4-byte length) but the header dict is UTF-8. numpy reads it only
    inside ``np.load``; this reads the same dict with the same checks, public API only."""
    raw = f.read(4)
    if len(raw) != 4:
        raise ValueError("the header length is cut short")
    (length,) = struct.unpack("<I", raw)
    if length > MAX_HEADER:
        raise ValueError(f"the header is {length} bytes, more than numpy's limit of {MAX_HEADER}")
    text = f.read(length)
    if len(text) != length:
        raise ValueError("the header is cut short")
    d = ast.literal_eval(text.decode("utf-8"))
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise ValueError(f"the header is not a dict of descr, fortran_order and shape: {d!r}")
    if not isinstance(d["fortran_order"], bool):
        raise ValueError(f"fortran_order is not a bool: {d['fortran_order']!r}")
    if not isinstance(d["shape"], tuple) or not all(isinstance(x, int) for x in d["shape"]):
        raise ValueError(f"shape is not a tuple of ints: {d['shape']!r}")
    return d["shape"], d["fortran_order"], np.lib.format.descr_to_dtype(d["descr"])


#: The header dict exactly as numpy writes it (``format._write_array_header``) for a plain dtype:
#: keys sorted, a ``repr`` of each value, a trailing ``, }``, then padding spaces and a newline.
_DIM = "(?:0|[1-9][0-9]*)"  # a Python int literal: no leading zeros
_CANONICAL = re.compile(
    r"\{'descr': '([<>|=]?[A-Za-z][A-Za-z0-9]*(?:\[[A-Za-z0-9]+\])?)', 'fortran_order': (True|False), "
    rf"'shape': \(({_DIM},|{_DIM}(?:, {_DIM})+|)\), \}} *\n?"
)
_MAGIC = b"\x93NUMPY"
_MAGIC_LENGTH = 8  # b"\x93NUMPY" and the two version bytes
_VERSIONS = ((1, 0), (2, 0), (3, 0))
#: The first read of a file: the magic string, the header length and the header itself when
#: numpy wrote it (a few hundred bytes; a longer one is read on), and the first data bytes.
FIRST_READ = 4096


def _canonical_header(read, head: bytes, version) -> tuple[tuple, bool, np.dtype, int] | None:
    """``(shape, fortran_order, dtype, data offset)`` of a file numpy wrote, read without
    ``ast.literal_eval`` (which compiles the dict: most of the cost of opening a 64 KiB file);
    ``None`` for any other spelling, which :func:`_read_header` then parses as numpy does.
    ``head`` is the file's first bytes; a header longer than them is read on with ``read(n)``
    (the next ``n`` bytes of the file)."""
    width = 2 if version == (1, 0) else 4
    start = _MAGIC_LENGTH + width
    if len(head) < start:
        return None
    (length,) = struct.unpack_from("<H" if width == 2 else "<I", head, _MAGIC_LENGTH)
    if length > MAX_HEADER:
        return None
    if len(head) < start + length:
        head += read(start + length - len(head))
    text = head[start : start + length]
    found = _canonical_text(text) if len(text) == length else None
    return None if found is None else (*found, start + length)


@lru_cache(maxsize=256)
def _canonical_text(text: bytes) -> tuple[tuple, bool, np.dtype] | None:
    """The header dict ``text`` of :func:`_canonical_header`, parsed once per spelling: the
    files of one dump folder share a few (one per dtype and shape)."""
    match = _CANONICAL.fullmatch(text.decode("latin-1"))
    if match is None:
        return None
    descr, fortran, dims = match.groups()
    try:
        dtype = np.lib.format.descr_to_dtype(descr)
    except Exception:  # numpy's parser says why, in its words
        return None
    return tuple(int(d) for d in dims.split(",") if d), fortran == "True", dtype


def _read_header(fd: int, head: bytes, version) -> tuple[tuple, bool, np.dtype, int]:
    """``(shape, fortran_order, dtype, data offset)`` of the open file ``fd`` that begins with
    ``head``; ``fd`` is left after ``head`` or after the header, whichever ends later (the data
    in ``head`` then continues there)."""
    if version in _VERSIONS:
        found = _canonical_header(lambda n: os.read(fd, n), head, version)
        if found is not None:
            return found
    # numpy's parsers read a file object: an unbuffered one moves the descriptor's position
    f = os.fdopen(fd, "rb", buffering=0, closefd=False)
    f.seek(_MAGIC_LENGTH)
    if version == (1, 0):
        header = np.lib.format.read_array_header_1_0(f, max_header_size=MAX_HEADER)
    elif version == (2, 0):
        header = np.lib.format.read_array_header_2_0(f, max_header_size=MAX_HEADER)
    elif version == (3, 0):
        header = _header_v3(f)
    else:
        raise ValueError(f"format version {version[0]}.{version[1]} is not one numpy writes (1.0, 2.0, 3.0)")
    offset = f.tell()
    f.seek(max(offset, len(head)))
    return (*header, offset)


def _data_bytes(path: str, shape: tuple, dtype: np.dtype) -> int:
    """The data bytes a header of ``shape`` and ``dtype`` promises; shapes numpy itself refuses
    (negative dimensions, sizes beyond int64) are refused here."""
    if shape and min(shape) < 0:
        raise InputError(path, f"has a corrupt .npy header (negative dimension in shape {shape})")
    count = math.prod(shape)  # Python ints: no overflow while checking for one
    nbytes = count * dtype.itemsize
    if count > _INT64_MAX or nbytes > _INT64_MAX:
        raise InputError(path, f"has a corrupt .npy header (shape {shape} is too large to exist)")
    return nbytes


def open_npy(path) -> NpyFile:
    """Validate the header of a ``.npy`` file and return a chunked reader for it.

    Raises :class:`InputError` with code ``FILE_NOT_FOUND`` for a missing file (or a broken
    link) and ``NPY_LOAD_ERROR`` for anything unreadable: not a regular file, not a ``.npy``
    file, a corrupt header (every format version numpy writes is read: 1.0, 2.0 and the
    UTF-8 3.0), a shape numpy refuses, object arrays (pickled data is refused, never
    loaded), or fewer data bytes than the header promises (a truncated file).
    """
    path = os.fspath(path)
    data = None
    fd, size = _open_fd(path, ".npy file")
    try:
        try:
            head = os.read(fd, FIRST_READ)
            if len(head) < _MAGIC_LENGTH or head[:6] != _MAGIC:
                raise InputError(path, "is not a .npy file (bad magic bytes)")
            try:
                shape, fortran, dtype, offset = _read_header(fd, head, (head[6], head[7]))
            except Exception as exc:  # numpy's parser has many ways to say "corrupt" (tokenize too)
                raise InputError(path, f"has a corrupt .npy header ({type(exc).__name__}: {exc})") from None
            if dtype.hasobject:
                raise InputError(path, "holds Python objects (pickled data), which fpinspect refuses to load")
            if dtype.itemsize == 0:
                raise InputError(
                    path, f"holds elements of zero bytes (dtype {dtype.str}), which carry no values"
                )
            expected = _data_bytes(path, shape, dtype)
            actual = size - offset
            if actual < expected:
                raise InputError(
                    path, f"is truncated: the header promises {expected} data bytes, the file has {actual}"
                )
            if expected <= WHOLE_READ and not fortran:
                data = _read_data(fd, path, dtype, expected, head, offset)
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    return NpyFile(path, shape, dtype, fortran, offset, data)


def _read_data(fd: int, path: str, dtype: np.dtype, nbytes: int, head: bytes, offset: int) -> np.ndarray:
    """The ``nbytes`` of data at ``offset``, as a flat read-only array of ``dtype``: from the
    file's first bytes ``head`` (read with the header), then from what follows them in the open
    file ``fd``. Data that ``head`` holds whole is a view of it (no copy) where that is aligned
    for ``dtype``: the compiled pass takes aligned arrays only (another alignment is another
    compile)."""
    count = nbytes // dtype.itemsize
    if offset + nbytes <= len(head):
        view = np.frombuffer(head, dtype=dtype, count=count, offset=offset)
        if view.flags.aligned:
            return view
    data = np.empty(count, dtype=dtype)
    raw = memoryview(data.view(np.uint8))
    got = min(max(len(head) - offset, 0), nbytes)
    raw[:got] = memoryview(head)[offset : offset + got]
    while got < nbytes:  # an unbuffered read may return less than asked
        n = os.readv(fd, [raw[got:]])
        if not n:  # the file shrank since its size was read
            raise InputError(path, f"is truncated: the header promises {nbytes} data bytes")
        got += n
    data.flags.writeable = False
    return data


def as_array(f: NpyFile) -> np.ndarray:
    """The whole array of a file :func:`open_npy` opened, memory-mapped read-only from the
    header it read (the header is not parsed again); an empty one is made in memory."""
    if not f.size:
        return np.empty(f.header_shape, f.stored_dtype, order="F" if f.fortran_order else "C")
    try:
        return np.memmap(
            f.path,
            dtype=f.stored_dtype,
            mode="r",
            offset=f.data_offset,
            shape=f.header_shape,
            order="F" if f.fortran_order else "C",
        )
    except (ValueError, OSError) as exc:
        raise InputError(f.path, f"cannot be loaded ({exc})") from None


def load_npy(path) -> np.ndarray:
    """The whole array, memory-mapped read-only, after :func:`open_npy`'s checks."""
    return as_array(open_npy(path))
