"""Reading GE dump-graph JSON: quirks, networkx model, order, fusion mapping, errors."""

import json

import ml_dtypes  # noqa: F401  (registers bfloat16 / float8 names with numpy)
import numpy as np
import pytest
from gefixtures import GraphBuilder, Raw, chain_pair, tensor
from hypothesis import given, settings
from hypothesis import strategies as st

from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.fusion import fused_ops, original_subgraph
from fpinspect.dumps.formats.ge_decode import InputRef, TensorDesc, c_unescape, decode_attr_value
from fpinspect.dumps.formats.ge_types import (
    DATA_SOURCE_TYPES,
    FUSED_TYPES,
    GE_TO_NUMPY,
    is_data_source,
    numpy_dtype_name,
)
from fpinspect.dumps.formats.graph import load_graph


def load(tmp_path, builder_or_json, name="g.json"):
    path = tmp_path / name
    if isinstance(builder_or_json, GraphBuilder):
        builder_or_json.write(path)
    else:
        path.write_text(json.dumps(builder_or_json), encoding="utf-8")
    return load_graph(path)


# --------------------------------------------------------------------------- model


def test_chain_model_ops_nodes_and_edges(tmp_path):
    on, off = chain_pair()
    model = load(tmp_path, off)
    assert model.graphs == ["off"]
    assert list(model.ops) == ["x", "w", "Mul_1", "Add_2", "Relu_3", "out"]
    add = model.ops["Add_2"]
    assert add.type == "Add" and add.graph == "off"
    assert add.inputs == [InputRef("Mul_1", 0), InputRef("x", 0)]
    assert add.output_desc[0].dtype == "DT_FLOAT16" and add.output_desc[0].shape == (2, 3)
    g = model.nx
    assert g.nodes["Add_2"]["type"] == "Add" and g.nodes["Add_2"]["missing"] is False
    assert g.nodes["Add_2"]["output_desc"] is add.output_desc
    edges = sorted((u, d["src_index"], d["dst_index"]) for u, _, d in g.in_edges("Add_2", data=True))
    assert edges == [("Mul_1", 0, 0), ("x", 0, 1)]
    assert all(d["kind"] == "data" for _, _, d in g.edges(data=True))
    assert model.warnings == []


def test_proto3_defaults_are_absent_fields(tmp_path):
    raw = {
        "graph": [
            {
                "name": "g",
                "op": [
                    {"name": "c", "type": "Const", "output_desc": [{"dtype": "DT_FLOAT"}]},
                    {"name": "n", "type": "Neg", "id": 1, "input": ["c:0"], "output_desc": [{}]},
                ],
            }
        ]
    }
    model = load(tmp_path, raw)
    c = model.ops["c"]
    assert c.inputs == [] and c.control_inputs == [] and c.attrs == {} and c.input_desc == []
    desc = c.output_desc[0]
    assert desc == TensorDesc(
        dtype="DT_FLOAT",
        shape=(),
        layout=None,
        subformat=None,
        origin_format=None,
        origin_shape=None,
        attrs={},
    )
    assert model.ops["n"].output_desc[0] == TensorDesc()


def test_tensor_desc_fields_from_ge_serialisation(tmp_path):
    b = GraphBuilder().op(
        "w",
        "Const",
        outputs=[
            tensor(
                [4, 1, 16, 16],
                "DT_FLOAT16",
                "FRACTAL_Z:16",
                origin_format="NCHW",
                origin_shape=[16, 16, 1, 1],
            ),
            tensor([], "DT_BF16", "ND"),  # a scalar: no shape, empty origin_shape list
        ],
    )
    out = load(tmp_path, b).ops["w"].output_desc
    assert out[0].layout == "FRACTAL_Z" and out[0].subformat == 16 and out[0].full_layout == "FRACTAL_Z:16"
    assert out[1].full_layout == "ND" and TensorDesc().full_layout is None
    assert out[0].shape == (4, 1, 16, 16)
    assert out[0].origin_format == "NCHW" and out[0].origin_shape == (16, 16, 1, 1)
    assert out[0].attrs["origin_shape_initialized"] is True
    assert out[0].attrs["format_for_int"] == 4
    assert out[1].shape == () and out[1].origin_shape == () and out[1].dtype == "DT_BF16"


