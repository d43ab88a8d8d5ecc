"""atc's JSON ops decoded by the typed structs (:mod:`fpinspect.dumps.formats.ge_json`) give the op the dict
decoder (:func:`~fpinspect.dumps.formats.ge_decode.op_info`) gives — values, the shapes the structs leave
to it, and the problems it names."""

from __future__ import annotations

import json

import pytest

from fpinspect.dumps.formats.ge_decode import Malformed, TensorDesc, op_info
from fpinspect.dumps.formats.ge_json import decode_op

DESC = {
    "dtype": "DT_FLOAT16",
    "shape": {"dim": [2, "3"]},
    "layout": "FRACTAL_Z:16",
    "size": 12,  # a field no decoder reads
    "attr": [
        {"key": "origin_format", "value": {"s": "NCHW"}},
        {"key": "origin_shape", "value": {"list": {"i": [2, 3], "val_type": "VT_LIST_INT"}}},
        {"key": "_datadump_origin_name", "value": {"s": "a\\\\b\\345"}},
    ],
}


def _attr(key, value):
    return {"key": key, "value": value}


OPS = {
    "plain": {"name": "a", "type": "Add", "input": ["x:0", "", "y:z:-1"], "output_desc": [DESC]},
    "no type, nulls": {"name": "a", "input": None, "input_desc": [None], "output_desc": [None, {}]},
    "scalars": {
        "name": "a",
        "type": "T",
        "id": 7,
        "attr": [
            _attr("s", {"s": "x\\n"}),
            _attr("i", {"i": 3}),
            _attr("iq", {"i": "-4"}),
            _attr("f", {"f": "0.5"}),
            _attr("fi", {"f": 2}),
            _attr("b", {"b": True}),
            _attr("dt", {"dt": 1}),
            _attr("dts", {"dt": "DT_INT8"}),
            _attr("empty", {}),
            _attr("none", None),
            None,
            {"value": {"i": 1}},
            _attr("i", {"i": 9}),  # a repeated key: the last one
        ],
    },
    "lists": {
        "name": "a",
        "type": "T",
        "attr": [
            _attr("s", {"list": {"s": ["p", "q"], "val_type": "VT_LIST_STRING"}}),
            _attr("i", {"list": {"i": [1, "2"], "val_type": "VT_LIST_INT"}}),
            _attr("f", {"list": {"f": [1, 0.5, "2.5"]}}),
            _attr("b", {"list": {"b": [True, False], "val_type": "VT_LIST_BOOL"}}),
            _attr("dt", {"list": {"dt": [1, "DT_FLOAT"], "val_type": "VT_LIST_DATA_TYPE"}}),
            _attr("empty", {"list": {"val_type": "VT_LIST_INT"}}),
            _attr("other member named", {"list": {"s": ["p"], "val_type": "VT_LIST_INT"}}),
            _attr("unnamed", {"list": {"i": [5], "val_type": 3}}),
            _attr("null", {"list": None}),
            _attr("null member", {"list": {"s": None}}),
        ],
    },
    "descs in attrs": {
        "name": "a",
        "type": "T",
        "attr": [_attr("td", {"td": DESC}), _attr("tdn", {"td": None})],
        "input_desc": [DESC],
    },
    "attrs as an object": {"name": "a", "type": "T", "attr": {"k": {"i": 1}, "n": None}},
    # left to the dict decoder
    "named attrs": {"name": "a", "type": "T", "attr": [_attr("fn", {"func": {"name": "g", "attr": []}})]},
    "list of lists": {
        "name": "a",
        "type": "T",
        "attr": [_attr("ll", {"list_list_int": {"list_list_i": [{"list_i": [1, 2]}, {}]}})],
    },
    "tensor desc list": {
        "name": "a",
        "type": "T",
        "attr": [_attr("tds", {"list": {"td": [DESC, None], "val_type": "VT_LIST_TENSOR_DESC"}})],
    },
    "unknown member": {"name": "a", "type": "T", "attr": [_attr("e", {"expression": "x+1"})]},
    "a layout that is no string but false": {"name": "a", "type": "T", "output_desc": [{"layout": 0}]},
    "null": None,
}


@pytest.mark.parametrize("op", OPS.values(), ids=OPS.keys())
def test_typed_decoding_gives_the_op_of_the_dict_decoder(op):
    raw = json.dumps(op).encode()
    expected = None if op is None else op_info(json.loads(raw), "g", "op #0")
    assert decode_op(raw, "g", "op #0") == expected


def test_the_values_are_the_decoded_ones():
    op = decode_op(json.dumps(OPS["scalars"]).encode(), "g", "op #0")
    assert op.attrs == {
        "s": "x\n",
        "i": 9,
        "iq": -4,
        "f": 0.5,
        "fi": 2.0,
        "b": True,
        "dt": "DT_FLOAT",  # GE's DataType 1
        "dts": "DT_INT8",
        "empty": None,
        "none": None,
        "": 1,
    }
    desc = decode_op(json.dumps(OPS["plain"]).encode(), "g", "op #0").output_desc[0]
    assert (
        isinstance(desc, TensorDesc)
        and desc.shape == (2, 3)
        and (desc.layout, desc.subformat)
        == (
            "FRACTAL_Z",
            16,
        )
    )
    assert desc.origin_shape == (2, 3) and desc.attrs["_datadump_origin_name"] == "a\\b\ufffd"


BAD = {
    "no name": {"type": "T"},
    "a name that is no string": {"name": 3},
    "a bad quoted int": {"name": "a", "attr": [_attr("i", {"i": "3x"})]},
    "a bad input": {"name": "a", "input": ["nocolon"]},
    "a negative output index": {"name": "a", "input": ["x:-2"]},
    "a bad sub-format": {"name": "a", "output_desc": [{"layout": "NC1HWC0:x"}]},
    "a bool as a dim": {"name": "a", "output_desc": [{"shape": {"dim": [True]}}]},
    "origin_shape of strings": {
        "name": "a",
        "output_desc": [{"attr": [_attr("origin_shape", {"list": {"s": ["1"]}})]}],
    },
    "an op that is a list": [1],
    "an int written as a float": {"name": "a", "attr": [_attr("i", {"i": 1.0})]},
}


@pytest.mark.parametrize("op", BAD.values(), ids=BAD.keys())
def test_a_bad_op_gets_the_dict_decoders_message(op):
    raw = json.dumps(op).encode()
    with pytest.raises(Malformed) as expected:
        op_info(json.loads(raw), "g", "op #0")
    with pytest.raises(Malformed) as got:
        decode_op(raw, "g", "op #0")
    assert str(got.value) == str(expected.value)
