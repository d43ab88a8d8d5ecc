"""Raw Ascend dump files: header decoding, payloads mapped in place, damaged files as statuses."""

import struct

import ml_dtypes
import numpy as np
import pytest

from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.dump_data import message_classes
from fpinspect.dumps.formats.rawdump import (
    RawPayload,
    read_raw_header,
    tensor_array,
    tensor_file,
    write_raw_dump,
)


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def _field(number: int, payload: bytes) -> bytes:  # a length-delimited field
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _hand_encoded() -> tuple[bytes, bytes]:
    """(header, whole file) encoded by hand from the documented numbers (§2.2), not by fpinspect's schema."""
    shape = _field(1, _varint(2) + _varint(3))  # Shape.dim = [2, 3], packed
    original_op = (
        _field(1, b"Add_2") + bytes([0x10, 1]) + bytes([0x20, 29])
    )  # name, output_index 1, FRACTAL_NZ
    output = (
        bytes([0x08, 2, 0x10, 3])
        + _field(3, shape)
        + _field(4, original_op)  # DT_FLOAT16, NC1HWC0
        + bytes([0x30, 12])
        + _field(7, shape)
        + bytes([0x40, 4])
    )  # size 12, original_shape, sub_format 4
    header = _field(1, b"2.0") + bytes([0x10, 77]) + _field(3, output) + _field(6, b"fused")
    return header, struct.pack("<Q", len(header)) + header + np.arange(6, dtype=np.float16).tobytes()


def test_documented_field_numbers_decode():
    header, _ = _hand_encoded()
    msg = message_classes()["DumpData"].FromString(header)
    assert (msg.version, msg.dump_time, msg.op_name) == ("2.0", 77, "fused")
    out = msg.output[0]
    assert (out.data_type, out.format, list(out.shape.dim), out.size, out.sub_format) == (2, 3, [2, 3], 12, 4)
    assert (out.original_op.name, out.original_op.output_index, out.original_op.format) == ("Add_2", 1, 29)


def test_hand_encoded_file_reads(tmp_path):
    path = tmp_path / "AscBackend.fused.3.44.1700000000000001"
    path.write_bytes(_hand_encoded()[1])
    dump = read_raw_header(path)
    t = dump.outputs[0]
    assert (t.dtype, t.layout, t.shape, t.original_shape) == ("DT_FLOAT16", "NC1HWC0:4", (2, 3), (2, 3))
    assert t.original_op == ("Add_2", 1) and t.original_format == "FRACTAL_NZ"
    assert np.array_equal(tensor_array(str(path), t), np.arange(6, dtype=np.float16).reshape(2, 3))


