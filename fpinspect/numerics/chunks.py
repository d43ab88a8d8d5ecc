"""Walk large arrays in flat, C-order chunks with bounded memory.

Arrays may be in memory, ``np.memmap`` views (``np.load(..., mmap_mode="r")``) larger than
RAM, or :class:`NpyFile` readers that pull bytes straight from disk. For memory maps the
pages of a finished chunk are released (``madvise(MADV_DONTNEED)``), so the resident set
stays at a few chunks instead of growing to the file size.
"""

from __future__ import annotations

import math
import mmap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .dtypes import as_native, native

#: Elements per chunk: 1 Mi elements (2 MiB of float16 per side) — the compiled pass keeps no
#: temporaries, so a chunk only bounds the memory a read holds and the work one thread takes.
CHUNK = 1 << 20
#: A C-order ``.npy`` file with at most this many data bytes is read whole when it is opened
#: (:class:`NpyFile` ``data``): one open and one read, where reading it chunk by chunk and then
#: looking up its worst elements opened it three times (most of a 64 KiB pair's reading time).
WHOLE_READ = 1 << 20


def readonly(a: np.ndarray) -> np.ndarray:
    """``a`` as a read-only view: numba compiles read-only and writable arrays apart, and memory
    maps are read-only, so every input of a kernel is passed read-only (one compiled variant)."""
    if not a.flags.writeable:
        return a
    v = a.view()
    v.flags.writeable = False
    return v


def _mmap_of(a: np.ndarray):
    """The Python ``mmap`` object behind ``a`` if ``a`` is a contiguous view of one."""
    base = a
    while base is not None:
        mm = getattr(base, "_mmap", None)
        if isinstance(mm, mmap.mmap):
            return mm
        base = getattr(base, "base", None)
    return None


class _PageReleaser:
    """Drops the pages of an mmap-backed contiguous array once they have been read."""

    def __init__(self, a: np.ndarray):
        self.mm = None
        if not a.flags.c_contiguous or not hasattr(mmap, "MADV_DONTNEED"):
            return
        mm = _mmap_of(a)
        if mm is None or mm.closed:
            return
        try:
            start = np.frombuffer(mm, dtype=np.uint8).__array_interface__["data"][0]
        except (TypeError, ValueError):
            return
        self.mm = mm
        self.offset = a.__array_interface__["data"][0] - start
        self.itemsize = a.dtype.itemsize
        self.page = mmap.PAGESIZE

    def release(self, lo: int, hi: int) -> None:
        if self.mm is None:
            return
        b0 = self.offset + lo * self.itemsize
        b1 = self.offset + hi * self.itemsize
        b0 -= b0 % self.page  # madvise wants a page-aligned start
        try:
            self.mm.madvise(mmap.MADV_DONTNEED, b0, b1 - b0)
        except (OSError, ValueError):
            self.mm = None


