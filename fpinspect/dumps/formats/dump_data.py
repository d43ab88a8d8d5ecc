"""The header of a raw Ascend dump file: ``toolkit.dump.DumpData``, declared from its field numbers.

Field numbers and enum values as documented in ``ascend_formats.md`` §2.2 (checked against
GE's ``graph_metadef/proto/dump_task.proto``). ``OutputDataType`` numbers GE's ``DataType``;
``OutputFormat`` numbers GE's formats (:data:`FORMATS`). Buffer and workspace types are
plain integers here (their enums have one value each).
"""

from __future__ import annotations

from functools import cache

from .ge_types import GE_DTYPES
from .protoschema import Field, build_schema

PACKAGE = "toolkit.dump"

#: ``OutputFormat`` number -> layout name as GE's graphs spell it.
FORMATS: dict[int, str] = dict(
    enumerate(
        (
            "NCHW",
            "NHWC",
            "ND",
            "NC1HWC0",
            "FRACTAL_Z",
            "NC1C0HWPAD",
            "NHWC1C0",
            "FSR_NCHW",
            "FRACTAL_DECONV",
            "C1HWNC0",
            "FRACTAL_DECONV_TRANSPOSE",
            "FRACTAL_DECONV_SP_STRIDE_TRANS",
            "NC1HWC0_C04",
            "FRACTAL_Z_C04",
            "CHWN",
            "FRACTAL_DECONV_SP_STRIDE8_TRANS",
            "HWCN",
            "NC1KHKWHWC0",
            "BN_WEIGHT",
            "FILTER_HWCK",
            "HASHTABLE_LOOKUP_LOOKUPS",
            "HASHTABLE_LOOKUP_KEYS",
            "HASHTABLE_LOOKUP_VALUE",
            "HASHTABLE_LOOKUP_OUTPUT",
            "HASHTABLE_LOOKUP_HITS",
            "C1HWNCoC0",
            "MD",
            "NDHWC",
            "FRACTAL_ZZ",
            "FRACTAL_NZ",
            "NCDHW",
            "DHWCN",
            "NDC1HWC0",
            "FRACTAL_Z_3D",
            "CN",
            "NC",
            "DHWNC",
            "FRACTAL_Z_3D_TRANSPOSE",
            "FRACTAL_ZN_LSTM",
            "FRACTAL_Z_G",
            "RESERVED",
            "ALL",
            "NULL",
            "ND_RNN_BIAS",
            "FRACTAL_ZN_RNN",
            "NYUV",
            "NYUV_A",
            "NCL",
            "FRACTAL_Z_WINO",
            "C1HWC0",
        )
    )
)
#: Layout name -> ``OutputFormat`` number.
FORMAT_NUMBERS = {name: number for number, name in FORMATS.items()}

_MESSAGES = {
    "Shape": [Field("dim", 1, "uint64", True)],
    "DimRange": [Field("dim_start", 1, "uint64"), Field("dim_end", 2, "uint64")],
    "OriginalOp": [
        Field("name", 1, "string"),
        Field("output_index", 2, "uint32"),
        Field("data_type", 3, "enum:OutputDataType"),
        Field("format", 4, "enum:OutputFormat"),
    ],
    "OpOutput": [
        Field("data_type", 1, "enum:OutputDataType"),
        Field("format", 2, "enum:OutputFormat"),
        Field("shape", 3, "msg:Shape"),
        Field("original_op", 4, "msg:OriginalOp"),
        Field("data", 5, "bytes"),
        Field("size", 6, "uint64"),
        Field("original_shape", 7, "msg:Shape"),
        Field("sub_format", 8, "int32"),
        Field("address", 9, "uint64"),
        Field("dim_range", 10, "msg:DimRange", True),
        Field("arg_index", 11, "uint32"),
    ],
    "OpInput": [
        Field("data_type", 1, "enum:OutputDataType"),
        Field("format", 2, "enum:OutputFormat"),
        Field("shape", 3, "msg:Shape"),
        Field("data", 4, "bytes"),
        Field("size", 5, "uint64"),
        Field("original_shape", 6, "msg:Shape"),
        Field("sub_format", 7, "int32"),
        Field("address", 8, "uint64"),
        Field("offset", 9, "uint64"),
        Field("arg_index", 10, "uint32"),
        Field("input_type", 11, "uint32"),
    ],
    "OpBuffer": [Field("buffer_type", 1, "int32"), Field("data", 2, "bytes"), Field("size", 3, "uint64")],
    "OpAttr": [Field("name", 1, "string"), Field("value", 2, "string")],
    "Workspace": [
        Field("type", 1, "int32"),
        Field("data", 2, "bytes"),
        Field("size", 3, "uint64"),
        Field("arg_index", 4, "uint32"),
    ],
    "DumpData": [
        Field("version", 1, "string"),
        Field("dump_time", 2, "uint64"),
        Field("output", 3, "msg:OpOutput", True),
        Field("input", 4, "msg:OpInput", True),
        Field("buffer", 5, "msg:OpBuffer", True),
        Field("op_name", 6, "string"),
        Field("attr", 7, "msg:OpAttr", True),
        Field("space", 8, "msg:Workspace", True),
        Field("dfx_message", 9, "string"),
    ],
}


@cache
def message_classes() -> dict[str, type]:
    """The message classes of ``toolkit.dump`` (``DumpData``, ``OpOutput``, ...), built once."""
    enums = {
        "OutputDataType": {name: number for number, name in GE_DTYPES.items()},
        "OutputFormat": {f"FORMAT_{name}": number for number, name in FORMATS.items()} | {"FORMAT_MAX": 0xFF},
    }
    return build_schema(PACKAGE, enums, _MESSAGES)
