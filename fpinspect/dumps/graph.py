"""Read a GE dump graph (the JSON ``atc --mode=5 --json`` writes) into typed models and networkx.

The JSON is GE's ``ModelDef`` protobuf passed through GE's own Pb2Json, which has quirks
this module absorbs (``ascend_formats.md`` §1.3-1.4):

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

Every graph of ``graph[]`` is read: the root graph and all subgraphs. The decoding helpers
(:func:`decode_attrs`, :func:`tensor_desc`, :func:`parse_input`) raise ``ValueError`` for a
value of the wrong type; :func:`load_graph` reports that as an :class:`InputError`.
"""

from __future__ import annotations

import gc
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .errors import InputError
from .layouts import split_layout

#: Op types that autofuse creates; their outputs carry the fused -> original mapping. They are
#: fused ops whatever their attributes say; other ops are fused when they absorbed others
#: (:func:`is_fused`).
FUSED_TYPES = frozenset({"AscBackend", "FusedAscBackend"})

#: The op attribute listing the original (pre-fusion) ops merged into an op.
ORIGINAL_OP_NAMES = "_datadump_original_op_names"

#: Op types whose outputs are inputs, constants or weights, not computed values: an input
#: of a fused op fed by one of these is not compared (status ``SKIPPED_CONST_DATA``).
#: GE's data, const and variable groups (``op_type_utils.cc``) plus the other feed types of
#: ``ge_op_types.h``.
DATA_SOURCE_TYPES = frozenset({
    "Data", "RefData", "AippData", "AnnData", "QueueData",
    "Const", "Constant", "ConstPlaceHolder", "FileConstant",
    "Variable", "VariableV2",
})  # fmt: skip

#: GE ``DataType`` enum (``af_ir.proto``), number -> name.
GE_DTYPES: dict[int, str] = dict(enumerate((
    "DT_UNDEFINED", "DT_FLOAT", "DT_FLOAT16", "DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16",
    "DT_INT32", "DT_INT64", "DT_UINT32", "DT_UINT64", "DT_BOOL", "DT_DOUBLE", "DT_STRING",
    "DT_DUAL_SUB_INT8", "DT_DUAL_SUB_UINT8", "DT_COMPLEX64", "DT_COMPLEX128", "DT_QINT8",
    "DT_QINT16", "DT_QINT32", "DT_QUINT8", "DT_QUINT16", "DT_RESOURCE", "DT_STRING_REF",
    "DT_DUAL", "DT_VARIANT", "DT_BF16", "DT_INT4", "DT_UINT1", "DT_INT2", "DT_UINT2",
    "DT_COMPLEX32", "DT_HIFLOAT8", "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E8M0",
    "DT_FLOAT6_E3M2", "DT_FLOAT6_E2M3", "DT_FLOAT4_E2M1", "DT_FLOAT4_E1M2", "DT_HIFLOAT4",
)))  # fmt: skip

#: GE dtype name -> numpy / ml_dtypes dtype name, for the types numpy can hold.
GE_TO_NUMPY: dict[str, str] = {
    "DT_FLOAT": "float32", "DT_FLOAT16": "float16", "DT_BF16": "bfloat16", "DT_DOUBLE": "float64",
    "DT_FLOAT8_E4M3FN": "float8_e4m3fn", "DT_FLOAT8_E5M2": "float8_e5m2",
    "DT_FLOAT8_E8M0": "float8_e8m0fnu", "DT_FLOAT6_E3M2": "float6_e3m2fn",
    "DT_FLOAT6_E2M3": "float6_e2m3fn", "DT_FLOAT4_E2M1": "float4_e2m1fn",
    "DT_INT2": "int2", "DT_INT4": "int4", "DT_INT8": "int8", "DT_INT16": "int16",
    "DT_INT32": "int32", "DT_INT64": "int64",
    "DT_UINT1": "uint1", "DT_UINT2": "uint2", "DT_UINT8": "uint8", "DT_UINT16": "uint16",
    "DT_UINT32": "uint32", "DT_UINT64": "uint64",
    "DT_BOOL": "bool", "DT_COMPLEX64": "complex64", "DT_COMPLEX128": "complex128",
}  # fmt: skip

