"""Reading GE's ge_proto_*.txt (protobuf text format of ModelDef) into the same model as atc's JSON."""

import json
from pathlib import Path

import pytest
from gefixtures import chain_pair, tensor
from protofixtures import real_ge as _real
from protofixtures import text_graph

from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.fusion import fused_ops
from fpinspect.dumps.formats.ge_decode import c_unescape
from fpinspect.dumps.formats.ge_text import c_escape, parse_text_graph
from fpinspect.dumps.formats.graph import load_graph

SAMPLE = (
    Path(__file__).resolve().parents[2] / "sample_dumps" / "regression" / "dumpgraph_af_open" / "Build.json"
)


def _both(tmp_path, model_json: dict):
    (tmp_path / "g.json").write_text(json.dumps(model_json), encoding="utf-8")
    (tmp_path / "ge_proto_00000001_graph_1_Build.txt").write_text(text_graph(model_json), encoding="utf-8")
    return load_graph(tmp_path / "g.json"), load_graph(tmp_path / "ge_proto_00000001_graph_1_Build.txt")


def test_a_text_graph_gives_the_model_its_json_gives(tmp_path):
    from_json, from_text = _both(tmp_path, json.loads(SAMPLE.read_text(encoding="utf-8")))
    assert from_text.graphs == from_json.graphs
    assert from_text.ops == from_json.ops  # every op: inputs, attrs, descs (dtype, shape, layout, origin)
    assert from_text.topological_order() == from_json.topological_order()
    assert [f.name for f in fused_ops(from_text)] == [f.name for f in fused_ops(from_json)]
    assert fused_ops(from_text) == fused_ops(from_json)


def test_nested_repeated_enums_escapes_and_subgraphs(tmp_path):
    on, _ = chain_pair()
    text = 'café "quoted" back\\slash 层\n'
    on.op(
        "odd",
        "Cast",
        inputs=["x:0", "", "Relu_3:-1"],
        outputs=[tensor([4, 16], "DT_BF16", "FRACTAL_Z:4")],
        attrs={"note": text, "names": ["a/b", "层"], "ratio": 0.5, "flags": [True, False], "k": 0},
    )
    on.subgraph("body").op("inner", "Relu", inputs=["odd:0"], outputs=[tensor([2], "DT_INT8")])
    from_json, from_text = _both(tmp_path, on.to_json())
    assert (
        "\\345\\261\\202" in (tmp_path / "ge_proto_00000001_graph_1_Build.txt").read_text()
    )  # octal escapes
    odd = from_text.ops["odd"]
    assert odd.attrs["note"] == text and odd.attrs["names"] == ["a/b", "层"]
    assert odd.attrs["ratio"] == 0.5 and odd.attrs["flags"] == [True, False] and odd.attrs["k"] == 0
    assert odd.inputs[1] is None and odd.control_inputs == ["Relu_3"]
    desc = odd.output_desc[0]
    assert (desc.dtype, desc.layout, desc.subformat, desc.shape) == ("DT_BF16", "FRACTAL_Z", 4, (4, 16))
    assert from_text.ops["inner"].graph == "body"
    assert from_text.ops == from_json.ops


def test_fields_the_schema_lacks_are_skipped():
    text = """
    name: "m"
    attr_groups { other_group_def { attr { key: "x" value { s: "y" } } } }
    graph { name: "g" future_field: 7 op { name: "a" type: "Data" newer { deep { n: 1 } } } }
    """
    shape = parse_text_graph(text.splitlines())
    assert shape == {"name": "m", "graph": [{"name": "g", "op": [{"name": "a", "type": "Data"}]}]}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('graph { name: "g" op { name: "a" ', "protobuf text format"),
        ("graph { op { name: 5 } }", "protobuf text format"),
        ("graph { op { input_desc { dtype: DT_NOPE } } }", "DT_NOPE"),
        ("graph { }\n", "no operators"),
    ],
)
def test_malformed_text_graphs_are_one_sentence_input_errors(tmp_path, content, needle):
    path = tmp_path / "ge_proto_bad.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_graph(path)
    message = str(err.value)
    assert err.value.code == "GRAPH_LOAD_ERROR" and message.startswith(str(path))
    assert needle in message and "\n" not in message


