"""Indexing datadump .npy folders: name parsing, normalisation, mapping.csv, duplicates, iterations."""

import os

import numpy as np
import pytest
from gefixtures import DEFAULT_TIMESTAMP, dump_name, write_dump
from hypothesis import given
from hypothesis import strategies as st

from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.datadump import DumpIndex, normalise_name, parse_dump_name, resolve_name

A = np.arange(6, dtype=np.float16).reshape(2, 3)


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # {type}.{name}.{task}.{stream}.{timestamp}: msaccucmp convert without -f
        ("Add.Add_1.45.0.1675157077183551.output.0.npy", ("Add", "Add_1", "output", 0, 1675157077183551)),
        (
            "AscBackend.autofuse_28_Pow_RealDiv_Square.3.44.1783906987170021.output.0.npy",
            ("AscBackend", "autofuse_28_Pow_RealDiv_Square", "output", 0, 1783906987170021),
        ),
        # FFTS+: stream, task, timestamp, task type, context, thread, device
        (
            "Add.partition0_rank1_Add.0.3.1673383728093446.4.1.0.0.input.12.npy",
            ("Add", "partition0_rank1_Add", "input", 12, 1673383728093446),
        ),
        # adump dump stream: dumpNumber, task, stream, timestamp, FFTSPLUS, ctx, thread, device
        (
            "Mul.m-1.7.3.2.1700000000000001.FFTSPLUS.0.1.0.output.1.npy",
            ("Mul", "m-1", "output", 1, 1700000000000001),
        ),
        # exception dump: task, timestamp
        ("Cast.c.3.1700000000000002.output.0.npy", ("Cast", "c", "output", 0, 1700000000000002)),
        # convert -f FORMAT appends the shape
        (
            "Add.Add_1.45.0.1675157077183551.output.0.1x16x4x4.npy",
            ("Add", "Add_1", "output", 0, 1675157077183551),
        ),
        ("Add.Add_1.45.0.1675157077183551.output.0.7.npy", ("Add", "Add_1", "output", 0, 1675157077183551)),
        ("Add.Add_1.45.0.1675157077183551.output.0..npy", ("Add", "Add_1", "output", 0, 1675157077183551)),
        # no .npy (a mapping.csv value of a raw dump), equal-length numbers: the last one
        ("Add.a.1.2.output.3", ("Add", "a", "output", 3, 2)),
    ],
)
def test_parse_dump_names(name, expected):
    f = parse_dump_name(name)
    assert (f.op_type, f.op_name, f.io, f.index, f.timestamp) == expected


@pytest.mark.parametrize(
    "name",
    [
        "foo.npy",
        "Add.Add_1.output.0.npy",  # no ids at all
        "Add.Add_1.abc.output.0.npy",  # no numeric field
        "Add.Add_1.1.output.x.npy",
        "Add.Add_1.1.result.0.npy",
        "Add.Add_1.1.output.0.1y2.npy",
        "Add..1.output.0.npy",
        "Add.a b.1.output.0.npy",
        "Add.Add_1.1.output.０.npy",  # full-width digit: not an index
        "e0a8d12f6c2b3e8f9d2a4b6c8e0f1a2b.npy",
    ],
)
def test_unparseable_names(name):
    assert parse_dump_name(name) is None


@given(
    st.lists(
        st.sampled_from(
            ["Add", "a_b", "1", "17", "1783906987170021", "input", "output", "", "x", "2x3", "-", "npy", "０"]
        ),
        max_size=9,
    )
)
def test_parser_never_raises(fields):
    parsed = parse_dump_name(".".join(fields) + ".npy")
    assert parsed is None or (parsed.io in ("input", "output") and parsed.index >= 0)


@pytest.mark.parametrize(
    ("graph_name", "file_name"),
    [("a/b.c d\\e", "a_b_c_d_e"), ("plain_Name-1", "plain_Name-1"), ("x:y", "x:y")],
)
def test_normalise_name(graph_name, file_name):
    assert normalise_name(graph_name) == file_name


