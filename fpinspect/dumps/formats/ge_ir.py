"""GE's ``ge.proto`` dump-graph schema (``ModelDef``), declared from its documented field numbers.

Field numbers and types as documented in ``ascend_formats.md`` §1.2 (checked against GE's
``graph_metadef/proto/ge_ir.proto``). ``attr_groups`` (symbolic shapes, ...) is left out on
purpose: readers skip it as an unknown field. Maps are repeated ``{key, value}`` entries
(see :mod:`.protoschema`).
"""

from __future__ import annotations

from functools import cache

from .ge_types import GE_DTYPES
from .protoschema import Field, build_schema

PACKAGE = "ge.proto"

#: ``AttrDef.ListValue.ListValueType``.
LIST_VALUE_TYPES = {
    "VT_LIST_NONE": 0,
    "VT_LIST_STRING": 1,
    "VT_LIST_INT": 2,
    "VT_LIST_FLOAT": 3,
    "VT_LIST_BOOL": 4,
    "VT_LIST_BYTES": 5,
    "VT_LIST_TENSOR_DESC": 6,
    "VT_LIST_TENSOR": 7,
    "VT_LIST_GRAPH": 8,
    "VT_LIST_NAMED_ATTRS": 9,
    "VT_LIST_DATA_TYPE": 10,
}


def _attr_map(number: int) -> Field:
    return Field("attr", number, "msg:AttrEntry", repeated=True)


_MESSAGES = {
    "AttrEntry": [Field("key", 1, "string"), Field("value", 2, "msg:AttrDef")],
    "ListValue": [
        Field("s", 2, "bytes", True),
        Field("i", 3, "int64", True),
        Field("f", 4, "float", True),
        Field("b", 5, "bool", True),
        Field("bt", 7, "bytes", True),
        Field("td", 8, "msg:TensorDescriptor", True),
        Field("t", 9, "msg:TensorDef", True),
        Field("g", 10, "msg:GraphDef", True),
        Field("na", 11, "msg:NamedAttrs", True),
        Field("dt", 12, "int64", True),
        Field("val_type", 20, "enum:ListValueType"),
    ],
    "ListInt": [Field("list_i", 1, "int64", True)],
    "ListListInt": [Field("list_list_i", 1, "msg:ListInt", True)],
    "ListFloat": [Field("list_f", 1, "float", True)],
    "ListListFloat": [Field("list_list_f", 1, "msg:ListFloat", True)],
    "AttrDef": [
        Field("list", 1, "msg:ListValue", oneof="value"),
        Field("s", 2, "bytes", oneof="value"),
        Field("i", 3, "int64", oneof="value"),
        Field("f", 4, "float", oneof="value"),
        Field("b", 5, "bool", oneof="value"),
        Field("bt", 7, "bytes", oneof="value"),
        Field("func", 10, "msg:NamedAttrs", oneof="value"),
        Field("td", 11, "msg:TensorDescriptor", oneof="value"),
        Field("t", 12, "msg:TensorDef", oneof="value"),
        Field("g", 13, "msg:GraphDef", oneof="value"),
        Field("list_list_int", 14, "msg:ListListInt", oneof="value"),
        Field("dt", 15, "int64", oneof="value"),
        Field("list_list_float", 16, "msg:ListListFloat", oneof="value"),
        Field("expression", 17, "bytes", oneof="value"),
    ],
    "NamedAttrs": [Field("name", 1, "string"), _attr_map(2)],
    "ShapeDef": [Field("dim", 1, "int64", True)],
    "TensorDescriptor": [
        Field("name", 1, "string"),
        Field("dtype", 2, "enum:DataType"),
        Field("shape", 3, "msg:ShapeDef"),
        Field("layout", 4, "string"),
        _attr_map(5),
        Field("has_out_attr", 9, "bool"),
        Field("size", 10, "int64"),
        Field("weight_size", 11, "int64"),
        Field("reuse_input", 12, "bool"),
        Field("output_tensor", 13, "bool"),
        Field("device_type", 14, "string"),
        Field("input_tensor", 15, "bool"),
        Field("real_dim_cnt", 16, "int64"),
        Field("reuse_input_index", 17, "int64"),
        Field("data_offset", 18, "int64"),
        Field("cmps_size", 19, "int64"),
        Field("cmps_tab", 20, "string"),
        Field("cmps_tab_offset", 21, "int64"),
    ],
    "TensorDef": [Field("desc", 1, "msg:TensorDescriptor"), Field("data", 2, "bytes")],
    "OpDef": [
        Field("name", 1, "string"),
        Field("type", 2, "string"),
        Field("input", 5, "string", True),
        _attr_map(10),
        Field("has_out_attr", 20, "bool"),
        Field("id", 21, "int64"),
        Field("stream_id", 22, "int64"),
        Field("input_name", 23, "string", True),
        Field("src_name", 24, "string", True),
        Field("src_index", 25, "int64", True),
        Field("dst_name", 26, "string", True),
        Field("dst_index", 27, "int64", True),
        Field("input_i", 28, "int64", True),
        Field("output_i", 29, "int64", True),
        Field("workspace", 30, "int64", True),
        Field("workspace_bytes", 31, "int64", True),
        Field("is_input_const", 32, "bool", True),
        Field("input_desc", 33, "msg:TensorDescriptor", True),
        Field("output_desc", 34, "msg:TensorDescriptor", True),
        Field("subgraph_name", 35, "string", True),
    ],
    "GraphDef": [
        Field("name", 1, "string"),
        Field("input", 4, "string", True),
        Field("output", 5, "string", True),
        Field("op", 6, "msg:OpDef", True),
        _attr_map(11),
    ],
    "ModelDef": [
        Field("name", 1, "string"),
        Field("version", 2, "uint32"),
        Field("custom_version", 3, "string"),
        Field("graph", 7, "msg:GraphDef", True),
        _attr_map(11),
    ],
}


@cache
def message_classes() -> dict[str, type]:
    """The message classes of ``ge.proto`` (``ModelDef``, ``OpDef``, ...), built once."""
    enums = {
        "DataType": {name: number for number, name in GE_DTYPES.items()},
        "ListValueType": LIST_VALUE_TYPES,
    }
    return build_schema(PACKAGE, enums, _MESSAGES)
