"""Reports are written as ``json.dumps(obj, indent=2)`` would write them, byte for byte."""

from __future__ import annotations

import io
import json

import pytest

from fpinspect.cli.output import indented_json, write_json_object

CASES = [
    {"records": [], "summary": {}},
    {"a": [1, 2.5, -0.0, 1e16, 5e-324, 1.7976931348623157e308, 2**70, True, None], "b": {"c": []}},
    {"é": 'naïve \u2028 \n\t"q" \\ \x00 \x7f 😀', "nested": [[{"x": [{}]}]]},
    [],
    "text",
    # a file name os.fsdecode could not decode: a lone surrogate, which msgspec refuses
    {"fused_file": "/dumps/op\udcff.npy"},
]


@pytest.mark.parametrize("obj", CASES)
def test_indented_json_is_json_dumps_indent_2(obj):
    assert indented_json(obj) == json.dumps(obj, indent=2)


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"records": [], "summary": {}},
        {"records": [{"a": [1, {"b": None}]}, {}, {"c": "x\ny", "d": "\udcff"}], "summary": {"n": [1.5, []]}},
        {"one": [[]], "two": 3},
    ],
)
def test_write_json_object_streams_the_same_text(obj):
    """Lists given as iterators are written item by item into the same text."""
    out = io.StringIO()
    write_json_object(out, [(k, iter(v) if isinstance(v, list) else v) for k, v in obj.items()])
    assert out.getvalue() == json.dumps(obj, indent=2) + "\n"