class NpyFile:
    """A ``.npy`` file read chunk by chunk with ordinary reads (no pickle, no whole read).

    ``shape``, ``dtype`` and ``size`` come from the header; :meth:`read` returns elements
    ``[lo, hi)`` in C order and in machine byte order: ``dtype`` is the machine-order dtype,
    ``stored_dtype`` the file's own (``>f2`` for a big-endian file). Fortran-ordered files
    are memory-mapped and each range gathered in logical C order, so memory stays bounded
    and threads share the one map instead of each reading the file whole. ``data``, when
    given, is the file's whole data read at open (flat, read-only, in the stored byte order:
    :data:`WHOLE_READ`); reads and lookups then come from it instead of the file.
    """

    def __init__(self, path, header_shape, dtype, fortran_order, data_offset, data: np.ndarray | None = None):
        self.path = path
        self.header_shape = tuple(header_shape)  #: as stored; ``shape`` may be a flattening of it
        self.shape = self.header_shape
        self.stored_dtype = np.dtype(dtype)
        self.dtype = native(self.stored_dtype)
        self.size = math.prod(self.shape)
        self.ndim = len(self.shape)
        self.fortran_order = fortran_order
        self.data_offset = data_offset
        self.data = data
        self._fortran_map = None

    def read(self, lo: int, hi: int, out: np.ndarray | None = None) -> np.ndarray:
        """Elements ``[lo, hi)``; read into ``out`` (a buffer from :meth:`buffer`, reused
        chunk after chunk: a fresh one per read costs its page faults) when given. From
        ``data``, the result is a read-only view of it."""
        if self.data is not None:
            return as_native(self.data[lo:hi])
        if self.fortran_order:
            if self._fortran_map is None:
                self._fortran_map = np.memmap(
                    self.path,
                    dtype=self.stored_dtype,
                    mode="r",
                    offset=self.data_offset,
                    shape=self.header_shape,
                    order="F",
                )
            # C-order flat indices are the same in any flattening of the header shape.
            idx = np.unravel_index(np.arange(lo, hi), self.header_shape)
            return as_native(np.asarray(self._fortran_map[idx]))
        n = hi - lo
        with open(self.path, "rb") as f:
            f.seek(self.data_offset + lo * self.stored_dtype.itemsize)
            out = np.empty(n, dtype=self.stored_dtype) if out is None else out[:n]
            got = f.readinto(out.view(np.uint8))
        if got != n * self.stored_dtype.itemsize:
            raise ValueError(f"{self.path}: file is truncated (expected {self.size} elements)")
        return as_native(out)

    def take(self, flat) -> np.ndarray:
        """The elements at C-order flat indices ``flat`` (a few: the file is opened once)."""
        if self.data is not None:
            return as_native(self.data[np.asarray(flat, dtype=np.int64)])
        flat = [int(i) for i in flat]
        if self.fortran_order:
            self.read(0, 0)  # maps the file
            idx = np.unravel_index(np.asarray(flat, dtype=np.int64), self.header_shape)
            return as_native(np.asarray(self._fortran_map[idx]))
        size = self.stored_dtype.itemsize
        parts = []
        with open(self.path, "rb") as f:
            for i in flat:
                f.seek(self.data_offset + i * size)
                parts.append(f.read(size))
        if any(len(b) != size for b in parts):
            raise ValueError(f"{self.path}: file is truncated (expected {self.size} elements)")
        return as_native(np.frombuffer(b"".join(parts), dtype=self.stored_dtype).copy())

    def with_shape(self, shape) -> NpyFile:
        """The same data seen with another shape of equal size (C-order flattening)."""
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot view {self.shape} as {shape}")
        other = NpyFile(
            self.path, self.header_shape, self.stored_dtype, self.fortran_order, self.data_offset, self.data
        )
        other._fortran_map = self._fortran_map
        other.shape, other.ndim = shape, len(shape)
        return other


class CastView:
    """``src`` (an :class:`NpyFile` or array) read chunk by chunk and cast to ``dtype``.

    Used when a dump stores a narrow format widened (msaccucmp saves bfloat16 as float32):
    casting back is exact and lets ULPs be counted in the declared format.
    """

    def __init__(self, src, dtype):
        self.src = src
        self.dtype = np.dtype(dtype)
        self.shape = tuple(src.shape)
        self.size = int(src.size)
        self.ndim = len(self.shape)
        self._reader = ChunkReader(src)

    def read(self, lo: int, hi: int) -> np.ndarray:
        return self._reader.read(lo, hi).astype(self.dtype)

    def take(self, flat) -> np.ndarray:
        return self._reader.take(flat).astype(self.dtype)

    def with_shape(self, shape) -> CastView:
        src = (
            self.src.with_shape(shape)
            if isinstance(self.src, NpyFile)
            else np.asarray(self.src).reshape(shape)
        )
        return CastView(src, self.dtype)


