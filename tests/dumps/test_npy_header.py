"""The .npy header as numpy writes it is read without ``ast.literal_eval``; any other spelling
goes through numpy's own parser, so both give numpy's answer (or its refusal)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats import npyio
from fpinspect.dumps.formats.npyio import open_npy

ARRAYS = [
    np.zeros(()),
    np.zeros(5, np.float16),
    np.zeros((2, 3), ">f4"),
    np.zeros((0, 4)),
    np.asfortranarray(np.zeros((3, 4))),
    np.zeros(3, "M8[ns]"),
    np.zeros(2, "U5"),
    np.zeros(2, bool),
    np.zeros(3, "V2"),
    np.zeros((1, 1, 1, 1), np.complex64),
    np.zeros((12345678901, 0), np.int8),
]


def _numpy_header(path):
    """numpy's ``(shape, fortran_order, dtype)`` of the file at ``path``, and the data offset."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        header = read[version](f) if version in read else npyio._header_v3(f)
        return (*header, f.tell())


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
@pytest.mark.parametrize("arr", ARRAYS, ids=lambda a: f"{a.dtype.str}{a.shape}")
def test_numpy_written_headers_read_without_literal_eval(tmp_path, arr, version):
    path = tmp_path / "a.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array(f, arr, version=version)
    with open(path, "rb") as f:
        head = f.read(npyio.FIRST_READ)
        fast = npyio._canonical_header(f.read, head, (head[6], head[7]))
    assert fast == _numpy_header(path)
    got = open_npy(path)
    assert (got.header_shape, got.fortran_order, got.stored_dtype, got.data_offset) == fast


def _with_header(path, text: str, data: bytes = b"\0" * 8) -> None:
    header = text.encode("latin-1")
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data)


@pytest.mark.parametrize("canonical", [True, False], ids=["numpy's spelling", "another spelling"])
@pytest.mark.parametrize("dims", [1, 1800], ids=["short header", "header beyond the first read"])
def test_data_follows_any_header(tmp_path, canonical, dims):
    """The data of a small file is what follows its header, however the header is spelled and
    however long it is (the first read of a file may end inside the header or inside the data)."""
    values = np.arange(3000, dtype="<f2")
    shape = ", ".join(["1"] * (dims - 1) + ["3000"]) + ("," if dims == 1 else "")
    text = (
        f"{{'descr': '<f2', 'fortran_order': False, 'shape': ({shape}), }}"
        if canonical
        else f'{{"shape": ({shape}), "fortran_order": False, "descr": "<f2"}}'
    )
    path = tmp_path / "d.npy"
    _with_header(path, text, values.tobytes())
    got = open_npy(path)
    assert len(got.header_shape) == dims and got.data_offset > (npyio.FIRST_READ if dims > 1 else 0)
    assert got.data.tolist() == values.tolist()


def test_other_spellings_are_numpy_s_to_parse(tmp_path):
    path = tmp_path / "b.npy"
    _with_header(path, '{"shape": (4,), "fortran_order": False, "descr": "<f2"}')  # another writer's
    got = open_npy(path)
    assert (got.header_shape, got.stored_dtype) == ((4,), np.dtype("<f2"))
    structured = tmp_path / "s.npy"
    np.save(structured, np.zeros(2, [("a", "<f4")]))
    assert open_npy(structured).stored_dtype == np.dtype([("a", "<f4")])


@pytest.mark.parametrize(
    "text",
    [
        "{'descr': '<f2', 'fortran_order': False, 'shape': (04,), }",  # not a Python literal
        "{'descr': '<q9', 'fortran_order': False, 'shape': (4,), }",  # no such dtype
    ],
)
def test_what_numpy_refuses_stays_refused(tmp_path, text):
    path = tmp_path / "c.npy"
    _with_header(path, text)
    with pytest.raises(InputError, match="corrupt .npy header"):
        open_npy(path)


@pytest.mark.parametrize("dtype", ["<f2", ">f4", "<i8"])
def test_a_small_file_is_read_whole_when_opened(tmp_path, dtype):
    """Reads and element lookups of a small file come from the one read made when it was
    opened (the file may even be gone), in C order and machine byte order; a file above
    WHOLE_READ is read range by range from disk, with the same values."""
    from fpinspect.numerics.chunks import WHOLE_READ, ChunkReader

    small = np.arange(24, dtype=dtype).reshape(4, 6)
    big = np.arange(WHOLE_READ // small.itemsize + 1, dtype=dtype)
    for arr in (small, big):
        path = tmp_path / f"{arr.size}.npy"
        np.save(path, arr)
        f = open_npy(path)
        assert (f.data is not None) == (arr is small)
        if arr is small:
            path.unlink()
        reader = ChunkReader(f)
        got = reader.read(3, 17, reader.buffer(14))
        assert got.dtype.isnative and got.tolist() == arr.reshape(-1)[3:17].tolist()
        assert reader.take([0, 5, 23]).tolist() == arr.reshape(-1)[[0, 5, 23]].tolist()


@pytest.mark.parametrize("pad", [0, 4], ids=["aligned", "data offset 4 bytes off"])
def test_data_read_with_the_header_is_aligned(tmp_path, pad):
    """A small file's data comes aligned for its dtype, whatever the data offset another writer
    chose (the compiled pass takes aligned arrays only: an unaligned one is another compile),
    and the pair compares as any other."""
    from fpinspect.dumps.engine.pair import compare_arrays

    values = np.linspace(-1, 1, 6)
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }"
    header += b" " * (-(10 + len(header) + 1) % 64 + pad) + b"\n"
    path = tmp_path / "odd.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + values.tobytes())
    got = open_npy(path)
    assert got.data_offset % 8 == pad and got.data.flags.aligned and not got.data.flags.writeable
    assert got.data.tolist() == values.tolist()
    assert compare_arrays(got, values).max_abs == 0.0