def test_round_trip_maps_payloads_in_place(tmp_path):
    path = tmp_path / "Mul.mul.1.0.1700000000000001"
    a = np.arange(2 * 1 * 3 * 3 * 16, dtype=np.float16).reshape(2, 1, 3, 3, 16)
    b = np.linspace(-1, 1, 6, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    c = np.array([[1, -2], [3, 4]], dtype=np.int32)
    write_raw_dump(
        path,
        "mul",
        [RawPayload(a, "DT_FLOAT16", "NC1HWC0", (2, 5, 3, 3)), RawPayload(b, "DT_BF16", "ND")],
        [RawPayload(c, "DT_INT32", "ND", original_op=("orig", 2), original_format="NCHW")],
        dump_time=123,
    )
    dump = read_raw_header(path)
    assert (dump.op_name, dump.version, dump.dump_time) == ("mul", "2.0", 123)
    assert [t.io for t in dump.inputs + dump.outputs] == ["input", "input", "output"]
    assert dump.inputs[0].original_shape == (2, 5, 3, 3) and dump.inputs[1].original_shape is None
    assert dump.outputs[0].original_op == ("orig", 2) and dump.outputs[0].original_format == "NCHW"
    mapped = tensor_array(str(path), dump.inputs[0])
    assert isinstance(mapped, np.memmap) and np.array_equal(mapped, a)
    bf = tensor_array(str(path), dump.inputs[1])
    assert bf.dtype == ml_dtypes.bfloat16 and np.array_equal(bf.astype(np.float32), b)
    reader = tensor_file(str(path), dump.outputs[0])
    assert np.array_equal(reader.read(0, reader.size).reshape(2, 2), c)
    desc = dump.inputs[0].desc()
    assert (desc.layout, desc.shape, desc.origin_shape, desc.dtype) == (
        "NC1HWC0",
        a.shape,
        (2, 5, 3, 3),
        "DT_FLOAT16",
    )


def test_buffers_and_workspaces_follow_the_tensors(tmp_path):
    header = message_classes()["DumpData"](op_name="x")
    out = header.output.add(data_type=1, format=2, size=8)
    out.shape.dim.extend([2])
    header.buffer.add(size=5)
    header.space.add(size=3)
    blob = header.SerializeToString()
    path = tmp_path / "Relu.x.1.1.1700000000000001"
    path.write_bytes(
        struct.pack("<Q", len(blob)) + blob + np.array([1.5, 2.5], np.float32).tobytes() + b"B" * 8
    )
    dump = read_raw_header(path)
    assert (dump.buffer_bytes, dump.workspace_bytes) == (5, 3)
    assert tensor_array(str(path), dump.outputs[0]).tolist() == [1.5, 2.5]


def _good(tmp_path) -> bytes:
    path = tmp_path / "good"
    write_raw_dump(path, "op", [], [RawPayload(np.ones((4, 4), np.float32), "DT_FLOAT", "ND")])
    return path.read_bytes()


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        (lambda blob: blob[:-3], "add up to"),  # truncated payload
        (lambda blob: blob + b"\0", "add up to"),  # trailing bytes
        (lambda blob: struct.pack("<Q", 1 << 40) + blob[8:], "header length says"),  # oversized header
        (lambda blob: blob[:5], "too short"),
        (lambda blob: b"", "too short"),
        (
            lambda blob: struct.pack("<Q", 6) + b"\xff\xff\xff\xff\xff\xff" + blob,
            "not a DumpData",
        ),  # garbage header
    ],
)
def test_damaged_files_are_raw_load_errors(tmp_path, damage, needle):
    path = tmp_path / "Add.add.1.0.1700000000000001"
    path.write_bytes(damage(_good(tmp_path)))
    with pytest.raises(InputError) as err:
        read_raw_header(path)
    assert err.value.code == "RAW_LOAD_ERROR" and needle in str(err.value) and str(path) in str(err.value)


def test_random_garbage_never_crashes(tmp_path):
    rng = np.random.default_rng(0)
    for i in range(200):
        path = tmp_path / f"g{i}"
        path.write_bytes(rng.integers(0, 256, int(rng.integers(0, 200)), dtype=np.uint8).tobytes())
        try:
            dump = read_raw_header(path)
        except InputError as exc:
            assert exc.code == "RAW_LOAD_ERROR"
            continue
        for t in dump.inputs + dump.outputs:  # a header that happens to decode and add up
            try:
                tensor_array(str(path), t)
            except InputError as exc:
                assert exc.code == "RAW_LOAD_ERROR"


def test_a_shape_that_disagrees_with_the_size_is_a_status(tmp_path):
    header = message_classes()["DumpData"](op_name="x")
    out = header.output.add(data_type=1, format=2, size=8)
    out.shape.dim.extend([3])  # 3 float32 need 12 bytes
    blob = header.SerializeToString()
    path = tmp_path / "Relu.x.1.1.1700000000000001"
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(8))
    dump = read_raw_header(path)
    with pytest.raises(InputError, match="needs 12 bytes") as err:
        tensor_array(str(path), dump.outputs[0])
    assert err.value.code == "RAW_LOAD_ERROR"


def test_scalars_and_empty_tensors_keep_their_shapes(tmp_path):
    path = tmp_path / "Add.add.1.0.1700000000000001"
    write_raw_dump(
        path,
        "add",
        [RawPayload(np.array(3.5, np.float16), "DT_FLOAT16", "ND")],
        [RawPayload(np.zeros((0, 3), np.float32), "DT_FLOAT", "ND")],
    )
    dump = read_raw_header(path)
    assert dump.inputs[0].shape == () and tensor_array(str(path), dump.inputs[0]) == np.float16(3.5)
    assert tensor_array(str(path), dump.outputs[0]).shape == (0, 3)
