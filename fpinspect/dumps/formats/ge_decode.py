"""Decode GE's ``ModelDef`` as protobuf JSON — a plain dict shaped like the JSON
``atc --mode=5 --json`` writes — into typed values: attributes, tensor descriptions, ops.

GE's own Pb2Json has quirks this module absorbs (``ascend_formats.md`` §1.3-1.4):

- maps are lists of ``{"key": ..., "value": {...}}``; ``AttrDef`` values are a oneof
  (``s``, ``i``, ``f``, ``b``, ``list``, ``dt``, ``td``, ...) decoded to plain Python values;
- fields at their proto3 default are omitted (no ``id``, no ``shape`` for a scalar, no
  ``layout``, no ``input``, no ``attr``), and an empty message inside a repeated field is
  ``null``;
- singular floats are strings (``"f": "0.5"``); some writers also quote int64 (``"i": "3"``);
- singular bytes (``s``) are C-escaped (``\\345``, ``\\"``);
- ``input`` holds ``"node:idx"`` per data input (``""`` when an optional input is not
  connected) then ``"node:-1"`` per control predecessor; op names may contain ``:``;
- ``layout`` may carry a sub-format: ``"FRACTAL_Z:16"``.

Any reader that produces that dict (the JSON file, or GE's ``ge_proto_*.txt`` through
:mod:`.ge_text`) shares these decoders. They raise :class:`Malformed` (a ``ValueError``) for
a value of the wrong type; :func:`~.graph.load_graph` reports it as an ``InputError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .ge_types import GE_DTYPES
from .layouts import split_layout


class Malformed(ValueError):
    """A structural problem in the graph; :func:`~.graph.load_graph` turns it into an InputError."""


# --------------------------------------------------------------------------- scalars


_INT_TEXT = re.compile(r"[+-]?\d+")


def _as_int(value: Any, what: str) -> int:
    """An int64 field: a JSON integer, or a string of digits as some protobuf writers quote it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        return int(value)
    raise Malformed(f"{what} is {value!r}, not an integer")


def _as_float(value: Any, what: str) -> float:
    """A float field: a JSON number, or the ``%g`` string GE writes for singular floats."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise Malformed(f"{what} is {value!r}, not a number")


def _as_bool(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    raise Malformed(f"{what} is {value!r}, not true or false")


def as_str(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    raise Malformed(f"{what} is {value!r}, not a string")


def as_list(value: Any, what: str) -> list:
    """A repeated field: absent (``None``) is empty."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise Malformed(f"{what} is {type(value).__name__}, not a list")