_GRAPH_ERROR = "GRAPH_LOAD_ERROR"


def numpy_dtype_name(ge_dtype: str | None) -> str | None:
    """The numpy (or ml_dtypes) name of a GE dtype name, e.g. ``DT_BF16`` -> ``bfloat16``.

    ``None`` for ``None`` and for GE types numpy cannot hold (``DT_HIFLOAT8``, ``DT_STRING``,
    quantised and resource types).
    """
    return GE_TO_NUMPY.get(ge_dtype) if ge_dtype else None


def is_data_source(op_type: str | None) -> bool:
    """True if ops of this type feed data, constants or weights (:data:`DATA_SOURCE_TYPES`)."""
    return op_type in DATA_SOURCE_TYPES


class _Malformed(ValueError):
    """A structural problem in the JSON; :func:`load_graph` turns it into an InputError."""


# --------------------------------------------------------------------------- scalars


_INT_TEXT = re.compile(r"[+-]?\d+")


def _as_int(value: Any, what: str) -> int:
    """An int64 field: a JSON integer, or a string of digits as some protobuf writers quote it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        return int(value)
    raise _Malformed(f"{what} is {value!r}, not an integer")


def _as_float(value: Any, what: str) -> float:
    """A float field: a JSON number, or the ``%g`` string GE writes for singular floats."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise _Malformed(f"{what} is {value!r}, not a number")


