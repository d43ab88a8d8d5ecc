"""Read raw Ascend dump files, as the device writes them, without CANN (``ascend_formats.md`` §2.2).

A raw dump file holds every tensor of one op execution::

    uint64 little-endian  header length L
    L bytes               toolkit.dump.DumpData (the header, :mod:`.dump_data`)
    payload               the bytes of every input, then output, buffer, workspace, in order

Each ``input``/``output`` entry of the header gives its ``size`` in bytes, ``data_type``,
``format`` (the storage layout), ``shape`` (the storage shape), ``original_shape`` and, for
outputs, ``original_op`` (the op and output a fused output stands for). Payloads are never
read here: :func:`tensor_file` / :func:`tensor_array` read or memory-map them in place.

A file whose sizes do not add up (``8 + L + Σ sizes != file size``), whose header length
overruns the file or whose header is not a ``DumpData`` raises :class:`InputError` with code
``RAW_LOAD_ERROR`` (the raw sibling of ``NPY_LOAD_ERROR``).
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass

import numpy as np

from ...numerics.chunks import NpyFile
from ...numerics.dtypes import dtype_of
from ..errors import InputError
from .dump_data import FORMATS, message_classes
from .ge_decode import TensorDesc
from .ge_types import GE_DTYPES, numpy_dtype_name
from .npyio import open_regular

RAW_LOAD_ERROR = "RAW_LOAD_ERROR"
HEADER_LENGTH_BYTES = 8
#: Headers describe a few dozen tensors; anything this large is a damaged or foreign file.
MAX_HEADER = 64 << 20

#: numpy dtypes whose elements take less than a byte on the device (packed) but a whole
#: byte in numpy: their payloads cannot be mapped element for element.
_PACKED = frozenset({"int2", "int4", "uint1", "uint2", "float4_e2m1fn"})


@dataclass(frozen=True)
class RawTensor:
    """One input or output of a raw dump file, described by its header entry.

    ``dtype`` is the GE name (``"DT_FLOAT16"``); ``layout`` the storage layout as GE's graphs
    spell it, with ``":<sub_format>"`` when a sub-format is set (``"FRACTAL_Z:16"``);
    ``shape`` the storage shape, ``original_shape`` the origin shape (``None`` if absent).
    ``original_op`` is ``(name, output_index)`` of the original output (outputs only,
    ``None`` if absent). ``offset`` and ``size`` locate the payload in the file (bytes).
    """

    io: str
    index: int
    dtype: str
    layout: str
    shape: tuple[int, ...]
    original_shape: tuple[int, ...] | None
    original_op: tuple[str, int] | None
    original_format: str | None
    offset: int
    size: int

    def desc(self, graph: TensorDesc | None = None) -> TensorDesc:
        """The :class:`TensorDesc` to convert this payload with: what the header says (the
        device wrote it: dtype, storage layout and shape, original shape, the original op's
        format as origin format), the rest from ``graph``'s description."""
        name, _, sub = self.layout.partition(":")
        origin_format = self.original_format or (graph.origin_format if graph else None)
        return TensorDesc(
            dtype=self.dtype,
            shape=self.shape,
            layout=name,
            subformat=int(sub) if sub else None,
            origin_format=origin_format,
            origin_shape=self.original_shape
            if self.original_shape is not None
            else (graph.origin_shape if graph else None),
            attrs=graph.attrs if graph else {},
        )


@dataclass(frozen=True)
class RawDump:
    """The header of one raw dump file: its tensors and the size of everything else."""

    path: str
    op_name: str
    version: str
    dump_time: int
    inputs: list[RawTensor]
    outputs: list[RawTensor]
    buffer_bytes: int
    workspace_bytes: int

    def tensor(self, io: str, index: int) -> RawTensor | None:
        tensors = self.inputs if io == "input" else self.outputs
        return tensors[index] if 0 <= index < len(tensors) else None


