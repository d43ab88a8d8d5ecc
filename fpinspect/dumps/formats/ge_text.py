"""Read a ``ge_proto_*.txt`` dump graph (protobuf text format of ``ge.proto.ModelDef``).

The file is parsed by the ``protobuf`` package's text-format parser over fpinspect's own
schema (:mod:`.ge_ir`), streaming its lines, then walked into the very dict that
``atc --mode=5 --json`` would have written for it (GE's Pb2Json, ``ascend_formats.md``
§1.3), so that one decoder (:mod:`.graph`) reads both:

- maps are lists of ``{"key", "value"}`` entries; enums are names (``"DT_FLOAT16"``);
- only fields that are set appear (proto3 presence), oneof members even at 0;
- singular ``bytes`` (``AttrDef.s``) are C-escaped as GE's JSON has them, repeated ones
  (``list.s``) are text; floats are the shortest decimal that reads back as the same
  float32 (``0.1``, not ``0.10000000149011612``).

Fields the schema lacks (``attr_groups``, newer GE additions) are skipped, not refused.
:func:`format_text_graph` goes the other way (the atc-JSON dict to text, as GE prints it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor

from .ge_ir import message_classes

_MESSAGE = FieldDescriptor.TYPE_MESSAGE
_ENUM = FieldDescriptor.TYPE_ENUM
_BYTES = FieldDescriptor.TYPE_BYTES
_FLOAT = FieldDescriptor.TYPE_FLOAT


class TextGraphError(ValueError):
    """The text is not a ``ModelDef`` in protobuf text format; the message says where."""


def c_escape(data: bytes) -> str:
    """``google::protobuf::CEscape``: what GE's JSON holds for a singular ``bytes`` field."""
    named = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    if all(0x20 <= b < 0x7F and b not in named for b in data):
        return data.decode("ascii")
    return "".join(named.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}") for b in data)


def _float(value: float) -> float:
    return float(str(np.float32(value)))


def _scalar(fd: FieldDescriptor, value: Any, repeated: bool) -> Any:
    t = fd.type
    if t == _ENUM:
        known = fd.enum_type.values_by_number.get(value)
        return known.name if known is not None else value
    if t == _BYTES:
        return value.decode("utf-8", errors="replace") if repeated else c_escape(value)
    if t == _FLOAT:
        return _float(value)
    return value


def as_json_shape(message) -> dict[str, Any]:
    """``message`` as the dict GE's Pb2Json writes for it (see the module docstring)."""
    out: dict[str, Any] = {}
    for fd, value in message.ListFields():
        repeated = fd.is_repeated
        if fd.type == _MESSAGE:
            out[fd.name] = [as_json_shape(v) for v in value] if repeated else as_json_shape(value)
        elif repeated:
            out[fd.name] = [_scalar(fd, v, True) for v in value]
        else:
            out[fd.name] = _scalar(fd, value, False)
    return out


def _reason(exc: text_format.ParseError) -> str:
    """Where and why the parser stopped, on one line: ``line 1, column 7: Expected "{"``.

    The parser's own text is ``1:7 : 'the line': Expected "{".``, which repeats the line
    (newline included) and can be empty; the line and column say where to look."""
    line, column = exc.GetLine(), exc.GetColumn()
    text = str(exc)
    if line is not None:
        text = text.partition(" : ")[2]
    if text.startswith("'") and "': " in text:
        text = text.split("': ", 1)[1]
    reason = " ".join(text.split()).rstrip(".")
    where = f"line {line}, column {column}" if line is not None else "near its end"
    return f"{where}: {reason}" if reason else where


def parse_text_graph(lines, where: str = "the text") -> dict[str, Any]:
    """Parse ``ModelDef`` text from an iterable of lines into the atc-JSON dict shape with the
    ``protobuf`` package's text-format parser.

    Raises :class:`TextGraphError` naming the line and column of a syntax error.
    """
    model = message_classes()["ModelDef"]()
    try:
        text_format.ParseLines(lines, model, allow_unknown_field=True, allow_unknown_extension=True)
    except text_format.ParseError as exc:
        if isinstance(exc.__cause__, UnicodeDecodeError):  # the parser wraps a failed read
            raise TextGraphError(f"{where} is not UTF-8 text") from None
        raise TextGraphError(
            f"{where} is not a GE ModelDef in protobuf text format ({_reason(exc)})"
        ) from None
    except UnicodeDecodeError:
        raise TextGraphError(f"{where} is not UTF-8 text") from None
    return as_json_shape(model)


def read_text_graph(path: str) -> dict[str, Any]:
    """Read the ``ge_proto_*.txt`` at ``path`` (lines streamed, never held whole).

    Text in the one-field-per-line form GE's printer writes goes through the fast reader of
    :mod:`.ge_text_lines`; anything else through :func:`parse_text_graph`. Both give the same
    dict (tested on real GE files).
    """
    from .ge_text_lines import MAX_DEPTH, NotPrinterForm, TooDeep, depth_checked, parse_printer_lines

    try:
        try:
            with open(path, encoding="utf-8") as f:
                return parse_printer_lines(f, message_classes()["ModelDef"].DESCRIPTOR)
        except (NotPrinterForm, UnicodeDecodeError):
            pass
        with open(path, encoding="utf-8") as f:
            return parse_text_graph(depth_checked(f), "the file")
    except TooDeep as exc:
        raise TextGraphError(
            f"the file is nested too deeply to be a text graph (more than {MAX_DEPTH} levels at line {exc.args[0]})"
        ) from None


def _fill(msg, shape: dict[str, Any]) -> None:
    """Set the fields of ``msg`` from its atc-JSON dict (the inverse of :func:`as_json_shape`)."""
    from .ge_decode import c_unescape_bytes

    for key, value in shape.items():
        fd = msg.DESCRIPTOR.fields_by_name[key]
        values = value if fd.is_repeated else [value]
        if fd.type == _MESSAGE:
            for v in values:
                sub = getattr(msg, key).add() if fd.is_repeated else getattr(msg, key)
                sub.SetInParent()
                _fill(sub, v or {})
            continue
        if fd.type == _ENUM:
            values = [v if isinstance(v, int) else fd.enum_type.values_by_name[v].number for v in values]
        elif fd.type == _BYTES:  # singular bytes are C-escaped in GE's JSON, repeated ones raw
            values = [v.encode("utf-8") if fd.is_repeated else c_unescape_bytes(v) for v in values]
        elif fd.type == _FLOAT:
            values = [float(v) for v in values]
        elif fd.type not in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BOOL):
            values = [int(v) for v in values]
        if fd.is_repeated:
            getattr(msg, key).extend(values)
        else:
            setattr(msg, key, values[0])


def format_text_graph(model_json: dict[str, Any]) -> str:
    """The ``ModelDef`` of an atc-JSON dict in protobuf text format, as GE's
    ``WriteProtoToTextFile`` prints it (one field per line)."""
    model = message_classes()["ModelDef"]()
    _fill(model, model_json)
    return text_format.MessageToString(model)
