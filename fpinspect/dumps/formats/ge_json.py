"""One op of atc's JSON (``OpDef``, raw bytes) decoded by msgspec typed structs straight into
:class:`~.ge_decode.OpInfo`: the fields that :func:`~.ge_decode.op_info` reads, parsed and
type-checked in C, where walking the same op as a dict in Python took 3-4 times as long (the
10 s of a 100 000-op graph were mostly that).

The structs cover the shapes atc writes: attribute values ``s``, ``i``, ``f``, ``b``, ``dt``,
``td`` and ``list`` of ``s``/``i``/``f``/``b``/``dt``. An op holding anything else (another
attribute member, a value of an unexpected type, an unknown member of a oneof) is decoded by
:func:`~.ge_decode.op_info` instead, which gives its value or names its problem: the result is
the same op either way, and the rules (C-escapes, quoted numbers, layouts, descriptor
attributes) live in :mod:`.ge_decode` alone.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType

from .ge_decode import (
    _LIST_MEMBERS,
    _VAL_TYPES,
    ABSENT,
    Malformed,
    OpInfo,
    TensorDesc,
    _as_float,
    _as_int,
    _dtype_name,
    c_unescape,
    make_op_info,
    make_tensor_desc,
    op_info,
)

# ``forbid_unknown_fields`` where an unknown member changes the value (a oneof, a ListValue); the
# messages themselves have more fields than the decoders read, which are skipped.


class _List(Struct, forbid_unknown_fields=True):
    """``ListValue`` with the members atc writes."""

    val_type: Any = None
    s: list[str] | None | UnsetType = UNSET
    i: list[int | str] | None | UnsetType = UNSET
    f: list[float | str] | None | UnsetType = UNSET
    b: list[bool] | None | UnsetType = UNSET
    dt: list[int | str] | None | UnsetType = UNSET


class _Attr(Struct, forbid_unknown_fields=True):
    """``AttrDef`` (a oneof) with the members atc writes."""

    s: str | UnsetType = UNSET
    i: int | str | UnsetType = UNSET
    f: float | str | UnsetType = UNSET
    b: bool | UnsetType = UNSET
    list_: _List | None | UnsetType = msgspec.field(default=UNSET, name="list")
    dt: int | str | UnsetType = UNSET
    td: _Desc | None | UnsetType = UNSET


class _Entry(Struct):
    key: str = ""
    value: _Attr | None = None


_Attrs = list[_Entry | None] | dict[str, _Attr | None] | None


class _Shape(Struct):
    dim: list[int | str] | None = None


class _Desc(Struct):
    """``TensorDescriptor``: the fields :func:`~.ge_decode.tensor_desc` reads."""

    dtype: int | str | UnsetType = UNSET
    shape: _Shape | None = None
    layout: str | None = None
    attr: _Attrs = None


class _Op(Struct):
    """``OpDef``: the fields :func:`~.ge_decode.op_info` reads."""

    name: str = ""
    type: str = ""
    input: list[str | None] | None = None
    attr: _Attrs = None
    input_desc: list[_Desc | None] | None = None
    output_desc: list[_Desc | None] | None = None


_decoder = msgspec.json.Decoder(_Op | None)


def decode_op(raw: bytes, graph: str, what: str) -> OpInfo | None:
    """The op whose JSON is ``raw``, of graph ``graph`` (``None`` for ``null``), as
    :func:`~.ge_decode.op_info` decodes it (``what`` names it in its errors)."""
    try:
        op = _decoder.decode(raw)
        return None if op is None else _op(op, graph)
    except (msgspec.ValidationError, Malformed):
        pass  # a shape the structs do not cover, or a bad value: the dict decoder says which
    msg = msgspec.json.decode(raw)
    return None if msg is None else op_info(msg, graph, what)


def _op(op: _Op, graph: str) -> OpInfo:
    if not op.name:
        raise Malformed("no name")
    return make_op_info(
        op.name,
        op.type,
        graph,
        op.input or [],
        _attrs(op.attr),
        [_desc(d) for d in op.input_desc or ()],
        [_desc(d) for d in op.output_desc or ()],
    )


def _desc(d: _Desc | None) -> TensorDesc:
    if d is None:
        return make_tensor_desc(ABSENT, [], None, {}, "")
    dims = d.shape.dim if d.shape is not None and d.shape.dim is not None else []
    return make_tensor_desc(ABSENT if d.dtype is UNSET else d.dtype, dims, d.layout, _attrs(d.attr), "")


def _attrs(attr: _Attrs) -> dict[str, Any]:
    if not attr:
        return {}
    if isinstance(attr, dict):
        return {key: _value(value) for key, value in attr.items()}
    return {e.key: _value(e.value) for e in attr if e is not None}


def _value(a: _Attr | None) -> Any:
    """The value :func:`~.ge_decode.decode_attr_value` gives: its first member in the same order."""
    if a is None:
        return None
    if a.s is not UNSET:
        return c_unescape(a.s)
    if a.i is not UNSET:
        return a.i if type(a.i) is int else _as_int(a.i, "")
    if a.f is not UNSET:
        return a.f if type(a.f) is float else _as_float(a.f, "")
    if a.b is not UNSET:
        return a.b
    if a.list_ is not UNSET:
        return _list(a.list_)
    if a.dt is not UNSET:
        return _dtype_name(a.dt, "")
    if a.td is not UNSET:
        return _desc(a.td)
    return None


def _list(lst: _List | None) -> list:
    """The value :func:`~.ge_decode._list_value` gives."""
    if lst is None:
        return []
    vt = lst.val_type
    member = _VAL_TYPES.get(vt) if isinstance(vt, str) else None
    if member is None:
        member = next((m for m in _LIST_MEMBERS if getattr(lst, m, UNSET) is not UNSET), None)
    values = getattr(lst, member, UNSET) if member is not None else UNSET
    if values is UNSET or values is None:
        return []
    if member in ("s", "b"):
        return values
    if member == "i":
        return [x if type(x) is int else _as_int(x, "") for x in values]
    if member == "f":
        return [x if type(x) is float else _as_float(x, "") for x in values]
    return [_dtype_name(x, "") for x in values]