def test_quoted_int64_values(tmp_path):
    b = GraphBuilder(quoted_ints=True)
    b.op("x", "Data", outputs=[tensor([2, 3])]).op(
        "y", "Abs", inputs=["x:0"], outputs=[tensor([2, 3])], attrs={"axis": -1, "axes": [0, 1]}
    )
    raw = b.to_json()
    assert raw["graph"][0]["op"][1]["id"] == "1"
    model = load(tmp_path, b)
    y = model.ops["y"]
    assert y.attrs == {"axis": -1, "axes": [0, 1]}
    assert y.output_desc[0].shape == (2, 3) and y.output_desc[0].origin_shape == (2, 3)


@pytest.mark.parametrize(
    ("value", "decoded"),
    [
        ({"s": "Mul_7"}, "Mul_7"),
        ({"i": 0}, 0),
        ({"i": "12"}, 12),
        ({"f": "0.5"}, 0.5),
        ({"f": "-inf"}, float("-inf")),
        ({"f": 2}, 2.0),
        ({"b": False}, False),
        ({"dt": 1}, "DT_FLOAT"),
        ({"dt": "DT_BF16"}, "DT_BF16"),
        ({"list": {"s": ["a", "b"], "val_type": "VT_LIST_STRING"}}, ["a", "b"]),
        ({"list": {"i": [1, "2"], "val_type": "VT_LIST_INT"}}, [1, 2]),
        ({"list": {"f": [0.25, 1], "val_type": "VT_LIST_FLOAT"}}, [0.25, 1.0]),
        ({"list": {"b": [True], "val_type": "VT_LIST_BOOL"}}, [True]),
        ({"list": {"dt": [2, 27], "val_type": "VT_LIST_DATA_TYPE"}}, ["DT_FLOAT16", "DT_BF16"]),
        ({"list": {"val_type": "VT_LIST_INT"}}, []),
        ({"list": {}}, []),
        ({"list": {"i": [3]}}, [3]),  # val_type omitted: the member present decides
        ({"list_list_int": {"list_list_i": [{"list_i": [1, 2]}, {}, None]}}, [[1, 2], [], []]),
        ({"list_list_float": {"list_list_f": [{"list_f": [0.5]}]}}, [[0.5]]),
        ({"func": {"name": "f", "attr": [{"key": "k", "value": {"i": 1}}]}}, {"name": "f", "attr": {"k": 1}}),
        ({"t": {"desc": {}}}, {"desc": {}}),  # kept as the JSON has it
        ({}, None),
        (None, None),
    ],
)
def test_attr_value_decoding(value, decoded):
    assert decode_attr_value(value) == decoded


def test_builder_attrs_decode_to_plain_values(tmp_path):
    attrs = {
        "ratio": 0.5,
        "tiny": 1e-20,
        "on": True,
        "off": False,
        "zero": 0,
        "names": ["a", "b"],
        "floats": [0.5, 2.0],
        "flags": [True, False],
        "empty": [],
        "dtype": Raw({"dt": 27}),
    }
    raw = GraphBuilder().op("x", "Data", attrs=attrs).to_json()
    written = {a["key"]: a["value"] for a in raw["graph"][0]["op"][0]["attr"]}
    assert (
        written["ratio"] == {"f": "0.5"} and written["zero"] == {"i": 0} and written["empty"] == {"list": {}}
    )
    decoded = load(tmp_path, raw).ops["x"].attrs
    assert decoded == {**attrs, "dtype": "DT_BF16"}


