"""GE's type tables: which op types fuse or feed data, and GE's ``DataType`` names and numbers
with their numpy equivalents."""

from __future__ import annotations

#: Op types that autofuse creates; their outputs carry the fused -> original mapping. They are
#: fused ops whatever their attributes say; other ops are fused when they absorbed others
#: (:func:`~.fusion.is_fused`).
FUSED_TYPES = frozenset({"AscBackend", "FusedAscBackend"})

#: Op types whose outputs are inputs, constants or weights, not computed values: an input
#: of a fused op fed by one of these is not compared (status ``SKIPPED_CONST_DATA``).
#: GE's data, const and variable groups (``op_type_utils.cc``) plus the other feed types of
#: ``ge_op_types.h``.
DATA_SOURCE_TYPES = frozenset(
    {
        "Data",
        "RefData",
        "AippData",
        "AnnData",
        "QueueData",
        "Const",
        "Constant",
        "ConstPlaceHolder",
        "FileConstant",
        "Variable",
        "VariableV2",
    }
)

#: GE ``DataType`` enum (``af_ir.proto``), number -> name.
GE_DTYPES: dict[int, str] = dict(
    enumerate(
        (
            "DT_UNDEFINED",
            "DT_FLOAT",
            "DT_FLOAT16",
            "DT_INT8",
            "DT_UINT8",
            "DT_INT16",
            "DT_UINT16",
            "DT_INT32",
            "DT_INT64",
            "DT_UINT32",
            "DT_UINT64",
            "DT_BOOL",
            "DT_DOUBLE",
            "DT_STRING",
            "DT_DUAL_SUB_INT8",
            "DT_DUAL_SUB_UINT8",
            "DT_COMPLEX64",
            "DT_COMPLEX128",
            "DT_QINT8",
            "DT_QINT16",
            "DT_QINT32",
            "DT_QUINT8",
            "DT_QUINT16",
            "DT_RESOURCE",
            "DT_STRING_REF",
            "DT_DUAL",
            "DT_VARIANT",
            "DT_BF16",
            "DT_INT4",
            "DT_UINT1",
            "DT_INT2",
            "DT_UINT2",
            "DT_COMPLEX32",
            "DT_HIFLOAT8",
            "DT_FLOAT8_E5M2",
            "DT_FLOAT8_E4M3FN",
            "DT_FLOAT8_E8M0",
            "DT_FLOAT6_E3M2",
            "DT_FLOAT6_E2M3",
            "DT_FLOAT4_E2M1",
            "DT_FLOAT4_E1M2",
            "DT_HIFLOAT4",
        )
    )
)

#: GE dtype name -> numpy / ml_dtypes dtype name, for the types numpy can hold.
GE_TO_NUMPY: dict[str, str] = {
    "DT_FLOAT": "float32",
    "DT_FLOAT16": "float16",
    "DT_BF16": "bfloat16",
    "DT_DOUBLE": "float64",
    "DT_FLOAT8_E4M3FN": "float8_e4m3fn",
    "DT_FLOAT8_E5M2": "float8_e5m2",
    "DT_FLOAT8_E8M0": "float8_e8m0fnu",
    "DT_FLOAT6_E3M2": "float6_e3m2fn",
    "DT_FLOAT6_E2M3": "float6_e2m3fn",
    "DT_FLOAT4_E2M1": "float4_e2m1fn",
    "DT_INT2": "int2",
    "DT_INT4": "int4",
    "DT_INT8": "int8",
    "DT_INT16": "int16",
    "DT_INT32": "int32",
    "DT_INT64": "int64",
    "DT_UINT1": "uint1",
    "DT_UINT2": "uint2",
    "DT_UINT8": "uint8",
    "DT_UINT16": "uint16",
    "DT_UINT32": "uint32",
    "DT_UINT64": "uint64",
    "DT_BOOL": "bool",
    "DT_COMPLEX64": "complex64",
    "DT_COMPLEX128": "complex128",
}


def numpy_dtype_name(ge_dtype: str | None) -> str | None:
    """The numpy (or ml_dtypes) name of a GE dtype name, e.g. ``DT_BF16`` -> ``bfloat16``.

    ``None`` for ``None`` and for GE types numpy cannot hold (``DT_HIFLOAT8``, ``DT_STRING``,
    quantised and resource types).
    """
    return GE_TO_NUMPY.get(ge_dtype) if ge_dtype else None


def is_data_source(op_type: str | None) -> bool:
    """True if ops of this type feed data, constants or weights (:data:`DATA_SOURCE_TYPES`)."""
    return op_type in DATA_SOURCE_TYPES
