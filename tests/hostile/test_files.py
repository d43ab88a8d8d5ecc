"""Hostile and unlucky dump files: each one a sentence or a status, never a traceback or a hang."""

from __future__ import annotations

import os

import numpy as np
import numpy.lib.format as npformat
import pytest

from fpinspect.dumps.engine.pair import compare_arrays, compare_npy
from fpinspect.dumps.engine.verdict import ThresholdTable, judge
from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.layouts import convert_layout
from fpinspect.dumps.formats.layouts.registry import FormatConversionError
from fpinspect.dumps.formats.npyio import load_npy, open_npy


def _raw_header(path, header: str, version=(1, 0)) -> None:
    """A .npy file with exactly this header dict text and no data."""
    text = header.encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    body = text + b" " * pad + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes(version) + len(body).to_bytes(2, "little") + body)


def test_format_version_3_is_read(tmp_path):
    path = tmp_path / "v3.npy"
    with open(path, "wb") as f:
        npformat.write_array(f, np.arange(7, dtype=np.float16), version=(3, 0))
    assert open(path, "rb").read(8)[6:8] == b"\x03\x00"
    res = compare_npy(path, path)
    assert res.status == ["OK"] and res.max_abs == 0
    assert np.array_equal(load_npy(path), np.arange(7, dtype=np.float16))


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "Add.add.1.1700000000000000.output.0.npy"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is a FIFO"):
        open_npy(fifo)
    ok = tmp_path / "ok.npy"
    np.save(ok, np.ones(3, np.float16))
    assert compare_npy(fifo, ok).status == ["NPY_LOAD_ERROR"]


def test_links_that_go_nowhere_say_so(tmp_path):
    loop = tmp_path / "loop.npy"
    os.symlink(loop, loop)
    with pytest.raises(InputError, match="symbolic link loop"):
        open_npy(loop)
    dangling = tmp_path / "dangling.npy"
    os.symlink(tmp_path / "gone.npy", dangling)
    with pytest.raises(InputError, match="symbolic link to a file that does not exist"):
        open_npy(dangling)


@pytest.mark.parametrize(
    "shape, problem",
    [("(-2, 3)", "negative dimension"), ("(4294967296, 4294967296)", "too large"), ("(3, 'a')", "corrupt")],
)
def test_shapes_numpy_refuses_are_refused(tmp_path, shape, problem):
    path = tmp_path / "bad.npy"
    _raw_header(path, "{'descr': '<f2', 'fortran_order': False, 'shape': " + shape + ", }")
    with pytest.raises(InputError, match=problem):
        open_npy(path)


def _one_ulp_noise(dtype):
    x = np.random.default_rng(0).standard_normal(999).astype(np.float16)
    y = x.copy()
    y[::3] = np.nextafter(y[::3], np.float16(np.inf))
    return x.astype(dtype), y.astype(dtype)


def test_big_endian_floats_count_ulps_in_their_own_format(tmp_path):
    for order in ("<f2", ">f2"):
        x, y = _one_ulp_noise(order)
        np.save(tmp_path / f"x{order[0]}.npy", x)
        np.save(tmp_path / f"y{order[0]}.npy", y)
    little = compare_npy(tmp_path / "x<.npy", tmp_path / "y<.npy")
    big = compare_npy(tmp_path / "x>.npy", tmp_path / "y>.npy")
    assert big.metrics.errors.ulp == little.metrics.errors.ulp
    assert big.metrics.errors.ulp.kind == "diff" and big.metrics.errors.ulp.max == 1
    assert "DTYPE_CAST" not in big.status
    table = ThresholdTable()
    assert judge(big, table).verdict == judge(little, table).verdict == "pass"
    mixed = compare_npy(tmp_path / "x>.npy", tmp_path / "y<.npy")
    assert mixed.metrics.errors.ulp == little.metrics.errors.ulp and "DTYPE_CAST" not in mixed.status


def test_fortran_order_files_compare_in_logical_order(tmp_path):
    a = np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    b = np.ascontiguousarray(a).copy()
    b[1, 2, 3] += 1
    np.save(tmp_path / "f.npy", a)
    np.save(tmp_path / "c.npy", b)
    res = compare_npy(tmp_path / "f.npy", tmp_path / "c.npy", jobs=2)
    assert res.max_abs == 1.0
    assert res.worst[0]["index"] == [1, 2, 3]
    reader = open_npy(tmp_path / "f.npy")
    assert np.array_equal(reader.read(5, 9), np.ascontiguousarray(a).reshape(-1)[5:9])
    assert np.array_equal(reader.with_shape((24,)).read(20, 24), np.arange(20, 24, dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_integers_beyond_2_53_differ_exactly(dtype):
    big = 2**62
    a = np.array([big, 7], dtype=dtype)
    b = np.array([big + 1, 7], dtype=dtype)
    res = compare_arrays(a, b)
    assert res.metrics.mismatched == 1 and res.max_abs == 1.0
    assert judge(res, ThresholdTable()).verdict == "fail"
    assert judge(compare_arrays(a, a.copy()), ThresholdTable()).verdict == "pass"


def test_signed_against_unsigned_64_bit_integers():
    a = np.array([-1, 3], dtype=np.int64)
    b = np.array([2**64 - 1, 3], dtype=np.uint64)  # the same bits, not the same number
    res = compare_arrays(a, b)
    assert res.metrics.mismatched == 1 and res.max_abs == float(2**64)
    assert judge(res, ThresholdTable()).verdict == "fail"


@pytest.mark.parametrize(
    "layout, shape, origin",
    [("NC1HWC0", (1, 1, 2, 2, 0), (1, 3, 2, 2)), ("FRACTAL_Z", (1, 1, 16, 0), (1, 3, 1, 1))],
)
def test_zero_length_blocks_are_a_conversion_error(layout, shape, origin):
    with pytest.raises(FormatConversionError):
        convert_layout(np.zeros(shape, np.float16), layout, "NCHW", origin)