def test_attr_tensor_desc_and_list_of_descs():
    td = decode_attr_value({"td": {"dtype": "DT_INT32", "shape": {"dim": [3]}, "layout": "ND"}})
    assert td == TensorDesc(dtype="DT_INT32", shape=(3,), layout="ND")
    tds = decode_attr_value({"list": {"td": [None, {"dtype": "DT_BOOL"}], "val_type": "VT_LIST_TENSOR_DESC"}})
    assert tds == [TensorDesc(), TensorDesc(dtype="DT_BOOL")]


@pytest.mark.parametrize("text", ["plain", 'quote " and \\ backslash', "tab\tnewline\n", "名字/é", "a'b"])
def test_c_escaped_strings_round_trip(tmp_path, text):
    b = GraphBuilder().op("x", "Data", attrs={"note": text}, outputs=[tensor([1], origin_name=text)])
    model = load(tmp_path, b)
    assert model.ops["x"].attrs["note"] == text
    assert model.ops["x"].output_desc[0].attrs["_datadump_origin_name"] == text


def test_c_unescape_octal_hex_and_invalid_utf8():
    assert c_unescape(r"\345\220\215") == "名"
    assert c_unescape(r"\x41\101") == "AA"
    assert c_unescape(r"\377") == "\ufffd"


def test_attr_map_forms_and_null_entries(tmp_path):
    raw = {
        "graph": [
            {
                "name": "g",
                "op": [
                    {
                        "name": "a",
                        "type": "Data",
                        "attr": [None, {"key": "k", "value": {"i": 1}}, {"key": "e"}],
                    },
                    {"name": "b", "type": "Data", "attr": {"k": {"f": "1.5"}}},
                ],
            }
        ]
    }
    model = load(tmp_path, raw)
    assert model.ops["a"].attrs == {"k": 1, "e": None}
    assert model.ops["b"].attrs == {"k": 1.5}


def test_inputs_unconnected_control_and_colons_in_names(tmp_path):
    b = (
        GraphBuilder()
        .op("scope:a", "Data", outputs=[tensor([2])])
        .op("b", "Data", outputs=[tensor([2]), tensor([2])])
        .op("c", "NoOp")
        .op("y", "Foo", inputs=["scope:a:0", "", "b:1", "c:-1", "scope:a:-1"], outputs=[tensor([2])])
    )
    model = load(tmp_path, b)
    y = model.ops["y"]
    assert y.inputs == [InputRef("scope:a", 0), None, InputRef("b", 1)]
    assert y.control_inputs == ["c", "scope:a"]
    assert y.input_desc[1] == TensorDesc()  # null: the empty message of the unconnected input
    data = {(u, d["dst_index"]): d for u, _, d in model.nx.in_edges("y", data=True) if d["kind"] == "data"}
    assert set(data) == {("scope:a", 0), ("b", 2)}
    assert data[("b", 2)]["src_index"] == 1
    control = sorted(u for u, _, d in model.nx.in_edges("y", data=True) if d["kind"] == "control")
    assert control == ["c", "scope:a"]


def test_null_entries_in_repeated_fields(tmp_path):
    raw = {
        "graph": [
            None,
            {
                "name": "g",
                "op": [
                    None,
                    {"name": "x", "type": "Data", "output_desc": [None, {"dtype": "DT_FLOAT"}]},
                    {"name": "y", "type": "Abs", "input": ["x:1", None], "input_desc": [None]},
                ],
            },
        ]
    }
    model = load(tmp_path, raw)
    assert model.graphs == ["g"]
    assert model.ops["x"].output_desc == [TensorDesc(), TensorDesc(dtype="DT_FLOAT")]
    assert model.ops["y"].inputs == [InputRef("x", 1), None]


def test_numeric_dtype_enum(tmp_path):
    raw = {"graph": [{"name": "g", "op": [{"name": "x", "type": "Data", "output_desc": [{"dtype": 27}]}]}]}
    assert load(tmp_path, raw).ops["x"].output_desc[0].dtype == "DT_BF16"


