"""Property-based fuzzing of what users feed fpinspect: graph JSON, ``.npy`` headers, file names.

The property, everywhere: a result or a documented error (exit status 0, 1 or 2 with one
``fpinspect:`` sentence), never another exception, and every pair not hit by the mutation
still compared. Fast by default; ``FPINSPECT_FUZZ_EXAMPLES=500`` digs deeper.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import string
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpinspect.cli import main
from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.datadump import DumpIndex, parse_dump_name
from fpinspect.dumps.formats.graph import load_graph
from fpinspect.dumps.formats.npyio import open_npy

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_dumps" / "regression"
REAL_GE = ROOT.parent / "shared" / "data" / "real-ge"
FUZZ = settings(
    max_examples=int(os.environ.get("FPINSPECT_FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize="FPINSPECT_FUZZ_EXAMPLES" not in os.environ,  # CI: the same cases every run
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _compare(open_graph, close_graph, open_data, close_data, *extra):
    args = [
        "compare",
        "--af-open-graph",
        str(open_graph),
        "--af-close-graph",
        str(close_graph),
        "--af-open-data",
        str(open_data),
        "--af-close-data",
        str(close_data),
        "--format",
        "json",
        "--jobs",
        "1",
        *extra,
    ]
    return CliRunner().invoke(main, args)


def _assert_documented(res) -> dict | None:
    """Exit 0/1 with a JSON report, or exit 2 with one sentence; never a traceback."""
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    assert res.exit_code in (0, 1, 2), res.output
    if res.exit_code == 2:
        assert res.output.strip().startswith("fpinspect:"), res.output
        return None
    return json.loads(res.output)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


@pytest.fixture(scope="module")
def sample_graph():
    return json.loads((SAMPLE / "dumpgraph_af_open" / "Build.json").read_text())


@pytest.fixture(scope="module")
def baseline():
    s = SAMPLE
    res = _compare(
        s / "dumpgraph_af_open/Build.json",
        s / "dumpgraph_af_close/Build.json",
        s / "datadump_af_open",
        s / "datadump_af_close",
    )
    return _assert_documented(res)


@FUZZ
@given(data=st.data())
def test_mutated_graph_json(tmp_path_factory, sample_graph, data):
    graph = copy.deepcopy(sample_graph)
    paths = [p for p in _paths(graph) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent = graph
        try:
            for k in path[:-1]:
                parent = parent[k]
            if data.draw(st.booleans()):
                parent[path[-1]] = data.draw(json_values)
            elif isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
    target = tmp_path_factory.mktemp("graph") / "Build.json"
    target.write_text(json.dumps(graph))
    try:
        load_graph(str(target))
    except InputError:
        pass
    _assert_documented(
        _compare(
            target,
            SAMPLE / "dumpgraph_af_close/Build.json",
            SAMPLE / "datadump_af_open",
            SAMPLE / "datadump_af_close",
        )
    )


@FUZZ
@given(
    cut=st.integers(0, 400),
    flips=st.lists(st.tuples(st.integers(0, 127), st.integers(0, 255)), max_size=4),
    header=st.none() | st.text(string.printable, max_size=80),
)
def test_mutated_npy_header_spoils_only_its_pair(tmp_path_factory, baseline, cut, flips, header):
    data = tmp_path_factory.mktemp("dumps") / "open"
    shutil.copytree(SAMPLE / "datadump_af_open", data)
    victim = sorted(p for p in data.iterdir() if ".output." in p.name)[0]
    raw = bytearray(victim.read_bytes())
    if header is not None:  # a header dict of anything, correctly framed
        text = header.encode("latin1", "replace")
        raw = bytearray(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text) + raw[128:]
    for at, byte in flips:
        raw[at] = byte
    if cut < len(raw) and cut % 3 == 0:
        raw = raw[:cut]
    victim.write_bytes(bytes(raw))
    try:
        open_npy(victim)
    except InputError:
        pass
    report = _assert_documented(
        _compare(
            SAMPLE / "dumpgraph_af_open/Build.json",
            SAMPLE / "dumpgraph_af_close/Build.json",
            data,
            SAMPLE / "datadump_af_close",
        )
    )
    assert report is not None
    assert len(report["records"]) == len(baseline["records"])
    for got, want in zip(report["records"], baseline["records"]):
        if got["fused_file"] is None or Path(got["fused_file"]).name != victim.name:
            assert (got["fused_op"], got["status"], got["cosine"]) == (
                want["fused_op"],
                want["status"],
                want["cosine"],
            )


name_chars = st.sampled_from(list("Aa_-.0123456789 :/é层") + ["output", "input", ".npy"])


@FUZZ
@given(names=st.lists(st.lists(name_chars, max_size=14).map("".join), min_size=1, max_size=6))
def test_any_file_names(tmp_path_factory, names):
    folder = tmp_path_factory.mktemp("names")
    for name in names:
        assert parse_dump_name(name) is None or parse_dump_name(name).index >= 0
        if not name or "/" in name or name in (".", ".."):
            continue
        np.save(
            folder / f"{name}.npy" if not name.endswith(".npy") else folder / name, np.ones(2, np.float16)
        )
    try:
        DumpIndex.scan(folder)
    except InputError:
        pass


@pytest.mark.skipif(not REAL_GE.is_dir(), reason="needs ../shared/data/real-ge beside the checkout")
@FUZZ
@given(data=st.data())
def test_real_ge_graphs_survive_truncation(tmp_path_factory, data):
    source = data.draw(
        st.sampled_from(sorted(REAL_GE.glob("*.json")) + sorted(REAL_GE.glob("ge_proto_*.txt")))
    )
    text = source.read_bytes()
    cut = data.draw(st.integers(0, len(text)))
    target = tmp_path_factory.mktemp("real") / source.name
    target.write_bytes(text[:cut])
    empty = tmp_path_factory.mktemp("empty")
    np.save(empty / "Unrelated.x.1.1700000000000000.output.0.npy", np.ones(1, np.float16))
    _assert_documented(_compare(target, target, empty, empty))