def _as_bool(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _Malformed(f"{what} is {value!r}, not true or false")


def _as_str(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    raise _Malformed(f"{what} is {value!r}, not a string")


def _as_list(value: Any, what: str) -> list:
    """A repeated field: absent (``None``) is empty."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise _Malformed(f"{what} is {type(value).__name__}, not a list")


def _as_dict(value: Any, what: str) -> dict:
    """A message field: absent or ``null`` is the empty message."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise _Malformed(f"{what} is {type(value).__name__}, not an object")


_C_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b",
                   b"f": b"\f", b"v": b"\v"}  # fmt: skip


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
    if isinstance(value, str) and not _INT_TEXT.fullmatch(value):
        return value
    number = _as_int(value, what)
    return GE_DTYPES.get(number, str(number))


# --------------------------------------------------------------------------- attributes


def _named_attrs(value: Any, what: str) -> dict:
    """``NamedAttrs`` -> ``{"name": str, "attr": {...}}``."""
    msg = _as_dict(value, what)
    return {
        "name": _as_str(msg.get("name", ""), f"{what}.name"),
        "attr": decode_attrs(msg.get("attr"), f"{what}.attr"),
    }


def _list_list(value: Any, outer: str, inner: str, convert: Callable, what: str) -> list[list]:
    """``list_list_int`` / ``list_list_float``: ``{outer: [{inner: [...]}, ...]}``."""
    rows = _as_list(_as_dict(value, what).get(outer), what)
    return [[convert(x, what) for x in _as_list(_as_dict(row, what).get(inner), what)] for row in rows]


#: ``ListValue`` member -> element decoder. Repeated floats are JSON numbers, repeated bytes raw.
_LIST_MEMBERS: dict[str, Callable[[Any, str], Any]] = {
    "s": _as_str,
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
    "VT_LIST_STRING": "s", "VT_LIST_INT": "i", "VT_LIST_FLOAT": "f", "VT_LIST_BOOL": "b",
    "VT_LIST_BYTES": "bt", "VT_LIST_TENSOR_DESC": "td", "VT_LIST_TENSOR": "t",
    "VT_LIST_GRAPH": "g", "VT_LIST_NAMED_ATTRS": "na", "VT_LIST_DATA_TYPE": "dt",
}  # fmt: skip


def _list_value(value: Any, what: str) -> list:
    """``ListValue`` -> a Python list of its one populated member.

    ``val_type`` names the member; when it is absent (``VT_LIST_NONE`` is the proto3 default)
    the first member present is used. An empty list is omitted from the JSON, so a missing
    member is ``[]``. ``null`` elements (empty messages) decode as the empty message.
    """
    msg = _as_dict(value, what)
    val_type = msg.get("val_type")
    member = _VAL_TYPES.get(val_type) if isinstance(val_type, str) else None
    if member is None:
        member = next((m for m in _LIST_MEMBERS if m in msg), None)
    if member is None:
        return []
    convert = _LIST_MEMBERS[member]
    return [convert(x, f"{what}.{member}") for x in _as_list(msg.get(member), f"{what}.{member}")]


#: ``AttrDef`` oneof member -> decoder of its value.
_ATTR_MEMBERS: dict[str, Callable[[Any, str], Any]] = {
    "s": lambda v, what: c_unescape(_as_str(v, what)),
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
    msg = _as_dict(value, what)
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
        for entry in _as_list(entries, what):
            if entry is None:
                continue
            entry = _as_dict(entry, f"{what} entry")
            pairs.append((entry.get("key", ""), entry.get("value")))
    out: dict[str, Any] = {}
    for key, value in pairs:
        key = _as_str(key, f"{what} key")
        out[key] = decode_attr_value(value, f"{what} {key!r}")
    return out


# --------------------------------------------------------------------------- tensors and ops


@dataclass(frozen=True)
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
    msg = _as_dict(value, what)
    dims = _as_list(_as_dict(msg.get("shape"), f"{what}.shape").get("dim"), f"{what}.shape.dim")
    shape = tuple(_as_int(d, f"{what}.shape.dim") for d in dims)
    layout, subformat = None, None
    if msg.get("layout"):
        try:
            layout, subformat = split_layout(_as_str(msg["layout"], f"{what}.layout"))
        except ValueError as exc:
            raise _Malformed(f"{what}: {exc}") from None
    attrs = decode_attrs(msg.get("attr"), f"{what}.attr")
    origin_format = attrs.get("origin_format")
    if origin_format is not None and not isinstance(origin_format, str):
        raise _Malformed(f"{what} origin_format is {origin_format!r}, not a string")
    origin_shape = attrs.get("origin_shape")
    if origin_shape is not None and not (
        isinstance(origin_shape, list) and all(type(d) is int for d in origin_shape)
    ):
        raise _Malformed(f"{what} origin_shape is {origin_shape!r}, not a list of integers")
    return TensorDesc(
        dtype=_dtype_name(msg["dtype"], f"{what}.dtype") if "dtype" in msg else None,
        shape=shape,
        layout=layout,
        subformat=subformat,
        origin_format=origin_format or None,
        origin_shape=None if origin_shape is None else tuple(origin_shape),
        attrs=attrs,
    )


@dataclass(frozen=True)
class InputRef:
    """A data input: output ``index`` of op ``op``."""

    op: str
    index: int


@dataclass(frozen=True)
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
        raise _Malformed(f"{what} {text!r} is not 'op:index'")
    number = _as_int(index, f"{what} {text!r} index")
    if number == -1:
        return name
    if number < 0:
        raise _Malformed(f"{what} {text!r} has a negative output index")
    return InputRef(name, number)


def _op_info(raw: Any, graph: str, what: str) -> OpInfo:
    msg = _as_dict(raw, what)
    name = _as_str(msg.get("name", ""), f"{what}.name")
    if not name:
        raise _Malformed(f"{what} has no name")
    what = f"op {name!r}"
    inputs: list[InputRef | None] = []
    controls: list[str] = []
    for text in _as_list(msg.get("input"), f"{what} input"):
        parsed = parse_input("" if text is None else _as_str(text, f"{what} input"), f"{what} input")
        if isinstance(parsed, str):
            controls.append(parsed)
        else:
            inputs.append(parsed)
    return OpInfo(
        name=name,
        type=_as_str(msg.get("type", ""), f"{what} type"),
        graph=graph,
        inputs=inputs,
        control_inputs=controls,
        attrs=decode_attrs(msg.get("attr"), f"{what} attr"),
        input_desc=[
            tensor_desc(d, f"{what} input_desc")
            for d in _as_list(msg.get("input_desc"), f"{what} input_desc")
        ],
        output_desc=[
            tensor_desc(d, f"{what} output_desc")
            for d in _as_list(msg.get("output_desc"), f"{what} output_desc")
        ],
    )


# --------------------------------------------------------------------------- the model


@dataclass
class GeModel:
    """A loaded dump graph.

    ``graphs`` are the graph names in file order (root first; an unnamed graph is called
    ``graph_<position>``). ``ops`` maps op name -> :class:`OpInfo` in file order, over all
    graphs. ``nx`` has one node per op (attributes ``type``, ``graph``, ``attrs``,
    ``output_desc``, ``missing=False``) and one per name referenced but not defined
    (``type=None``, ``missing=True``); data edges carry ``kind="data"``, ``src_index``,
    ``dst_index``; control edges ``kind="control"``. ``warnings`` lists what was tolerated:
    duplicate op names (first kept), references to undefined ops, a cycle.
    """

    path: str
    graphs: list[str]
    ops: dict[str, OpInfo]
    nx: nx.MultiDiGraph
    warnings: list[str] = field(default_factory=list)
    _order: list[str] = field(default_factory=list, repr=False)

    def has_op(self, name: str) -> bool:
        """True if an op of this exact name is defined in any graph of the file."""
        return name in self.ops

    def topological_order(self) -> list[str]:
        """Op names, producers before consumers (data and control edges).

        Deterministic: among ops ready at the same time the one that comes first in the file
        wins, and graphs are taken in file order (root first). If the edges form a cycle the
        file order is returned and :attr:`warnings` says so.
        """
        return list(self._order)


def _build_nx(ops: dict[str, OpInfo], warnings: list[str]) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    for op in ops.values():
        g.add_node(
            op.name, type=op.type, graph=op.graph, attrs=op.attrs, output_desc=op.output_desc, missing=False
        )
    for op in ops.values():
        sources = [
            (ref.op, dict(kind="data", src_index=ref.index, dst_index=k))
            for k, ref in enumerate(op.inputs)
            if ref is not None
        ]
        sources += [(name, dict(kind="control")) for name in op.control_inputs]
        for src, attrs in sources:
            if src not in ops and src not in g:
                g.add_node(src, type=None, graph=op.graph, attrs={}, output_desc=[], missing=True)
                warnings.append(f"op {op.name!r} references {src!r}, which is not in the file")
            g.add_edge(src, op.name, **attrs)
    return g


def _topological_order(
    g: nx.MultiDiGraph, ops: dict[str, OpInfo], graphs: list[str], warnings: list[str]
) -> list[str]:
    rank = {name: i for i, name in enumerate(graphs)}
    position = {name: i for i, name in enumerate(g.nodes)}  # node insertion = file order

    def key(node: str) -> tuple[int, int]:
        return rank.get(g.nodes[node]["graph"], len(graphs)), position[node]

    try:
        order = nx.lexicographical_topological_sort(g, key=key)
        return [name for name in order if name in ops]
    except nx.NetworkXUnfeasible:
        warnings.append("the graph has a cycle; ops are ordered as in the file")
        return list(ops)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while loading: reading a large graph creates
    millions of small objects that it would otherwise rescan again and again (over half
    of the load time of a 10 000-op graph)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_graph(path: str | os.PathLike) -> GeModel:
    """Load the dump graph at ``path``: atc's JSON, or GE's ``ge_proto_*.txt`` (protobuf text
    format of ``ModelDef``, :mod:`.ge_text`), told apart by their first bytes.

    Raises :class:`InputError` (code ``GRAPH_LOAD_ERROR``) when the file is missing or
    unreadable, is not JSON, has no ``graph`` list, defines no op at all, or holds a value
    of the wrong type (the message names the op and field).
    """
    with collector_paused():
        return _load_graph(os.fspath(path))


def _load_graph(path: str) -> GeModel:
    try:
        if _is_text_graph(path):
            data = _read_text_graph(path)
        else:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
    except FileNotFoundError:
        raise InputError(path, "file does not exist", _GRAPH_ERROR) from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a graph file", _GRAPH_ERROR) from None
    except UnicodeDecodeError:
        raise InputError(
            path, "is not a text file (not UTF-8), so not a graph JSON file", _GRAPH_ERROR
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", _GRAPH_ERROR
        ) from None
    except RecursionError:
        raise InputError(path, "is nested too deeply to be a graph JSON file", _GRAPH_ERROR) from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})", _GRAPH_ERROR) from None
    try:
        return _model(path, data)
    except _Malformed as exc:
        raise InputError(path, f"is not a valid GE dump graph: {exc}", _GRAPH_ERROR) from None