def test_resolve_name_through_mapping():
    mapping = {
        "0123abcd.npy": "Add.Add_1.1.2.1700000000000000.output.0.npy",
        "42": "Mul.m.1.2.1700000000000003",
    }
    assert resolve_name("0123abcd.npy", mapping).op_name == "Add_1"
    f = resolve_name("42.input.1.npy", mapping)
    assert (f.op_type, f.op_name, f.io, f.index, f.timestamp) == ("Mul", "m", "input", 1, 1700000000000003)
    assert resolve_name("43.input.1.npy", mapping) is None
    assert resolve_name("0123abcd.npy", {}) is None


# --------------------------------------------------------------------------- scanning


def test_flat_folder_lookup_by_graph_name(tmp_path):
    p_out = write_dump(tmp_path, "MatMul", "layer.0/attn q", "output", 0, A)
    p_in = write_dump(tmp_path, "MatMul", "layer.0/attn q", "input", 1, A, shape_suffix=True)
    index = DumpIndex.scan(tmp_path)
    assert index.iterations == ["."] and index.iteration == "."
    assert index.skipped == []
    f = index.lookup("layer.0/attn q", "output", 0)
    assert f.path == str(p_out) and f.op_type == "MatMul" and f.op_name == "layer_0_attn_q"
    assert (f.io, f.index, f.timestamp, f.candidates) == ("output", 0, DEFAULT_TIMESTAMP, 1)
    assert index.lookup("layer.0/attn q", "input", 1).path == str(p_in)
    assert index.lookup("layer.0/attn q", "output", 1) is None
    assert index.lookup("other", "output", 0) is None
    assert np.array_equal(np.load(f.path), A)
    with pytest.raises(ValueError, match="io must be"):
        index.lookup("x", "outputs", 0)


def test_several_dumps_choose_the_latest_and_count(tmp_path):
    old = write_dump(tmp_path, "Add", "a", "output", 0, A, timestamp=1700000000000001)
    new = write_dump(tmp_path, "Add", "a", "output", 0, A, timestamp=1700000000000009, task_id=9)
    mid = write_dump(tmp_path, "Add", "a", "output", 0, A, timestamp=1700000000000005, task_id=5)
    write_dump(tmp_path, "Add", "a", "input", 0, A)
    index = DumpIndex.scan(tmp_path)
    f = index.lookup("a", "output", 0)
    assert f.path == str(new) and f.candidates == 3
    assert index.lookup("a", "input", 0).candidates == 1
    assert {g.path for g in index.files if g.candidates == 3} == {str(old), str(new), str(mid)}


def test_equal_timestamps_break_ties_by_path(tmp_path):
    write_dump(tmp_path, "Add", "a", "output", 0, A, task_id=1)
    last = write_dump(tmp_path, "Add", "a", "output", 0, A, task_id=2)
    for _ in range(3):
        f = DumpIndex.scan(tmp_path).lookup("a", "output", 0)
        assert f.path == str(last) and f.candidates == 2


def test_names_that_collide_after_normalisation_are_candidates(tmp_path):
    write_dump(tmp_path, "Add", "a/b", "output", 0, A, timestamp=1700000000000001)
    second = write_dump(tmp_path, "Add", "a.b", "output", 0, A, timestamp=1700000000000002)
    f = DumpIndex.scan(tmp_path).lookup("a b", "output", 0)
    assert f.path == str(second) and f.candidates == 2


def test_long_names_through_mapping_csv(tmp_path):
    long_name = "scope/" * 50 + "Add_1"
    path = write_dump(tmp_path, "Add", long_name, "output", 0, A)
    assert len(path.name) < 64 and (tmp_path / "mapping.csv").exists()
    forced = write_dump(tmp_path, "Mul", "short", "input", 0, A, mapped=True)
    index = DumpIndex.scan(tmp_path)
    f = index.lookup(long_name, "output", 0)
    assert f.path == str(path) and f.op_name == normalise_name(long_name)
    assert index.lookup("short", "input", 0).path == str(forced)
    assert index.skipped == []