def test_every_graph_is_read_and_remembered(tmp_path):
    b = (
        GraphBuilder("main")
        .op("x", "Data", outputs=[tensor([4])])
        .op("call", "PartitionedCall", inputs=["x:0"], outputs=[tensor([4])])
        .subgraph("body")
        .op("arg", "Data", outputs=[tensor([4])])
        .fused(
            "autofuse_1_Exp_Log",
            inputs=["arg:0"],
            outputs=[tensor([4], origin_name="Log_2", origin_index=0)],
            original=[("Exp_1", "Exp"), ("Log_2", "Log")],
            type="FusedAscBackend",
        )
    )
    raw = b.to_json()
    del raw["graph"][1]["name"]  # an unnamed graph gets a positional name
    model = load(tmp_path, raw)
    assert model.graphs == ["main", "graph_1"]
    assert model.ops["arg"].graph == "graph_1" and model.nx.nodes["arg"]["graph"] == "graph_1"
    assert [f.name for f in fused_ops(model)] == ["autofuse_1_Exp_Log"]
    assert fused_ops(model)[0].graph == "graph_1"
    assert model.topological_order() == ["x", "call", "arg", "autofuse_1_Exp_Log"]


def test_reference_to_an_undefined_op_is_a_flagged_node(tmp_path):
    b = GraphBuilder().op("y", "Abs", inputs=["ghost:0", "phantom:-1"], outputs=[tensor([1])])
    model = load(tmp_path, b)
    assert model.nx.nodes["ghost"]["missing"] is True and model.nx.nodes["ghost"]["type"] is None
    assert not model.has_op("ghost") and model.has_op("y")
    assert model.topological_order() == ["y"]
    assert len(model.warnings) == 2 and "'ghost'" in model.warnings[0]


def test_duplicate_op_name_keeps_the_first(tmp_path):
    b = GraphBuilder().op("x", "Data").subgraph("sub").op("x", "Const")
    model = load(tmp_path, b)
    assert model.ops["x"].type == "Data" and model.ops["x"].graph == "root"
    assert "appears again" in model.warnings[0]


def test_topological_order_is_deterministic_with_file_order_ties(tmp_path):
    b = (
        GraphBuilder()
        .op("d", "Add", inputs=["b:0", "c:0"])
        .op("c", "Abs", inputs=["a:0"])
        .op("b", "Abs", inputs=["a:0"])
        .op("a", "Data")
        .op("e", "Data")
    )
    model = load(tmp_path, b)
    order = model.topological_order()
    assert order == ["a", "c", "b", "d", "e"]
    assert order == load(tmp_path, b, "again.json").topological_order()


def test_control_edges_order_ops_too(tmp_path):
    model = load(tmp_path, GraphBuilder().op("b", "NoOp", inputs=["a:-1"]).op("a", "NoOp"))
    assert model.topological_order() == ["a", "b"]


