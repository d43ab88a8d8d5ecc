"""Raw dump files in dump folders: indexed like .npy files, headers over the graph, damage as statuses."""

import struct

import numpy as np
from gefixtures import GraphBuilder, tensor, write_dump

from fpinspect.dumps.engine.compare import DumpComparison
from fpinspect.dumps.formats.datadump import DumpIndex
from fpinspect.dumps.formats.layouts import pack_layout
from fpinspect.dumps.formats.rawdump import RawPayload, write_raw_dump

TS = 1700000000000001


def _raw(folder, op_type, name, outputs, *, ts=TS, file_name=None, inputs=()):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (file_name or f"{op_type}.{name}.3.44.{ts}")
    write_raw_dump(path, name, list(inputs), outputs)
    return path


def _pair(tmp_path, names="ABCD"):
    """Fused op F: output i stands for Mul op names[i]; both graphs say ND float16 of 4 elements."""
    outs = [tensor([4], origin_name=n, origin_index=0) for n in names]
    on = GraphBuilder().op("x", "Data", outputs=[tensor([4])])
    on.fused("F", inputs=["x:0"], outputs=outs, original=[(n, "Mul") for n in names])
    off = GraphBuilder().op("x", "Data", outputs=[tensor([4])])
    for n in names:
        off.op(n, "Mul", inputs=["x:0"], outputs=[tensor([4])])
    on.write(tmp_path / "on.json")
    off.write(tmp_path / "off.json")
    return tmp_path / "open", tmp_path / "close"


def _compare(tmp_path):
    return DumpComparison(
        str(tmp_path / "on.json"), str(tmp_path / "off.json"), str(tmp_path / "open"), str(tmp_path / "close")
    ).run()


H = np.arange(4, dtype=np.float16)


def test_raw_and_npy_folders_mix_and_damage_is_a_status_per_op(tmp_path):
    open_dir, close_dir = _pair(tmp_path)
    _raw(open_dir, "AscBackend", "F", [RawPayload(H, "DT_FLOAT16", "ND") for _ in range(4)])
    write_dump(close_dir, "Mul", "A", "output", 0, H)  # a converted .npy beside raw files
    _raw(close_dir, "Mul", "B", [RawPayload(H, "DT_FLOAT16", "ND")])
    c = _raw(close_dir, "Mul", "C", [RawPayload(H, "DT_FLOAT16", "ND")])
    c.write_bytes(c.read_bytes()[:-2])  # truncated
    d = _raw(close_dir, "Mul", "D", [RawPayload(H, "DT_FLOAT16", "ND")])
    d.write_bytes(struct.pack("<Q", 1 << 33) + d.read_bytes()[8:])  # oversized header length
    (close_dir / f"Mul.E.3.44.{TS}").write_bytes(b"\x00garbage" * 3)  # not a raw dump at all
    report = _compare(tmp_path)
    got = {r.plan.origin_op: r for r in report.records}
    assert got["A"].status == ["OK"] and got["B"].status == ["OK"] and got["A"].result.max_abs == 0
    assert got["C"].status == ["RAW_LOAD_ERROR"] and "add up" in got["C"].to_json()["message"]
    assert got["D"].status == ["RAW_LOAD_ERROR"] and "header length" in got["D"].to_json()["message"]
    assert report.summary().statuses["RAW_LOAD_ERROR"] == 2


def test_header_layout_and_shapes_win_over_the_graph(tmp_path):
    """The graph says ND (4,); the device dumped NC1HWC0 with the original shape: restored and cropped."""
    open_dir, close_dir = _pair(tmp_path, "A")
    nchw = np.random.default_rng(0).standard_normal((1, 4, 1, 1)).astype(np.float16)
    packed = pack_layout(nchw, "NCHW", "NC1HWC0")  # 4 channels padded to 16
    packed[..., 4:] = 9  # padding garbage must be cropped away
    _raw(
        open_dir,
        "AscBackend",
        "F",
        [RawPayload(packed, "DT_FLOAT16", "NC1HWC0", nchw.shape, ("A", 0), "NCHW")],
    )
    _raw(close_dir, "Mul", "A", [RawPayload(nchw.reshape(4), "DT_FLOAT16", "ND")])
    rec = _compare(tmp_path).records[0]
    assert "FORMAT_CONVERTED" in rec.status and rec.result.max_abs == 0
    assert "NC1HWC0->NCHW" in rec.conversion


def test_raw_files_named_by_number_resolve_through_mapping_csv(tmp_path):
    folder = tmp_path / "d"
    long_name = "a" * 300
    _raw(folder, "Add", long_name, [RawPayload(H, "DT_FLOAT16", "ND")], file_name="17")
    (folder / "mapping.csv").write_text(f"17,Add.{long_name}.3.44.{TS}\n", encoding="utf-8")
    f = DumpIndex.scan(folder).lookup(long_name, "output", 0)
    assert f is not None and f.raw is not None and f.path.endswith("/17")


def test_later_npy_dump_beats_an_earlier_raw_one_and_both_count(tmp_path):
    folder = tmp_path / "d"
    _raw(folder, "Add", "a", [RawPayload(H, "DT_FLOAT16", "ND")], ts=TS)
    later = write_dump(folder, "Add", "a", "output", 0, H, timestamp=TS + 5)
    f = DumpIndex.scan(folder).lookup("a", "output", 0)
    assert f.path == str(later) and f.candidates == 2 and f.raw is None


def test_a_fifo_named_like_a_raw_dump_is_a_status_not_a_hang(tmp_path):
    import os

    open_dir, close_dir = _pair(tmp_path, "A")
    _raw(open_dir, "AscBackend", "F", [RawPayload(H, "DT_FLOAT16", "ND")])
    close_dir.mkdir()
    os.mkfifo(close_dir / f"Mul.A.3.44.{TS}")
    rec = _compare(tmp_path).records[0]
    assert rec.status == ["RAW_LOAD_ERROR"] and "FIFO" in rec.to_json()["message"]


def test_a_raw_header_supplies_the_mapping_the_graph_lacks(tmp_path):
    """The fusion-on graph's output desc has no _datadump_origin_name; the raw file's original_op has."""
    outs = [tensor([4])]  # no origin attributes
    on = GraphBuilder().op("x", "Data", outputs=[tensor([4])])
    on.fused("F", inputs=["x:0"], outputs=outs, original=[("A", "Mul")])
    off = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor([4])])
        .op("A", "Mul", inputs=["x:0"], outputs=[tensor([4])])
    )
    on.write(tmp_path / "on.json")
    off.write(tmp_path / "off.json")
    _raw(tmp_path / "open", "AscBackend", "F", [RawPayload(H, "DT_FLOAT16", "ND", original_op=("A", 0))])
    write_dump(tmp_path / "close", "Mul", "A", "output", 0, H)
    rec = _compare(tmp_path).records[0]
    assert (rec.plan.origin_op, rec.plan.origin_index) == ("A", 0) and rec.status == ["OK"]