def _is_text_graph(path: str) -> bool:
    from .ge_text import looks_like_text_graph  # imported here: ge_text imports this module

    with open(path, "rb") as f:
        return looks_like_text_graph(f.read(64))


def _read_text_graph(path: str) -> dict:
    from .ge_text import TextGraphError, read_text_graph

    try:
        return read_text_graph(path)
    except TextGraphError as exc:
        raise InputError(path, str(exc).removeprefix("the file "), _GRAPH_ERROR) from None


def _model(path: str, data: Any) -> GeModel:
    if not isinstance(data, dict) or not isinstance(data.get("graph"), list):
        raise _Malformed("it has no 'graph' list (expected the JSON of 'atc --mode=5 --json' or a ge_proto_*.txt)")
    graphs: list[str] = []
    ops: dict[str, OpInfo] = {}
    warnings: list[str] = []
    for gi, raw_graph in enumerate(data["graph"]):
        if raw_graph is None:
            continue
        raw_graph = _as_dict(raw_graph, f"graph[{gi}]")
        name = _as_str(raw_graph.get("name") or f"graph_{gi}", f"graph[{gi}].name")
        graphs.append(name)
        for oi, raw_op in enumerate(_as_list(raw_graph.get("op"), f"graph {name!r} op")):
            if raw_op is None:
                continue
            op = _op_info(raw_op, name, f"op #{oi} of graph {name!r}")
            if op.name in ops:
                warnings.append(
                    f"op name {op.name!r} appears again in graph {name!r}; the first "
                    f"definition (graph {ops[op.name].graph!r}) is used"
                )
                continue
            ops[op.name] = op
    if not ops:
        raise _Malformed("it defines no operators")
    g = _build_nx(ops, warnings)
    order = _topological_order(g, ops, graphs, warnings)
    return GeModel(path=path, graphs=graphs, ops=ops, nx=g, warnings=warnings, _order=order)