def test_cycle_falls_back_to_file_order(tmp_path):
    b = GraphBuilder().op("p", "Abs", inputs=["q:0"]).op("q", "Abs", inputs=["p:0"]).op("r", "Data")
    model = load(tmp_path, b)
    assert model.topological_order() == ["p", "q", "r"]
    assert any("cycle" in w for w in model.warnings)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # the graph the op is in
            st.lists(st.tuples(st.integers(0, 9), st.integers(-1, 2)), max_size=4),  # inputs: op, index
        ),
        min_size=1,
        max_size=10,
    )
)
def test_edges_and_order_are_networkx_s(tmp_path_factory, spec):
    """The model's own adjacency and order agree with networkx on the same graph: producers
    and consumers through data edges, the lexicographical topological order by (graph, file
    position), cycles, self-loops, parallel and control edges, names never defined."""
    import networkx as nx

    b = GraphBuilder()
    graphs = {0: b}
    for i, (where, inputs) in enumerate(spec):
        if where not in graphs:
            graphs[where] = b.subgraph(f"sub{where}")
        names = [f"op{j}" if j < len(spec) else f"ghost{j}" for j, _ in inputs]
        graphs[where].op(f"op{i}", "Abs", inputs=[f"{n}:{k}" for n, (_, k) in zip(names, inputs)])
    model = load(tmp_path_factory.mktemp("g"), b)
    g = model.nx
    for name in g.nodes:
        ins = [u for u, _, kind in g.in_edges(name, data="kind") if kind == "data"]
        outs = [v for _, v, kind in g.out_edges(name, data="kind") if kind == "data"]
        assert model.data_producers(name) == list(dict.fromkeys(ins))
        assert model.data_consumers(name) == list(dict.fromkeys(outs))
    rank = {n: i for i, n in enumerate(model.graphs)}
    position = {n: i for i, n in enumerate(g.nodes)}
    try:
        order = nx.lexicographical_topological_sort(
            g, key=lambda n: (rank.get(g.nodes[n]["graph"], len(rank)), position[n])
        )
        expected = [n for n in order if n in model.ops]
    except nx.NetworkXUnfeasible:
        expected = list(model.ops)
    assert model.topological_order() == expected


# --------------------------------------------------------------------------- dtypes and sources


def test_numpy_dtype_names_are_real_dtypes():
    for ge, name in GE_TO_NUMPY.items():
        assert np.dtype(name).name == name, ge
    assert numpy_dtype_name("DT_BF16") == "bfloat16"
    assert numpy_dtype_name("DT_FLOAT") == "float32"
    assert numpy_dtype_name("DT_FLOAT8_E4M3FN") == "float8_e4m3fn"
    assert numpy_dtype_name("DT_HIFLOAT8") is None
    assert numpy_dtype_name(None) is None


@pytest.mark.parametrize("op_type", sorted(DATA_SOURCE_TYPES))
def test_data_sources(op_type):
    assert is_data_source(op_type)


@pytest.mark.parametrize("op_type", ["Add", "AscBackend", "NetOutput", None])
def test_computed_values_are_not_data_sources(op_type):
    assert not is_data_source(op_type)


# --------------------------------------------------------------------------- fusion mapping


def test_fused_outputs_and_inputs_of_the_chain(tmp_path):
    on, off = chain_pair()
    on_model, off_model = load(tmp_path, on, "on.json"), load(tmp_path, off, "off.json")
    (fused,) = fused_ops(on_model)
    assert fused.name == "autofuse_0_Mul_Add" and fused.type in FUSED_TYPES
    assert fused.original_op_names == ["Mul_1", "Add_2"]
    assert fused.original_op_types == ["Mul", "Add"]
    (out,) = fused.outputs
    assert (out.index, out.origin_op, out.origin_index) == (0, "Add_2", 0)
    assert out.desc.shape == (2, 3)
    assert off_model.has_op(out.origin_op)
    x, w = fused.inputs
    assert (x.index, x.src_op, x.src_index, x.src_type) == (0, "x", 0, "Data")
    assert (x.origin_op, x.origin_index) == ("x", 0)
    assert is_data_source(x.src_type) and is_data_source(w.src_type)
    assert w.desc.dtype == "DT_FLOAT16"


def test_missing_origin_attributes_give_no_mapping(tmp_path):
    b = GraphBuilder().fused(
        "f",
        outputs=[tensor([1]), tensor([1], origin_name="A"), tensor([1], origin_index=2)],
        original=[("A", "Abs"), ("", "")],
    )
    (fused,) = fused_ops(load(tmp_path, b))
    assert [(o.origin_op, o.origin_index) for o in fused.outputs] == [(None, None), ("A", None), (None, 2)]
    assert fused.original_op_names == ["A"] and fused.original_op_types == ["Abs"]