def as_dict(value: Any, what: str) -> dict:
    """A message field: absent or ``null`` is the empty message."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise Malformed(f"{what} is {type(value).__name__}, not an object")


_C_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b", b"f": b"\f", b"v": b"\v"}


def _unescape_one(m: re.Match) -> bytes:
    octal, hexa, other = m.groups()
    if octal is not None:
        return bytes([int(octal, 8) & 0xFF])
    if hexa is not None:
        return bytes([int(hexa, 16)])
    return _SIMPLE_ESCAPES.get(other, other)


def c_unescape_bytes(text: str) -> bytes:
    """The bytes ``google::protobuf::CEscape`` (or protobuf text format) wrote as ``text``.

    ``\\ooo`` (octal) and ``\\xhh`` give raw bytes, ``\\n \\r \\t \\a \\b \\f \\v`` their control
    characters, and a backslash before any other character gives that character.
    """
    return _C_ESCAPE.sub(_unescape_one, text.encode("utf-8"))


def c_unescape(text: str) -> str:
    """Undo ``google::protobuf::CEscape``, which GE applies to singular ``bytes`` (``s``):
    :func:`c_unescape_bytes` read as UTF-8 (invalid sequences become U+FFFD)."""
    if "\\" not in text:
        return text
    return c_unescape_bytes(text).decode("utf-8", errors="replace")


def _dtype_name(value: Any, what: str) -> str:
    """A ``DataType`` enum: its name as written, or its number mapped to the name."""
    if type(value) is str:  # the names a graph uses are few: each is looked at once
        name = _DTYPE_NAMES.get(value)
        if name is None:
            name = _dtype_name_of(value, what)
            if len(_DTYPE_NAMES) < 256:
                _DTYPE_NAMES[value] = name
        return name
    return _dtype_name_of(value, what)


def _dtype_name_of(value: Any, what: str) -> str:
    if isinstance(value, str) and not _INT_TEXT.fullmatch(value):
        return value
    number = _as_int(value, what)
    return GE_DTYPES.get(number, str(number))


_DTYPE_NAMES: dict[str, str] = {}


@lru_cache(maxsize=256)
def _split_layout(layout: str) -> tuple[str, int | None]:
    """:func:`~.layouts.split_layout`, once per layout name (a graph uses a few, 300 000 times)."""
    return split_layout(layout)


# --------------------------------------------------------------------------- attributes


def _named_attrs(value: Any, what: str) -> dict:
    """``NamedAttrs`` -> ``{"name": str, "attr": {...}}``."""
    msg = as_dict(value, what)
    return {
        "name": as_str(msg.get("name", ""), f"{what}.name"),
        "attr": decode_attrs(msg.get("attr"), f"{what}.attr"),
    }


def _list_list(value: Any, outer: str, inner: str, convert: Callable, what: str) -> list[list]:
    """``list_list_int`` / ``list_list_float``: ``{outer: [{inner: [...]}, ...]}``."""
    rows = as_list(as_dict(value, what).get(outer), what)
    return [[convert(x, what) for x in as_list(as_dict(row, what).get(inner), what)] for row in rows]


#: ``ListValue`` member -> element decoder. Repeated floats are JSON numbers, repeated bytes raw.
_LIST_MEMBERS: dict[str, Callable[[Any, str], Any]] = {
    "s": as_str,
    "i": _as_int,
    "f": _as_float,
    "b": _as_bool,
    "dt": _dtype_name,
    "td": lambda v, what: tensor_desc(v, what),
    "na": _named_attrs,
    "bt": lambda v, what: v,
    "t": lambda v, what: v,
    "g": lambda v, what: v,
}

#: ``ListValue.val_type`` name -> the member that holds the elements.
_VAL_TYPES = {
    "VT_LIST_STRING": "s",
    "VT_LIST_INT": "i",
    "VT_LIST_FLOAT": "f",
    "VT_LIST_BOOL": "b",
    "VT_LIST_BYTES": "bt",
    "VT_LIST_TENSOR_DESC": "td",
    "VT_LIST_TENSOR": "t",
    "VT_LIST_GRAPH": "g",
    "VT_LIST_NAMED_ATTRS": "na",
    "VT_LIST_DATA_TYPE": "dt",
}


def _list_value(value: Any, what: str) -> list:
    """``ListValue`` -> a Python list of its one populated member.

    ``val_type`` names the member; when it is absent (``VT_LIST_NONE`` is the proto3 default)
    the first member present is used. An empty list is omitted from the JSON, so a missing
    member is ``[]``. ``null`` elements (empty messages) decode as the empty message.
    """
    msg = as_dict(value, what)
    val_type = msg.get("val_type")
    member = _VAL_TYPES.get(val_type) if isinstance(val_type, str) else None
    if member is None:
        member = next((m for m in _LIST_MEMBERS if m in msg), None)
    if member is None:
        return []
    convert = _LIST_MEMBERS[member]
    return [convert(x, f"{what}.{member}") for x in as_list(msg.get(member), f"{what}.{member}")]


#: ``AttrDef`` oneof member -> decoder of its value.
_ATTR_MEMBERS: dict[str, Callable[[Any, str], Any]] = {
    "s": lambda v, what: c_unescape(as_str(v, what)),
    "i": _as_int,
    "f": _as_float,
    "b": _as_bool,
    "list": _list_value,
    "dt": _dtype_name,
    "td": lambda v, what: tensor_desc(v, what),
    "func": _named_attrs,
    "list_list_int": lambda v, what: _list_list(v, "list_list_i", "list_i", _as_int, what),
    "list_list_float": lambda v, what: _list_list(v, "list_list_f", "list_f", _as_float, what),
}


def decode_attr_value(value: Any, what: str = "attr") -> Any:
    """One ``AttrDef`` (a oneof) as a plain Python value.

    ``s`` -> str (C-escapes undone), ``i`` -> int, ``f`` -> float, ``b`` -> bool,
    ``list`` -> list, ``dt`` -> dtype name (``"DT_FLOAT16"``), ``td`` -> :class:`TensorDesc`,
    ``func`` -> ``{"name", "attr"}``, ``list_list_int``/``list_list_float`` -> list of lists.
    Members without a decoder (``t``, ``g``, ``bt``, ``expression``) are returned as the JSON
    has them. An unset oneof (``{}`` or ``null``) is ``None``.
    """
    msg = as_dict(value, what)
    for member, convert in _ATTR_MEMBERS.items():
        if member in msg:
            return convert(msg[member], f"{what}.{member}")
    return next(iter(msg.values()), None)


def decode_attrs(entries: Any, what: str = "attr") -> dict[str, Any]:
    """A protobuf map of ``AttrDef`` as a dict of plain values (see :func:`decode_attr_value`).

    Accepts GE's list of ``{"key", "value"}`` entries (``null`` entries skipped) and the
    ``{key: value}`` object other protobuf JSON writers produce. Absent is empty.
    """
    if isinstance(entries, dict):
        pairs: Iterable = entries.items()
    else:
        pairs = []
        for entry in as_list(entries, what):
            if entry is None:
                continue
            entry = as_dict(entry, f"{what} entry")
            pairs.append((entry.get("key", ""), entry.get("value")))
    out: dict[str, Any] = {}
    for key, value in pairs:
        key = as_str(key, f"{what} key")
        out[key] = decode_attr_value(value, f"{what} {key!r}")
    return out


# --------------------------------------------------------------------------- tensors and ops


@dataclass(frozen=True, slots=True)
class TensorDesc:
    """One ``TensorDescriptor``: what an op's input or output looks like on the device.

    ``dtype`` is the GE name (``"DT_FLOAT16"``, see :func:`numpy_dtype_name`), ``None`` when
    omitted (DT_UNDEFINED). ``shape`` is the storage shape (``()`` for a scalar), ``layout``
    the storage layout without sub-format and ``subformat`` the number after ``:``
    (``"FRACTAL_Z:16"`` -> ``("FRACTAL_Z", 16)``). ``origin_format`` and ``origin_shape`` come
    from the desc attributes of those names (``None`` when absent). ``attrs`` holds every
    decoded desc attribute, including ``_datadump_origin_name`` and friends.
    """

    dtype: str | None = None
    shape: tuple[int, ...] = ()
    layout: str | None = None
    subformat: int | None = None
    origin_format: str | None = None
    origin_shape: tuple[int, ...] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def full_layout(self) -> str | None:
        """The layout as GE wrote it (``"FRACTAL_Z:16"``): pass this to ``convert_layout`` so
        that grouped layouts are refused instead of converted as ungrouped."""
        if self.layout is None or self.subformat is None:
            return self.layout
        return f"{self.layout}:{self.subformat}"


def tensor_desc(value: Any, what: str = "tensor desc") -> TensorDesc:
    """Decode one ``TensorDescriptor`` (``null`` -> all defaults)."""
    msg = as_dict(value, what)
    dims = as_list(as_dict(msg.get("shape"), f"{what}.shape").get("dim"), f"{what}.shape.dim")
    return make_tensor_desc(
        msg["dtype"] if "dtype" in msg else ABSENT,
        dims,
        msg.get("layout"),
        decode_attrs(msg.get("attr"), f"{what}.attr"),
        what,
    )


#: A field the message does not have (where ``null`` would mean something else).
ABSENT: Any = object()


def make_tensor_desc(dtype: Any, dims: list, layout: Any, attrs: dict[str, Any], what: str) -> TensorDesc:
    """A :class:`TensorDesc` from a descriptor's fields as read (``dtype`` :data:`ABSENT` when
    the message has none; ``attrs`` decoded): the one place their rules live, whichever
    reader read them (:func:`tensor_desc`, :mod:`.ge_json`)."""
    shape = tuple(d if type(d) is int else _as_int(d, f"{what}.shape.dim") for d in dims)
    subformat = None
    if layout:
        if type(layout) is not str:
            as_str(layout, f"{what}.layout")  # raises
        try:
            layout, subformat = _split_layout(layout)
        except ValueError as exc:
            raise Malformed(f"{what}: {exc}") from None
    else:
        layout = None
    origin_format = attrs.get("origin_format")
    if origin_format is not None and not isinstance(origin_format, str):
        raise Malformed(f"{what} origin_format is {origin_format!r}, not a string")
    origin_shape = attrs.get("origin_shape")
    if origin_shape is not None and not (
        isinstance(origin_shape, list) and all(type(d) is int for d in origin_shape)
    ):
        raise Malformed(f"{what} origin_shape is {origin_shape!r}, not a list of integers")
    return TensorDesc(
        dtype=None
        if dtype is ABSENT
        else _dtype_name(dtype, "" if type(dtype) is str else f"{what}.dtype"),  # a name never fails
        shape=shape,
        layout=layout,
        subformat=subformat,
        origin_format=origin_format or None,
        origin_shape=None if origin_shape is None else tuple(origin_shape),
        attrs=attrs,
    )


@dataclass(frozen=True, slots=True)
class InputRef:
    """A data input: output ``index`` of op ``op``."""

    op: str
    index: int


@dataclass(frozen=True, slots=True)
class OpInfo:
    """One op of the dump graph.

    ``inputs[k]`` is the producer of data input ``k``, ``None`` for an unconnected optional
    input. ``control_inputs`` are the names of control predecessors. ``graph`` is the name
    of the graph (root or subgraph) the op was read from. ``attrs`` are the decoded op
    attributes; ``input_desc`` / ``output_desc`` the tensor descriptions in anchor order.
    """

    name: str
    type: str
    graph: str
    inputs: list[InputRef | None]
    control_inputs: list[str]
    attrs: dict[str, Any]
    input_desc: list[TensorDesc]
    output_desc: list[TensorDesc]


def parse_input(text: str, what: str = "input") -> InputRef | str | None:
    """One ``OpDef.input`` string.

    ``""`` -> ``None`` (unconnected optional input); ``"a:b:-1"`` -> ``"a:b"`` (a control
    predecessor, returned as its name); ``"a:b:2"`` -> ``InputRef("a:b", 2)``. The index is
    after the LAST colon because op names may contain colons.
    """
    if text == "":
        return None
    name, sep, index = text.rpartition(":")
    if not sep or not name:
        raise Malformed(f"{what} {text!r} is not 'op:index'")
    if index.isascii() and index.isdigit():  # most of them: no need to name the field
        return InputRef(name, int(index))
    number = _as_int(index, f"{what} {text!r} index")
    if number == -1:
        return name
    if number < 0:
        raise Malformed(f"{what} {text!r} has a negative output index")
    return InputRef(name, number)


def op_info(raw: Any, graph: str, what: str) -> OpInfo:
    """Decode one ``OpDef`` of graph ``graph`` (``what`` names it in errors until its name is known)."""
    msg = as_dict(raw, what)
    name = op_name(msg.get("name", ""), what)
    what = f"op {name!r}"
    return make_op_info(
        name,
        as_str(msg.get("type", ""), f"{what} type"),
        graph,
        as_list(msg.get("input"), f"{what} input"),
        decode_attrs(msg.get("attr"), f"{what} attr"),
        [tensor_desc(d, f"{what} input_desc") for d in as_list(msg.get("input_desc"), f"{what} input_desc")],
        [
            tensor_desc(d, f"{what} output_desc")
            for d in as_list(msg.get("output_desc"), f"{what} output_desc")
        ],
    )


def op_name(value: Any, what: str) -> str:
    """An op's ``name``: a string that is not empty."""
    name = as_str(value, f"{what}.name")
    if not name:
        raise Malformed(f"{what} has no name")
    return name


def make_op_info(
    name: str,
    type: str,
    graph: str,
    input_texts: list,
    attrs: dict[str, Any],
    input_desc: list[TensorDesc],
    output_desc: list[TensorDesc],
) -> OpInfo:
    """An :class:`OpInfo` from an op's fields as read (``input_texts`` as written, ``None`` for an
    unconnected input): :func:`parse_input` sorts them into data and control inputs."""
    what = f"op {name!r} input"
    inputs: list[InputRef | None] = []
    controls: list[str] = []
    for text in input_texts:
        parsed = parse_input("" if text is None else as_str(text, what), what)
        if isinstance(parsed, str):
            controls.append(parsed)
        else:
            inputs.append(parsed)
    return OpInfo(name, type, graph, inputs, controls, attrs, input_desc, output_desc)
