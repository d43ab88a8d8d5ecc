"""Reports are written as ``json.dumps(json_clean(obj), indent=2)`` would write them, byte for byte."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from fpinspect.cli.output import BATCH, indented_json, write_json_object
from fpinspect.dumps.engine.pair import json_clean


class _Name(str):
    """A str subclass: json.dumps writes it as a string, msgspec refuses it."""


class _Count(int):
    pass


def _dumps(obj) -> str:
    return json.dumps(json_clean(obj), indent=2)


CASES = [
    {"records": [], "summary": {}},
    {"a": [1, 2.5, -0.0, 1e16, 5e-324, 1.7976931348623157e308, 2**70, True, None], "b": {"c": []}},
    {"é": 'naïve \u2028 \n\t"q" \\ \x00 \x7f 😀', "nested": [[{"x": [{}]}]]},
    [],
    "text",
    # a file name os.fsdecode could not decode: a lone surrogate, which msgspec refuses
    {"fused_file": "/dumps/op\udcff.npy"},
    # what json_clean makes JSON's: NaN, infinities, numpy scalars, keys that are not strings
    {"nan": math.nan, "inf": [math.inf, -math.inf]},
    {1: "one", None: 2, 2.5: [], False: {}},
    {"x": np.float64(1.5e-7), "y": (1, (2.0, "z"))},
    {"del": "\x7f", "\x7f": 1, "names": ["a\u00e9", "0x3c00", "float16"]},
    {"name": _Name("op"), "count": _Count(3), "big": np.float32(1e20), "bits": np.uint16(0x3C00)},
    # floats msgspec spells otherwise, where they stand alone or among others, and text inside
    # strings that looks like them (left as it is)
    1e-05,
    -2.5e-300,
    [1e-7, 1.5e-05, [1e16, -1e17], {"k": 5e-324}],
    {"s": "a:1e-7,b", "t": "[0.00001]", "u": ",1e16}", "v": [1e-7, "0x2e85", 1e-05]},
    {"kl": 5.725847944459755e-08, "x": np.float64(1.5e-5), "ok": 0.000244140625},
    {"m": "max 1e-05,\nnext 1e-7", "a 1e-05": -1e-05, "n": ["1e-7", -1.5e-05, " 0.00001"], "e": 2e-7},
]


@pytest.mark.parametrize("plain", [False, True])
@pytest.mark.parametrize("obj", CASES)
def test_indented_json_is_json_dumps_indent_2(obj, plain):
    """Also ``plain``, encoded without the cleaning walk: what msgspec refuses (numpy scalars,
    subclasses, keys that are not strings) still comes out as json.dumps writes it."""
    assert indented_json(obj, plain=plain) == _dumps(obj)


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"records": [], "summary": {}},
        {"records": [{"a": [1, {"b": None}]}, {}, {"c": "x\ny", "d": "\udcff"}], "summary": {"n": [1.5, []]}},
        {"one": [[]], "two": 3},
        # more items than one batch, the last batch cut short, floats to spell again in each
        {"records": [{"i": i, "kl": 1e-7 * i, "x": [i, 1.5e-05]} for i in range(2 * BATCH + 3)], "n": 1},
    ],
)
def test_write_json_object_streams_the_same_text(obj):
    """Lists given as iterators are written batch by batch into the same text."""
    out = io.StringIO()
    write_json_object(out, [(k, iter(v) if isinstance(v, list) else v) for k, v in obj.items()])
    assert out.getvalue() == _dumps(obj) + "\n"


def test_every_float_is_spelled_as_json_dumps_spells_it():
    """Floats of every magnitude (random bit patterns, every float16 value, the errors between
    float16 values a report holds, the edges of the range msgspec spells as repr does), as dict
    values and as list items: the same text as json.dumps."""
    rng = np.random.default_rng(13)
    bits = rng.integers(0, 2**63, size=20000, dtype=np.int64).view(np.float64)
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    finite = halves[np.isfinite(halves)]
    errors = np.abs(rng.choice(finite, 20000) - rng.choice(finite, 20000))
    edges = [1e-4, np.nextafter(1e-4, 0), np.nextafter(1e-4, 1), 1e16, np.nextafter(1e16, 0), 5e-324, -0.0]
    values = [
        v
        for v in np.concatenate([bits, -bits, finite, errors, errors / 3, edges]).tolist()
        if math.isfinite(v)
    ]
    for chunk in range(0, len(values), 500):
        part = values[chunk : chunk + 500]
        obj = {"list": part, "dict": {f"k{i}": v for i, v in enumerate(part)}}
        assert indented_json(obj) == indented_json(obj, plain=True) == json.dumps(obj, indent=2)


def test_what_json_dumps_refuses_is_refused_alike():
    for obj in ([object()], {"a": {1, 2}}, {"b": b"bytes"}):
        with pytest.raises(TypeError):
            _dumps(obj)
        with pytest.raises(TypeError):
            indented_json(obj)