def test_raw_number_names_through_mapping_csv(tmp_path):
    (tmp_path / "mapping.csv").write_text("17, Add.very_long_name.1.2.1700000000000000\n\nbroken-row\n")
    np.save(tmp_path / "17.output.0.npy", A)
    f = DumpIndex.scan(tmp_path).lookup("very_long_name", "output", 0)
    assert f is not None and f.path == str(tmp_path / "17.output.0.npy")


def test_stray_files_are_skipped_not_fatal(tmp_path):
    write_dump(tmp_path, "Add", "a", "output", 0, A)
    np.save(tmp_path / "notes.npy", A)
    np.save(tmp_path / "abcdef0123.npy", A)  # looks mapped, but no mapping.csv row
    (tmp_path / "Add.a.3.44.1783906987170021.l1buffer.0.bin").write_bytes(b"")
    (tmp_path / "Opdebug.Node_OpDebug.0.3.1673383728094391.output.0.json").write_text("{}")
    index = DumpIndex.scan(tmp_path)
    assert sorted(os.path.basename(p) for p in index.skipped) == ["abcdef0123.npy", "notes.npy"]
    assert [f.op_name for f in index.files] == ["a"]


def test_iteration_folders_default_to_the_highest_data_index(tmp_path):
    base = tmp_path / "20260101120000" / "0" / "resnet" / "1"
    for data_index, value in (("2", 2), ("10", 10), ("9", 9)):
        write_dump(base / data_index, "Add", "a", "output", 0, np.full(3, value, np.float32))
    index = DumpIndex.scan(tmp_path)
    prefix = "20260101120000/0/resnet/1/"
    assert index.iterations == [prefix + "2", prefix + "9", prefix + "10"]
    assert index.iteration == prefix + "10"
    assert np.load(index.lookup("a", "output", 0).path)[0] == 10
    assert DumpIndex.scan(tmp_path, iteration="2").iteration == prefix + "2"
    assert DumpIndex.scan(tmp_path, iteration=prefix + "9").iteration == prefix + "9"
    assert np.load(DumpIndex.scan(tmp_path, iteration="9").lookup("a", "output", 0).path)[0] == 9


def test_numeric_subfolders_and_mapping_per_folder(tmp_path):
    write_dump(tmp_path / "0", "Add", "x" * 300, "output", 0, A)
    write_dump(tmp_path / "1", "Add", "x" * 300, "output", 0, A)
    for it in ("0", "1"):
        f = DumpIndex.scan(tmp_path, iteration=it).lookup("x" * 300, "output", 0)
        assert f is not None and os.path.dirname(f.path) == str(tmp_path / it)


def test_unknown_and_ambiguous_iteration(tmp_path):
    write_dump(tmp_path / "a" / "1", "Add", "x", "output", 0, A)
    write_dump(tmp_path / "b" / "1", "Add", "x", "output", 0, A)
    with pytest.raises(InputError, match=r"no iteration folder '7' \(available: a/1, b/1\)") as err:
        DumpIndex.scan(tmp_path, iteration="7")
    assert err.value.code == "DATA_LOAD_ERROR"
    with pytest.raises(InputError, match="several iteration folders named '1'"):
        DumpIndex.scan(tmp_path, iteration="1")
    assert DumpIndex.scan(tmp_path, iteration="b/1").iteration == "b/1"


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda p: p / "missing", "folder does not exist"),
        (lambda p: (p / "f.npy").write_bytes(b"") or p / "f.npy", "is a file"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "holds no dump files"),
    ],
)
def test_bad_folders_are_input_errors(tmp_path, make, needle):
    path = make(tmp_path)
    with pytest.raises(InputError) as err:
        DumpIndex.scan(path)
    assert err.value.code == "DATA_LOAD_ERROR"
    assert str(err.value).startswith(str(path)) and needle in str(err.value)


def test_dump_name_fixture_matches_the_parser():
    name = dump_name("Conv2D", "net/conv 1", "input", 2, timestamp=1234567890123456, shape=(1, 2))
    assert name == "Conv2D.net_conv_1.3.44.1234567890123456.input.2.1x2.npy"
    f = parse_dump_name(name)
    assert (f.op_name, f.io, f.index, f.timestamp) == ("net_conv_1", "input", 2, 1234567890123456)