def test_c_escape_is_undone_by_c_unescape():
    raw = "tab\t nl\n quote\" apostrophe' back\\ ü 层 \x01"
    assert c_unescape(c_escape(raw.encode("utf-8"))) == raw


@pytest.mark.parametrize("name", ["ge_proto_00046_afterUBMatch.txt", "ge_proto_origin.txt"])
def test_real_ge_graphs_load_without_warnings(name):
    model = load_graph(_real(name))
    assert model.warnings == [] or all("not in the file" in w for w in model.warnings)
    assert len(model.ops) == {"ge_proto_00046_afterUBMatch.txt": 234, "ge_proto_origin.txt": 4}[name]


def test_real_ub_fused_graph_values():
    model = load_graph(_real("ge_proto_00046_afterUBMatch.txt"))
    conv = model.ops["conv1"]
    assert conv.type == "Conv2D"
    assert conv.attrs["_datadump_original_op_names"] == ["scale_conv1", "conv1", "bn_conv1"]
    first = conv.input_desc[0]
    assert (first.dtype, first.layout, first.shape) == ("DT_FLOAT16", "NC1HWC0_C04", (1, 1, 224, 224, 4))
    assert (first.origin_format, first.origin_shape) == ("NCHW", (1, 3, 224, 224))
    origin = load_graph(_real("ge_proto_origin.txt"))
    pad = origin.ops["generator/resblock_7/res1/conv_0/reflect"]
    assert pad.attrs["T"] == "DT_UNDEFINED" and pad.attrs["Tpaddings"] == "DT_INT8"  # dt attrs by number


def _fast_and_reference(text: str):
    from fpinspect.dumps.formats.ge_ir import message_classes
    from fpinspect.dumps.formats.ge_text_lines import parse_printer_lines

    root = message_classes()["ModelDef"].DESCRIPTOR
    return parse_printer_lines(text.splitlines(), root), parse_text_graph(text.splitlines())


@pytest.mark.parametrize("name", ["ge_proto_00046_afterUBMatch.txt", "ge_proto_origin.txt"])
def test_fast_printer_form_reader_equals_protobuf_text_format_on_real_files(name):
    fast, reference = _fast_and_reference(_real(name).read_text(encoding="utf-8"))
    assert fast == reference


def test_fast_reader_equals_text_format_on_escapes_defaults_and_unknowns():
    on, _ = chain_pair()
    on.op(
        "odd",
        "Cast",
        inputs=["x:0"],
        outputs=[tensor([4], "DT_BF16", "FRACTAL_Z:4")],
        attrs={"note": 'café "q" b\\s 层\n\t', "names": ["a/b", "层"], "ratio": 0.1, "k": 0, "no": False},
    )
    text = text_graph(on.to_json())
    text += 'graph {\n  name: "extra"\n  future {\n    deep {\n      x: 1\n    }\n  }\n  op {\n    name: "y"\n    id: 0\n  }\n}\n'
    fast, reference = _fast_and_reference(text)
    assert fast == reference
    assert "id" not in fast["graph"][-1]["op"][0]  # a proto3 scalar at its default is not set


def test_text_outside_the_printer_form_goes_through_text_format(tmp_path):
    from fpinspect.dumps.formats.ge_ir import message_classes
    from fpinspect.dumps.formats.ge_text_lines import NotPrinterForm, parse_printer_lines

    text = 'graph { name: "g" op { name: "a" type: "Data" } }  # all on one line\n'
    with pytest.raises(NotPrinterForm):
        parse_printer_lines(text.splitlines(), message_classes()["ModelDef"].DESCRIPTOR)
    path = tmp_path / "ge_proto_oneline.txt"
    path.write_text(text, encoding="utf-8")
    assert list(load_graph(path).ops) == ["a"]