class ChunkReader:
    """Reads flat C-order element ranges of one array-like; thread-safe."""

    def __init__(self, x):
        if isinstance(x, (NpyFile, CastView)):
            self.src, self.releaser = x, None
        else:
            x = np.asanyarray(x)
            self.releaser = _PageReleaser(x)
            # reshape(-1) is a view for contiguous arrays; others are gathered per range.
            self.src = x.reshape(-1) if x.flags.c_contiguous else x
        self.size = int(self.src.size)

    def buffer(self, n: int) -> np.ndarray | None:
        """A buffer of ``n`` elements for :meth:`read` to fill, where reading copies (a file
        read in order); ``None`` where a read is a view or a conversion anyway."""
        f = self.src
        if isinstance(f, NpyFile) and not f.fortran_order and f.data is None:
            return np.empty(n, dtype=f.stored_dtype)
        return None

    def read(self, lo: int, hi: int, out: np.ndarray | None = None) -> np.ndarray:
        """Elements ``[lo, hi)`` in C order and machine byte order; into ``out`` (from
        :meth:`buffer`, of this reader) where that is not ``None``. The result is valid until
        ``out`` is filled again."""
        f = self.src
        if isinstance(f, NpyFile):
            return f.read(lo, hi, out)
        if isinstance(f, CastView):
            return f.read(lo, hi)
        if f.ndim == 1:
            return as_native(np.asarray(f[lo:hi]))
        return as_native(np.asarray(f[np.unravel_index(np.arange(lo, hi), f.shape)]))

    def take(self, flat) -> np.ndarray:
        """The elements at C-order flat indices ``flat``."""
        f = self.src
        if isinstance(f, (NpyFile, CastView)):
            return f.take(flat)
        flat = np.asarray(flat, dtype=np.int64)
        if f.ndim == 1:
            return as_native(np.asarray(f[flat]))
        return as_native(np.asarray(f[np.unravel_index(flat, f.shape)]))

    def release(self, lo: int, hi: int) -> None:
        if self.releaser is not None:
            self.releaser.release(lo, hi)


def unravel(flat: int, shape: tuple) -> list[int]:
    """The index in an array of ``shape`` of C-order flat index ``flat`` (``0 <= flat < size``),
    as ``np.unravel_index`` gives it, in Python ints: what a report shows of one element,
    without numpy's cost per call (microseconds, a few times per pair)."""
    if len(shape) == 1:  # most dumps are flat: the index is the flat one
        return [flat]
    index = []
    for d in reversed(shape):
        flat, i = divmod(flat, d)
        index.append(i)
    index.reverse()
    return index


def chunk_ranges(n: int, chunk: int = CHUNK) -> list[tuple[int, int]]:
    return [(lo, min(lo + chunk, n)) for lo in range(0, n, chunk)]


def on_threads(work, ranges: list[tuple[int, int]], jobs: int) -> list:
    """``work(part)`` of each of ``jobs`` interleaved parts of ``ranges`` (all of them in one part
    for ``jobs=1``), the parts on threads of their own; the results in part order."""
    jobs = max(1, min(jobs, len(ranges)))
    if jobs == 1:
        return [work(ranges)]
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        return list(pool.map(work, [ranges[i::jobs] for i in range(jobs)]))
    finally:
        # not waiting matters on ctrl+c: the interrupt must not sit behind the other threads' work
        pool.shutdown(wait=False, cancel_futures=True)


def iter_chunks(*arrays, chunk: int = CHUNK) -> Iterator[tuple[int, tuple[np.ndarray, ...]]]:
    """Yield ``(offset, (chunk_a, chunk_b, ...))`` over arrays of equal size, in C order.

    Each array may be an ``ndarray`` (any layout), a memory map, or an :class:`NpyFile`.
    Chunks are views or fresh reads, never copies of a whole array.
    """
    readers = [ChunkReader(x) for x in arrays]
    n = readers[0].size
    if any(r.size != n for r in readers):
        raise ValueError("arrays differ in element count")
    for lo, hi in chunk_ranges(n, chunk):
        yield lo, tuple(r.read(lo, hi) for r in readers)
        for r in readers:
            r.release(lo, hi)
