"""atc's JSON read with msgspec (the op fields only, op by op) decodes to the same model as the whole
document read with ``json``; the outline lists the fused ops the loaded model has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpinspect.dumps.formats.fusion import compared_ops
from fpinspect.dumps.formats.graph import _model, load_graph, split_json
from fpinspect.dumps.formats.outline import outline_fused_ops

ROOT = Path(__file__).resolve().parents[2]
REAL = Path("/work/shared/data/real-ge")
GRAPHS = sorted((ROOT / "fpinspect" / "sample_dumps").glob("*/dumpgraph_af_*/*.json"))
GRAPHS += [REAL / "atc_om_model.json"] if (REAL / "atc_om_model.json").exists() else []


def _stdlib(path: Path):
    with open(path, encoding="utf-8") as f:
        return _model(str(path), json.load(f))


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_msgspec_reader_decodes_the_same_model_as_json(path):
    fast, slow = load_graph(path), _stdlib(path)
    assert list(fast.ops) and fast.ops == slow.ops
    assert fast.graphs == slow.graphs and fast.warnings == slow.warnings
    assert fast.topological_order() == slow.topological_order()
    assert sorted(fast.nx.edges(data=True)) == sorted(slow.nx.edges(data=True))


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_a_graph_split_once_outlines_and_loads_as_its_file(path):
    split = split_json(path)
    assert outline_fused_ops(split) == outline_fused_ops(path)
    model = load_graph(split)
    assert model.ops == load_graph(path).ops and model.path == str(path)
    assert split.graphs == []  # the ops are dropped once decoded: the file's bytes go with them


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_outline_lists_the_fused_ops_of_the_model(path):
    def fields(ops):
        return sorted((op.name, op.type, op.graph, op.original_op_names, op.original_op_types) for op in ops)

    outline = outline_fused_ops(path)
    assert outline is not None and fields(outline) == fields(compared_ops(load_graph(path)))


def test_outline_keeps_file_order_duplicates_and_types(tmp_path):
    ops = [
        {"name": "b", "type": "AscBackend"},
        {
            "name": "a",
            "type": "Conv2D",
            "attr": [
                {
                    "key": "_datadump_original_op_names",
                    "value": {"list": {"s": ["a", "bn"], "val_type": "VT_LIST_STRING"}},
                },
                {"key": "other", "value": {"i": 3}},
            ],
        },
        {"name": "b", "type": "Relu"},
        None,
        {"name": "c", "type": "Relu"},
    ]
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"graph": [{"name": "root", "op": ops}]}))
    assert [(op.name, op.type, op.original_op_names) for op in outline_fused_ops(path)] == [
        ("b", "AscBackend", []),
        ("a", "Conv2D", ["a", "bn"]),
    ]
    assert [op.name for op in outline_fused_ops(path, ["Conv2D"])] == ["a"]
    assert [op.name for op in compared_ops(load_graph(path))] == ["b", "a"]


@pytest.mark.parametrize(
    "text", ['{"graph": [', '{"graph": 3}', '{"graph": [{"op": [{"name": 5}]}]}', "\xff"]
)
def test_what_cannot_be_outlined_is_left_to_the_full_load(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_bytes(text.encode("latin-1"))
    assert outline_fused_ops(path) is None
    assert outline_fused_ops(tmp_path / "missing.json") is None


def test_the_first_fused_ops_are_handed_over_before_the_rest_is_decoded(tmp_path):
    ops = [{"name": f"f{i}", "type": "AscBackend"} for i in range(5)] + [{"name": "x", "type": "Data"}]
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"graph": [{"name": "root", "op": ops}]}))
    early = []

    def on_first(first):
        assert not early  # once
        early.append([op.name for op in first])

    whole = outline_fused_ops(path, first=3, on_first=on_first)
    assert early == [["f0", "f1", "f2"]] and [op.name for op in whole] == [f"f{i}" for i in range(5)]
    early.clear()
    assert len(outline_fused_ops(path, first=6, on_first=on_first)) == 5 and early == []  # fewer: not called