def test_fused_inputs_resolve_through_fused_producers(tmp_path):
    b = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor([4])])
        .fused(
            "f0",
            inputs=["x:0"],
            outputs=[
                tensor([4], origin_name="Mul_1", origin_index=0),
                tensor([4], origin_name="Sub_2", origin_index=1),
            ],
        )
        # f1 output 0 is named after f0 (nested fusion): followed on to Mul_1:0
        .fused(
            "f1",
            inputs=["f0:1"],
            outputs=[tensor([4], origin_name="f0", origin_index=0), tensor([4])],
            type="FusedAscBackend",
        )
        .op("plain", "Abs", inputs=["x:0"], outputs=[tensor([4])])
        .fused("f2", inputs=["f1:0", "f0:1", "plain:0", "", "f1:1", "ghost:3"], outputs=[tensor([4])])
    )
    model = load(tmp_path, b)
    by_name = {f.name: f for f in fused_ops(model)}
    assert list(by_name) == ["f0", "f1", "f2"]
    got = [(i.index, i.src_op, i.src_type, i.origin_op, i.origin_index) for i in by_name["f2"].inputs]
    assert got == [
        (0, "f1", "FusedAscBackend", "Mul_1", 0),
        (1, "f0", "AscBackend", "Sub_2", 1),
        (2, "plain", "Abs", "plain", 0),
        (4, "f1", "FusedAscBackend", None, None),  # f1:1 has no mapping
        (5, "ghost", None, "ghost", 3),  # not in the file: stands for itself
    ]
    assert by_name["f2"].inputs[0].desc is not None
    assert by_name["f2"].inputs[4].desc is not None


def test_fused_input_without_description(tmp_path):
    b = GraphBuilder().op("x", "Data", outputs=[tensor([1])]).fused("f", inputs=["x:0"])
    raw = b.to_json()
    del raw["graph"][0]["op"][1]["input_desc"]
    (fused,) = fused_ops(load(tmp_path, raw))
    assert fused.inputs[0].desc is None and fused.outputs == []


def test_mapping_loop_gives_no_origin(tmp_path):
    b = (
        GraphBuilder()
        .fused("a", inputs=["b:0"], outputs=[tensor([1], origin_name="b", origin_index=0)])
        .fused("b", outputs=[tensor([1], origin_name="a", origin_index=0)])
        .fused("c", inputs=["a:0"])
    )
    c = {f.name: f for f in fused_ops(load(tmp_path, b))}["c"]
    assert (c.inputs[0].origin_op, c.inputs[0].origin_index) == (None, None)


def test_original_subgraph_of_the_fusion_off_graph(tmp_path):
    b = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor([2])])
        .op("Mul_1", "Mul", inputs=["x:0", "x:0"], outputs=[tensor([2]), tensor([2])])
        .op("Add_2", "Add", inputs=["Mul_1:1", "Mul_1:0", "Mul_1:-1"], outputs=[tensor([2])])
        .op("Sync", "NoOp", inputs=["Add_2:-1"])
    )
    off = load(tmp_path, b)
    sub = original_subgraph(off, ["Mul_1", "Add_2", "Sync", "Gone_9", "Mul_1"])
    assert list(sub.nodes) == ["Mul_1", "Add_2", "Sync"]
    assert sub.nodes["Add_2"] == {"type": "Add", "graph": "root"}
    assert sub.edges["Mul_1", "Add_2"] == {"kind": "data", "ports": [(0, 1), (1, 0)]}
    assert sub.edges["Add_2", "Sync"] == {"kind": "control", "ports": []}
    assert not sub.has_node("x")


# --------------------------------------------------------------------------- errors


def _write(tmp_path, content, name="bad.json"):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


