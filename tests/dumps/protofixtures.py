"""Write GE graphs as ``ge_proto_*.txt`` and raw dump folders, from the fixtures' JSON and arrays.

:func:`text_graph` turns the atc-JSON dict of a graph (``GraphBuilder.to_json()`` or a
``Build.json``) back into a ``ModelDef`` message and prints it in protobuf text format,
as GE's ``WriteProtoToTextFile`` does: so a test can load one graph from both formats.
"""

from __future__ import annotations

from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor

from fpinspect.dumps.ge_ir import message_classes
from fpinspect.dumps.graph import c_unescape


def _fill(msg, shape: dict) -> None:
    for key, value in shape.items():
        fd = msg.DESCRIPTOR.fields_by_name[key]
        values = value if fd.is_repeated else [value]
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            for v in values:
                sub = getattr(msg, key).add() if fd.is_repeated else getattr(msg, key)
                sub.SetInParent()
                _fill(sub, v or {})
            continue
        if fd.type == FieldDescriptor.TYPE_ENUM:
            values = [v if isinstance(v, int) else fd.enum_type.values_by_name[v].number for v in values]
        elif fd.type == FieldDescriptor.TYPE_BYTES:
            # singular bytes are C-escaped in GE's JSON, repeated ones raw
            values = [(v if fd.is_repeated else c_unescape(v)).encode("utf-8") for v in values]
        elif fd.type == FieldDescriptor.TYPE_FLOAT:
            values = [float(v) for v in values]
        elif fd.type not in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BOOL):
            values = [int(v) for v in values]
        if fd.is_repeated:
            getattr(msg, key).extend(values)
        else:
            setattr(msg, key, values[0])


def text_graph(model_json: dict) -> str:
    """The ``ModelDef`` text (protobuf text format) of an atc-JSON model dict."""
    msg = message_classes()["ModelDef"]()
    _fill(msg, model_json)
    return text_format.MessageToString(msg)
