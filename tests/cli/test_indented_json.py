"""Reports are written as ``json.dumps(obj, indent=2)`` would write them, byte for byte."""

from __future__ import annotations

import json

import pytest

from fpinspect.cli.output import indented_json

CASES = [
    {"records": [], "summary": {}},
    {"a": [1, 2.5, -0.0, 1e16, 5e-324, 1.7976931348623157e308, 2**70, True, None], "b": {"c": []}},
    {"é": "naïve \u2028 \n\t\"q\" \\ \x00 \x7f 😀", "nested": [[{"x": [{}]}]]},
    [],
    "text",
    # a file name os.fsdecode could not decode: a lone surrogate, which msgspec refuses
    {"fused_file": "/dumps/op\udcff.npy"},
]


@pytest.mark.parametrize("obj", CASES)
def test_indented_json_is_json_dumps_indent_2(obj):
    assert indented_json(obj) == json.dumps(obj, indent=2)