def _layout(number: int, sub_format: int) -> str:
    """Layout name of an ``OutputFormat`` value. Runtimes may pass GE's full format int:
    byte 0 is the primary format, bytes 1-2 the sub-format (``ascend_formats.md`` §3.1)."""
    primary, packed_sub = number & 0xFF, (number >> 8) & 0xFFFF
    name = FORMATS.get(primary, f"FORMAT_{primary}")
    sub = sub_format or packed_sub
    return f"{name}:{sub}" if sub else name


def _shape(msg, present: bool) -> tuple[int, ...] | None:
    return tuple(int(d) for d in msg.dim) if present else None


def _tensors(entries, io: str, start: int, path: str) -> tuple[list[RawTensor], int]:
    out, offset = [], start
    for index, e in enumerate(entries):
        if e.data:
            raise InputError(
                path,
                f"holds {io} {index} inline in its header (an old raw format fpinspect does "
                "not read); convert it with 'msaccucmp.py convert'",
                RAW_LOAD_ERROR,
            )
        original_op = original_format = None
        if io == "output" and e.HasField("original_op") and e.original_op.name:
            original_op = (e.original_op.name, int(e.original_op.output_index))
            original_format = FORMATS.get(e.original_op.format)
        out.append(
            RawTensor(
                io=io,
                index=index,
                dtype=GE_DTYPES.get(e.data_type, f"DT_{e.data_type}"),
                layout=_layout(e.format, e.sub_format),
                shape=_shape(e.shape, True),
                original_shape=_shape(e.original_shape, e.HasField("original_shape")),
                original_op=original_op,
                original_format=original_format,
                offset=offset,
                size=int(e.size),
            )
        )
        offset += int(e.size)
    return out, offset


def read_raw_header(path: str | os.PathLike) -> RawDump:
    """Read and check the header of the raw dump file at ``path`` (payloads are not read).

    Raises :class:`InputError`: ``FILE_NOT_FOUND`` if there is no such file,
    ``RAW_LOAD_ERROR`` if it is too short, its header length overruns the file, the header
    does not decode as ``DumpData``, or the sizes it lists do not add up to the file size.
    """
    path = os.fspath(path)
    try:
        f = open_regular(path, "raw dump file")  # never blocks on a FIFO named like a dump
    except InputError as exc:
        code = exc.code if exc.code == "FILE_NOT_FOUND" else RAW_LOAD_ERROR
        raise InputError(path, exc.problem, code) from None
    try:
        total = os.fstat(f.fileno()).st_size
        with f:
            head = f.read(HEADER_LENGTH_BYTES)
            if len(head) < HEADER_LENGTH_BYTES:
                raise InputError(
                    path, f"is too short to be a raw dump ({total} bytes, no header length)", RAW_LOAD_ERROR
                )
            (length,) = struct.unpack("<Q", head)
            if length > total - HEADER_LENGTH_BYTES or length > MAX_HEADER:
                raise InputError(
                    path,
                    f"is not a raw dump: its header length says {length} bytes, but only "
                    f"{total - HEADER_LENGTH_BYTES} follow",
                    RAW_LOAD_ERROR,
                )
            header = f.read(length)
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})", RAW_LOAD_ERROR) from None
    from google.protobuf.message import DecodeError  # here: only raw dumps need protobuf

    try:
        data = message_classes()["DumpData"].FromString(header)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InputError(
            path, f"is not a raw dump: its header is not a DumpData message ({exc})", RAW_LOAD_ERROR
        ) from None
    start = HEADER_LENGTH_BYTES + length
    inputs, offset = _tensors(data.input, "input", start, path)
    outputs, offset = _tensors(data.output, "output", offset, path)
    buffers = sum(int(b.size) for b in data.buffer)
    workspaces = sum(int(w.size) for w in data.space)
    expected = offset + buffers + workspaces
    if expected != total:
        raise InputError(
            path,
            f"is damaged or not a raw dump: header and payloads add up to {expected} bytes "
            f"({len(inputs)} inputs, {len(outputs)} outputs, {buffers} buffer and {workspaces} workspace bytes), "
            f"the file has {total}",
            RAW_LOAD_ERROR,
        )
    return RawDump(
        path, data.op_name, data.version, int(data.dump_time), inputs, outputs, buffers, workspaces
    )


