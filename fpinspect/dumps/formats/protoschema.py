"""Build protobuf message classes from field tables written in Python (no ``.proto`` files).

fpinspect reads two protobuf schemas of the Ascend tool chain: GE's ``ge.proto`` (the
``ModelDef`` of dump graphs, :mod:`.ge_ir`) and ``toolkit.dump`` (the header of raw dump
files, :mod:`.dump_data`). Both are declared as tables of documented field numbers and
types; :func:`build_schema` turns one table into a ``FileDescriptorProto`` in a private
descriptor pool and returns a message class per message, parsed by the ``protobuf``
package's own wire and text-format parsers (upb-backed where installed).

A protobuf ``map<string, V>`` is declared here as a repeated ``{key = 1, value = 2}``
message: identical on the wire and in text format, and reflection then yields the list of
``{key, value}`` entries that GE's JSON writer emits too.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Scalar type names used in the tables (``FieldDescriptorProto.TYPE_<NAME>`` their descriptor
#: types). protobuf itself is imported by :func:`build_schema`: a comparison of ``.npy`` dumps
#: never builds a schema, and importing protobuf cost its process ~20 ms.
SCALARS = ("string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "float", "double")


@dataclass(frozen=True)
class Field:
    """One field: ``kind`` is a scalar name of :data:`SCALARS`, ``"enum:Name"`` or ``"msg:Name"``.

    ``repeated`` fields of scalars are packed on the wire (proto3's default); ``oneof``
    names the oneof a field belongs to (proto3 oneof members have presence).
    """

    name: str
    number: int
    kind: str
    repeated: bool = False
    oneof: str | None = None


def build_schema(
    package: str, enums: dict[str, dict[str, int]], messages: dict[str, list[Field]]
) -> dict[str, type]:
    """Message classes (by message name) of a proto3 file ``package`` with these types.

    Enum value names live in the package scope (as in C++), so they must be unique across
    the enums of one package. Each call builds its own pool, so schemas never clash with
    each other nor with other users of the default pool.
    """
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    _T = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(
        name=f"fpinspect/{package}.proto", package=package, syntax="proto3"
    )
    for enum_name, values in enums.items():
        enum = fdp.enum_type.add(name=enum_name)
        for value_name, number in values.items():
            enum.value.add(name=value_name, number=number)
    for msg_name, fields in messages.items():
        msg = fdp.message_type.add(name=msg_name)
        oneofs: dict[str, int] = {}
        for f in fields:
            fd = msg.field.add(name=f.name, number=f.number, json_name=f.name)
            fd.label = _T.LABEL_REPEATED if f.repeated else _T.LABEL_OPTIONAL
            kind, _, ref = f.kind.partition(":")
            if kind == "msg":
                fd.type, fd.type_name = _T.TYPE_MESSAGE, f".{package}.{ref}"
            elif kind == "enum":
                fd.type, fd.type_name = _T.TYPE_ENUM, f".{package}.{ref}"
            else:
                if f.kind not in SCALARS:
                    raise KeyError(f.kind)
                fd.type = getattr(_T, f"TYPE_{f.kind.upper()}")
            if f.oneof is not None:
                if f.oneof not in oneofs:
                    oneofs[f.oneof] = len(msg.oneof_decl)
                    msg.oneof_decl.add(name=f.oneof)
                fd.oneof_index = oneofs[f.oneof]
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))
        for name in messages
    }
