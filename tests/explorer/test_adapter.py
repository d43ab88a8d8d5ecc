"""The adapter extension: every graph fpinspect reads, as Model Explorer's graphs, accepted by its own
classes the way its server takes them (``convert_adapter_response``, JSON) and its node data
providers read them back (``dacite.from_dict(Graph, ...)``, here strict)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("model_explorer", reason="needs Model Explorer: pip install 'fpinspect[explorer]'")

import dacite  # noqa: E402  (Model Explorer's dependency)
import msgspec  # noqa: E402
from model_explorer.graph_builder import Graph, GraphNode  # noqa: E402
from model_explorer.utils import convert_adapter_response  # noqa: E402

from fpinspect.dumps.formats.graph import load_graph  # noqa: E402
from fpinspect.explorer.main import GeAdapter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dumps"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tui"))
from protofixtures import real_ge  # noqa: E402
from synthetic import write_synthetic  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps"
STRICT = dacite.Config(strict=True)


def accepted(path) -> dict[str, list[dict]]:
    """The adapter's answer for ``path`` as Model Explorer's server sends it, each graph read back
    into its ``Graph`` class; every edge comes from a node of its graph. By collection label."""
    response = json.loads(json.dumps(convert_adapter_response(GeAdapter().convert(str(path), {}))))
    out = {}
    for collection in response["graphCollections"]:
        for graph in collection["graphs"]:
            dacite.from_dict(Graph, graph, config=STRICT)
            _edges_resolve(graph)
        out[collection["label"]] = collection["graphs"]
    return out


def _edges_resolve(graph: dict) -> None:
    ids = [n["id"] for n in graph["nodes"]]
    assert len(ids) == len(set(ids)), "node ids repeat"
    known = set(ids)
    assert all(e["sourceNodeId"] in known for n in graph["nodes"] for e in n["incomingEdges"])


def _node(graphs: list[dict], name: str) -> dict:
    return next(n for g in graphs for n in g["nodes"] if n["id"] == name)


def _attrs(items: list[dict]) -> dict[str, str]:
    return {kv["key"]: kv["value"] for kv in items}


@pytest.mark.parametrize("sample", ["regression", "clean", "more_accurate", "device"])
def test_the_bundled_runs_are_accepted_with_every_op_and_edge(sample):
    root = SAMPLES / sample
    collections = accepted(root)
    assert set(collections) == {"dumpgraph_af_open/Build.json", "dumpgraph_af_close/Build.json"}
    for label, graphs in collections.items():
        model = load_graph(root / label)
        assert {n["id"] for g in graphs for n in g["nodes"]} == set(model.ops)
        edges = sum(len(n["incomingEdges"]) for g in graphs for n in g["nodes"])
        assert edges == sum(
            len([r for r in op.inputs if r]) + len(op.control_inputs) for op in model.ops.values()
        )


def test_a_fused_op_and_the_originals_it_replaced_name_each_other():
    collections = accepted(SAMPLES / "regression")
    on, off = collections["dumpgraph_af_open/Build.json"], collections["dumpgraph_af_close/Build.json"]
    fused = _node(on, "autofuse_2_Add_LayerNorm")
    assert fused["label"] == "AscBackend" and fused["namespace"] == ""
    assert _attrs(fused["attrs"])["original ops"] == "add, ln2/layer_norm_1"
    outputs = [_attrs(m["attrs"]) for m in fused["outputsMetadata"]]
    assert outputs[1]["shape"] == "float16[2,16,64]" and outputs[1]["stands for"] == "ln2/layer_norm_1:0"
    assert outputs[1]["dtype"] == "DT_FLOAT16" and outputs[1]["format"] == "ND"
    original = _node(off, "ln2/layer_norm_1")
    assert original["label"] == "LayerNorm" and original["namespace"] == "ln2"  # capture's module path
    assert _attrs(original["attrs"])["fused into"] == "autofuse_2_Add_LayerNorm"
    assert _node(on, "ln2.weight")["label"] == "Const"  # hidden by Model Explorer's default


def test_storage_formats_come_along():
    on = accepted(SAMPLES / "device")["dumpgraph_af_open/Build.json"]
    tensors = [m for g in on for n in g["nodes"] for m in n["outputsMetadata"] + n["inputsMetadata"]]
    assert {"NC1HWC0", "NCHW", "ND"} <= {_attrs(m["attrs"]).get("format") for m in tensors}


@pytest.mark.parametrize(
    "name", ["ge_proto_origin.txt", "ge_proto_00046_afterUBMatch.txt", "atc_om_model.json"]
)
def test_the_real_ge_graphs_are_accepted(name):
    path = real_ge(name)
    (graphs,) = accepted(path).values()
    model = load_graph(path)
    assert {n["id"] for g in graphs for n in g["nodes"]} >= set(model.ops)
    assert [g["id"] for g in graphs] == [
        g for g in model.graphs if any(o.graph == g for o in model.ops.values())
    ]


def test_ub_fusion_results_list_their_original_ops():
    (graphs,) = accepted(real_ge("ge_proto_00046_afterUBMatch.txt")).values()
    fused = [n for g in graphs for n in g["nodes"] if "original ops" in _attrs(n["attrs"])]
    assert fused and all(n["label"] == "Conv2D" for n in fused)


def test_control_edges_scopes_and_undefined_names(tmp_path):
    graph = {
        "graph": [
            {
                "name": "root",
                "op": [
                    {"name": "bert/encoder/layer_0/in", "type": "Data"},
                    {
                        "name": "bert/encoder/layer_0/MatMul",
                        "type": "MatMul",
                        "input": ["bert/encoder/layer_0/in:0", "gone:0"],
                    },
                    {"name": "after", "type": "NoOp", "input": ["bert/encoder/layer_0/MatMul:-1"]},
                ],
            }
        ]
    }
    path = tmp_path / "g.json"
    path.write_text(json.dumps(graph))
    (graphs,) = accepted(path).values()
    (g,) = graphs
    assert _node(graphs, "bert/encoder/layer_0/MatMul")["namespace"] == "bert/encoder/layer_0"
    after = _node(graphs, "after")
    assert after["incomingEdges"] == [
        {"sourceNodeId": "bert/encoder/layer_0/MatMul", "sourceNodeOutputId": "-1", "targetNodeInputId": "0"}
    ]
    assert _attrs(after["inputsMetadata"][0]["attrs"]) == {"__tensor_tag": "control"}
    assert _node(graphs, "gone")["label"] == "(undefined)"


def test_not_a_graph_is_one_sentence_naming_the_file(tmp_path):
    path = tmp_path / "model.json"
    path.write_text('{"layers": []}')
    with pytest.raises(ValueError, match=r"model\.json.*no 'graph' list"):
        GeAdapter().convert(str(path), {})


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    return write_synthetic(tmp_path_factory.mktemp("big"), 100_000, dumped=0)


@pytest.mark.slow
def test_a_100000_op_graph_is_accepted(big_run):
    """Every node is checked for its edges; one in 50 is read back into Model Explorer's class
    (all of them take its dacite a minute; the nodes are all alike)."""
    path = big_run / "dumpgraph_af_open" / "Build.json"
    response = json.loads(msgspec.json.encode(GeAdapter().convert(str(path), {})))
    (collection,) = response["graphCollections"]
    (graph,) = collection["graphs"]
    assert len(graph["nodes"]) == 100_001
    _edges_resolve(graph)
    for node in graph["nodes"][::50]:
        dacite.from_dict(GraphNode, node, config=STRICT)