def _checked_dtype(path: str, t: RawTensor) -> np.dtype:
    name = numpy_dtype_name(t.dtype)
    if name is None or name in _PACKED:
        raise InputError(
            path, f"{t.io} {t.index} is {t.dtype}, which fpinspect cannot read as an array", RAW_LOAD_ERROR
        )
    dtype = dtype_of(name)
    expected = math.prod(t.shape) * dtype.itemsize  # exact: an int64 product can wrap to the size
    if expected != t.size:
        raise InputError(
            path,
            f"{t.io} {t.index}: shape {list(t.shape)} of {t.dtype} needs {expected} bytes, "
            f"the header gives it {t.size}",
            RAW_LOAD_ERROR,
        )
    return dtype


def tensor_file(path: str, t: RawTensor) -> NpyFile:
    """A chunked reader of tensor ``t``'s payload in the file (nothing is read yet)."""
    return NpyFile(path, t.shape, _checked_dtype(path, t), False, t.offset)


def tensor_array(path: str, t: RawTensor) -> np.ndarray:
    """Tensor ``t`` memory-mapped read-only in place (an empty array if it has no elements)."""
    dtype = _checked_dtype(path, t)
    if t.size == 0:
        return np.empty(t.shape, dtype=dtype)
    try:
        return np.memmap(path, dtype=dtype, mode="r", offset=t.offset, shape=t.shape)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot be mapped ({exc})", RAW_LOAD_ERROR) from None


@dataclass(frozen=True)
class RawPayload:
    """One tensor to write into a raw dump: ``array`` in its storage layout and shape.

    ``dtype`` is the GE dtype name; the array is written in that type (a float32 array of
    ``DT_BF16`` values is narrowed, exactly, to bfloat16 bytes as a device holds them).
    """

    array: np.ndarray
    dtype: str
    layout: str
    original_shape: tuple[int, ...] | None = None
    original_op: tuple[str, int] | None = None
    original_format: str | None = None


def _fill(entry, p: RawPayload, data: np.ndarray) -> None:
    from .dump_data import FORMAT_NUMBERS

    name, _, sub = p.layout.partition(":")
    entry.data_type = {v: k for k, v in GE_DTYPES.items()}[p.dtype]
    entry.format = FORMAT_NUMBERS[name]
    if sub:
        entry.sub_format = int(sub)
    entry.shape.dim.extend(int(d) for d in data.shape)
    entry.size = data.nbytes
    if p.original_shape is not None:
        entry.original_shape.SetInParent()
        entry.original_shape.dim.extend(int(d) for d in p.original_shape)
    if p.original_op is not None:
        entry.original_op.name, entry.original_op.output_index = p.original_op[0], p.original_op[1]
        entry.original_op.data_type = entry.data_type
        entry.original_op.format = FORMAT_NUMBERS[p.original_format or name]


def write_raw_dump(
    path: str | os.PathLike,
    op_name: str,
    inputs: list[RawPayload],
    outputs: list[RawPayload],
    *,
    dump_time: int = 0,
) -> None:
    """Write one raw dump file as the device does (the format :func:`read_raw_header` reads)."""
    header = message_classes()["DumpData"](version="2.0", dump_time=dump_time, op_name=op_name)
    arrays = []
    for entries, payloads in ((header.input, inputs), (header.output, outputs)):
        for p in payloads:
            # order="C", not np.ascontiguousarray: that one makes a 0-d array 1-d
            data = np.asarray(p.array, dtype=dtype_of(numpy_dtype_name(p.dtype)), order="C")
            _fill(entries.add(), p, data)
            arrays.append(data)
    blob = header.SerializeToString()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for data in arrays:
            data.tofile(f)