OP = {"name": "x", "type": "Data"}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (b"\xff\xfe\x00binary", "not UTF-8"),
        ([1, 2], "no 'graph' list"),
        ({"name": "m"}, "no 'graph' list"),
        ({"graph": {"op": []}}, "no 'graph' list"),
        ({"graph": []}, "no operators"),
        ({"graph": [{"name": "g"}]}, "no operators"),
        ({"graph": ["g"]}, "graph[0] is str"),
        ({"graph": [{"name": "g", "op": {}}]}, "not a list"),
        ({"graph": [{"name": "g", "op": [5]}]}, "op #0 of graph 'g' is int"),
        ({"graph": [{"name": "g", "op": [{"type": "Data"}]}]}, "has no name"),
        ({"graph": [{"name": "g", "op": [{**OP, "input": [3]}]}]}, "op 'x' input is 3"),
        ({"graph": [{"name": "g", "op": [{**OP, "input": ["nocolon"]}]}]}, "'nocolon' is not 'op:index'"),
        ({"graph": [{"name": "g", "op": [{**OP, "input": ["a:b"]}]}]}, "not an integer"),
        ({"graph": [{"name": "g", "op": [{**OP, "input": ["a:-2"]}]}]}, "negative"),
        (
            {"graph": [{"name": "g", "op": [{**OP, "attr": [{"key": "k", "value": {"i": "x"}}]}]}]},
            "not an integer",
        ),
        (
            {"graph": [{"name": "g", "op": [{**OP, "attr": [{"key": "k", "value": {"f": "x"}}]}]}]},
            "not a number",
        ),
        (
            {"graph": [{"name": "g", "op": [{**OP, "attr": [{"key": "k", "value": {"b": 1}}]}]}]},
            "true or false",
        ),
        (
            {"graph": [{"name": "g", "op": [{**OP, "output_desc": [{"shape": {"dim": ["?"]}}]}]}]},
            "not an integer",
        ),
        (
            {"graph": [{"name": "g", "op": [{**OP, "output_desc": [{"layout": "FRACTAL_Z:g"}]}]}]},
            "sub-format",
        ),
        ({"graph": [{"name": "g", "op": [{**OP, "output_desc": [{"layout": 4}]}]}]}, "not a string"),
        ({"graph": [{"name": "g", "op": [{**OP, "output_desc": 7}]}]}, "not a list"),
    ],
)
def test_malformed_graphs_are_one_sentence_input_errors(tmp_path, content, needle):
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as err:
        load_graph(path)
    message = str(err.value)
    assert err.value.code == "GRAPH_LOAD_ERROR"
    assert message.startswith(str(path)) and needle in message and "\n" not in message


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="does not exist") as err:
        load_graph(tmp_path / "nope.json")
    assert err.value.code == "GRAPH_LOAD_ERROR"
    with pytest.raises(InputError, match="is a folder"):
        load_graph(tmp_path)


def _json_paths(node, path=()):
    yield path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield from _json_paths(child, (*path, key))


CHAIN_JSON = chain_pair()[0].to_json()
CHAIN_PATHS = [p for p in _json_paths(CHAIN_JSON) if p]
ODD_VALUES = [
    None,
    0,
    -1,
    "3",
    "x",
    "",
    "a:b",
    "x:-1",
    "1.5",
    1.5,
    True,
    [],
    {},
    [None],
    [1, "a"],
    {"s": 1},
    {"list": {"val_type": []}},
    {"dim": "x"},
    "FRACTAL_Z:q",
    [[]],
    {"i": []},
]


@settings(max_examples=300, deadline=None)
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(CHAIN_PATHS), st.sampled_from(ODD_VALUES)), min_size=1, max_size=3
    )
)
def test_any_corruption_loads_or_is_an_input_error(tmp_path_factory, edits):
    doc = json.loads(json.dumps(CHAIN_JSON))
    for path, value in edits:
        node = doc
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = json.loads(json.dumps(value))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    path = tmp_path_factory.mktemp("fuzz") / "g.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        model = load_graph(path)
    except InputError as err:
        assert err.code == "GRAPH_LOAD_ERROR" and "\n" not in str(err)
        return
    for fused in fused_ops(model):
        original_subgraph(model, fused.original_op_names)