# --------------------------------------------------------------------------- fusion mapping


@dataclass(frozen=True)
class OutputMap:
    """Output ``index`` of a fused op and the original output it replaces.

    ``origin_op`` / ``origin_index`` come from the output desc attributes
    ``_datadump_origin_name`` / ``_datadump_origin_output_index``; ``None`` when absent (the
    caller reports ``NO_MAPPING``). ``desc`` is the fused op's output description.
    """

    index: int
    origin_op: str | None
    origin_index: int | None
    desc: TensorDesc


@dataclass(frozen=True)
class FusedInput:
    """Data input ``index`` of a fused op, traced to the original output it corresponds to.

    ``src_op`` / ``src_index`` / ``src_type`` name the producer in the fusion-on graph
    (``src_type`` is ``None`` when the producer is not in the file). ``origin_op`` /
    ``origin_index`` name the output to compare with in the fusion-off graph: the producer
    itself for a plain op, the mapped origin for a fused producer (followed through chains
    of fused producers), ``None`` when a fused producer's output has no mapping. ``desc`` is
    the fused op's input description, ``None`` when the op has none for this input.
    """

    index: int
    src_op: str
    src_index: int
    src_type: str | None
    origin_op: str | None
    origin_index: int | None
    desc: TensorDesc | None


@dataclass(frozen=True)
class FusedOp:
    """A fused op (:func:`is_fused`) with its mapping to the original ops.

    ``original_op_names`` / ``original_op_types`` are the op attributes
    ``_datadump_original_op_names`` / ``_datadump_original_op_types`` (empty names dropped).
    ``inputs`` lists connected data inputs only; an unconnected optional input has no data.
    """

    name: str
    type: str
    graph: str
    outputs: list[OutputMap]
    original_op_names: list[str]
    original_op_types: list[str]
    inputs: list[FusedInput]


def output_origin(desc: TensorDesc) -> tuple[str | None, int | None]:
    """``(_datadump_origin_name, _datadump_origin_output_index)`` of an output desc.

    Each is ``None`` when its attribute is absent (an empty name counts as absent).
    """
    name = desc.attrs.get("_datadump_origin_name")
    index = desc.attrs.get("_datadump_origin_output_index")
    return (
        name if isinstance(name, str) and name else None,
        index if isinstance(index, int) and not isinstance(index, bool) else None,
    )


def original_op_names(op: OpInfo) -> list[str]:
    """The op's ``_datadump_original_op_names`` (empty names dropped; ``[]`` when absent)."""
    return _names(op.attrs.get(ORIGINAL_OP_NAMES))


def is_fused(op: OpInfo) -> bool:
    """True for a fused op: an autofuse op (:data:`FUSED_TYPES`), or any op whose
    ``_datadump_original_op_names`` names an op other than itself — FE and UB fusion results
    too, such as a ``Conv2D`` that absorbed its ``bn_*`` and ``scale_*`` ops."""
    return op.type in FUSED_TYPES or any(name != op.name for name in original_op_names(op))


def fused_type_counts(model: GeModel) -> dict[str, int]:
    """How many fused ops (:func:`is_fused`) of each type ``model`` has, most common first."""
    counts: dict[str, int] = {}
    for op in model.ops.values():
        if is_fused(op):
            counts[op.type] = counts.get(op.type, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _trace_origin(model: GeModel, ref: InputRef) -> tuple[str | None, int | None]:
    """The original output that output ``ref`` of the fusion-on graph stands for.

    A plain (or undefined) producer stands for itself. A fused producer stands for the
    origin of that output, followed again while the origin is itself a fused op of
    ``model``. ``(None, None)`` when a mapping along the way is missing or loops.
    """
    seen: set[str] = set()
    name: str | None = ref.op
    index: int | None = ref.index
    while name in model.ops and is_fused(model.ops[name]):
        descs = model.ops[name].output_desc
        if name in seen or index is None or not 0 <= index < len(descs):
            return None, None
        seen.add(name)
        name, index = output_origin(descs[index])
        if name is None or index is None:
            return None, None
    return name, index


def _names(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def fused_op(model: GeModel, name: str, *, same_name: bool = False) -> FusedOp:
    """The :class:`FusedOp` view of op ``name`` (a fused op of ``model``, :func:`is_fused`).

    ``same_name`` views an op fusion did not touch the same way: output ``i`` stands for
    output ``i`` of the op of the same name in the other run, and it lists itself as its
    original op.
    """
    op = model.ops[name]
    if same_name:
        outputs = [OutputMap(i, op.name, i, desc) for i, desc in enumerate(op.output_desc)]
    else:
        outputs = [OutputMap(i, *output_origin(desc), desc) for i, desc in enumerate(op.output_desc)]
    inputs = []
    for k, ref in enumerate(op.inputs):
        if ref is None:
            continue
        producer = model.ops.get(ref.op)
        origin_op, origin_index = _trace_origin(model, ref)
        inputs.append(
            FusedInput(
                index=k,
                src_op=ref.op,
                src_index=ref.index,
                src_type=producer.type if producer else None,
                origin_op=origin_op,
                origin_index=origin_index,
                desc=op.input_desc[k] if k < len(op.input_desc) else None,
            )
        )
    return FusedOp(
        name=op.name,
        type=op.type,
        graph=op.graph,
        outputs=outputs,
        original_op_names=[op.name] if same_name else original_op_names(op),
        original_op_types=[op.type] if same_name else _names(op.attrs.get("_datadump_original_op_types")),
        inputs=inputs,
    )


def fused_ops(model: GeModel, types: Iterable[str] | None = None) -> list[FusedOp]:
    """Every fused op of ``model`` (all graphs, :func:`is_fused`) in
    :meth:`GeModel.topological_order`; with ``types``, only fused ops of those op types."""
    return compared_ops(model, types=types)


#: Op types that compute nothing to compare: they collect graph outputs or pass control.
_NOTHING_TO_COMPARE = frozenset({"NetOutput", "End", "StreamActive", "Send", "Recv", "NoOp"})


def compared_ops(model: GeModel, other: GeModel | None = None, *, types: Iterable[str] | None = None,
                 unfused: bool = False) -> list[FusedOp]:  # fmt: skip
    """The ops of ``model`` a comparison walks, in :meth:`GeModel.topological_order`.

    Always its fused ops (:func:`fused_ops`, narrowed to ``types`` if given). With ``unfused``,
    also every op fusion left alone: not fused, defined under the same name in ``other`` (the
    fusion-off graph), and computing something (not a data source nor ``NetOutput`` and the
    like) — each viewed with ``same_name`` (see :func:`fused_op`), so that a divergence is seen
    travelling through the ops between fused ones.
    """
    wanted = None if types is None else frozenset(types)
    out = []
    for name in model.topological_order():
        op = model.ops[name]
        if is_fused(op):
            if wanted is None or op.type in wanted:
                out.append(fused_op(model, name))
        elif (unfused and other is not None and other.has_op(name) and op.output_desc
              and not is_data_source(op.type) and op.type not in _NOTHING_TO_COMPARE):  # fmt: skip
            out.append(fused_op(model, name, same_name=True))
    return out


def original_subgraph(off_model: GeModel, names: Iterable[str]) -> nx.DiGraph:
    """The subgraph of the fusion-off graph induced by ``names`` (those it defines).

    Nodes keep ``type`` and ``graph``. Parallel edges are merged: an edge has ``kind="data"``
    if any data edge joins the pair (else ``"control"``) and ``ports``, the sorted list of
    ``(src_index, dst_index)`` of its data edges. Names the fusion-off graph does not define
    are left out; check them with :meth:`GeModel.has_op`.
    """
    present = [n for n in dict.fromkeys(names) if off_model.has_op(n)]
    sub = nx.DiGraph()
    for n in present:
        sub.add_node(n, type=off_model.ops[n].type, graph=off_model.ops[n].graph)
    for u, v, data in off_model.nx.subgraph(present).edges(data=True):
        if not sub.has_edge(u, v):
            sub.add_edge(u, v, kind="control", ports=[])
        edge = sub.edges[u, v]
        if data["kind"] == "data":
            edge["kind"] = "data"
            edge["ports"] = sorted([*edge["ports"], (data["src_index"], data["dst_index"])])
    return sub
