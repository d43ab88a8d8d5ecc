"""A fast reader for protobuf text as GE writes it: one field per line.

GE writes ``ge_proto_*.txt`` with protobuf's ``TextFormat::Printer``: every line is
``name {``, ``}`` or ``name: value``. The ``protobuf`` package's text parser is pure Python
and reads about 2.5 MB/s, and walking its messages into dicts halves that again (see
``benchmarks/bench_inputs.py``): minutes for the hundreds of MB a large model's graph takes.
This reader handles exactly that printer form, line by line, over the same schema
(:mod:`.ge_ir`'s descriptors), and builds the same dicts as :func:`.ge_text.as_json_shape`.
Anything outside the printer form — several fields on a line, ``<`` blocks, ``[`` lists,
comments, ``\\u`` escapes, a singular field set twice, an unknown enum name — raises
:class:`NotPrinterForm`, and the caller parses the text with the ``protobuf`` package
instead (which also gives the precise error for text that is not valid at all).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

import numpy as np
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from .ge_decode import c_unescape_bytes

_INT_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
    }
)
_BOOLS = {
    "true": True,
    "True": True,
    "t": True,
    "1": True,
    "false": False,
    "False": False,
    "f": False,
    "0": False,
}


class NotPrinterForm(ValueError):
    """The text leaves the one-field-per-line printer form; parse it with ``text_format``."""


class TooDeep(ValueError):
    """Blocks nested deeper than :data:`MAX_DEPTH` (GE's own graphs nest a handful of levels):
    refused at a fixed depth, whatever the interpreter's recursion limit, before any decoding
    recurses into them. ``args[0]`` is the line number."""


#: The deepest nesting of blocks a text graph may have.
MAX_DEPTH = 100

_QUOTED = re.compile(r""""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'""")
_BRACKETS = re.compile(r"[{}<>]")


def depth_checked(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` as they are, raising :class:`TooDeep` once blocks (``{}`` or ``<>``, outside
    quoted strings) nest deeper than :data:`MAX_DEPTH`: for text in any layout, also one line."""
    depth = 0
    for number, line in enumerate(lines, 1):
        for bracket in _BRACKETS.finditer(_QUOTED.sub("", line)):
            depth += 1 if bracket.group() in "{<" else -1
            if depth > MAX_DEPTH:
                raise TooDeep(number)
        yield line


def _shortest_float32(text: str) -> float:
    value = float(text[:-1] if text[-1:] in "fF" and not text.lower().endswith("inf") else text)
    return float(str(np.float32(value)))


def _string_body(token: str) -> str:
    if len(token) < 2 or token[0] != token[-1] or token[0] not in "\"'":
        raise NotPrinterForm(token)
    body = token[1:-1]
    if "\\u" in body or "\\U" in body:
        raise NotPrinterForm(token)
    return body


def _c_escape_if_needed(body: str, c_escape) -> str:
    """A singular bytes value as GE's JSON holds it (C-escaped), from its text-format body."""
    if "\\" not in body and body.isascii():
        return body
    return c_escape(c_unescape_bytes(body))


@cache
def _fields(desc: Descriptor) -> dict[str, tuple]:
    """``name -> (is a message, repeated, value converter or sub-message descriptor, default to
    leave out)``."""
    from .ge_text import c_escape

    out = {}
    for fd in desc.fields:
        t = fd.type
        if t == FieldDescriptor.TYPE_MESSAGE:
            convert: Any = fd.message_type
        elif t == FieldDescriptor.TYPE_STRING:

            def convert(tok):
                body = _string_body(tok)
                return c_unescape_bytes(body).decode("utf-8") if "\\" in body else body
        elif t == FieldDescriptor.TYPE_BYTES:
            if fd.is_repeated:

                def convert(tok):
                    body = _string_body(tok)
                    return c_unescape_bytes(body).decode("utf-8", errors="replace") if "\\" in body else body
            else:

                def convert(tok):
                    return _c_escape_if_needed(_string_body(tok), c_escape)
        elif t in _INT_TYPES:
            convert = int
        elif t in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
            convert = _shortest_float32
        elif t == FieldDescriptor.TYPE_BOOL:
            convert = _BOOLS.__getitem__
        elif t == FieldDescriptor.TYPE_ENUM:
            names = {v.name: v.name for v in fd.enum_type.values}
            numbers = {str(v.number): v.name for v in fd.enum_type.values}

            def convert(tok, names=names, numbers=numbers):
                return (
                    names.get(tok)
                    or numbers.get(tok)
                    or (int(tok) if tok.lstrip("-").isdigit() else names[tok])
                )
        else:
            raise NotPrinterForm(f"field type {t}")
        # proto3 scalars without presence are not "set" at their default: leave them out
        default = None
        if not fd.is_repeated and not fd.has_presence and t != FieldDescriptor.TYPE_MESSAGE:
            default = (
                fd.enum_type.values_by_number[0].name if t == FieldDescriptor.TYPE_ENUM else fd.default_value
            )
            if t == FieldDescriptor.TYPE_BYTES:
                default = ""
        out[fd.name] = (t == FieldDescriptor.TYPE_MESSAGE, fd.is_repeated, convert, default)
    return out


def parse_printer_lines(lines: Iterable[str], root: Descriptor) -> dict[str, Any]:
    """The dict of the ``root`` message written in ``lines`` (see the module docstring)."""
    stack: list[tuple[dict, dict]] = []
    current: dict[str, Any] = {}
    table = _fields(root)
    skipping = 0  # depth inside a block of a field the schema lacks
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if skipping:
            if line == "}":
                skipping -= 1
            elif line.endswith("{") and not line.startswith(('"', "'")) and ":" not in line:
                skipping += 1
                if len(stack) + skipping > MAX_DEPTH:
                    raise TooDeep(number)
            elif line.endswith("{"):
                raise NotPrinterForm(line)
            continue
        if line == "}":
            if not stack:
                raise NotPrinterForm("unbalanced }")
            current, table = stack.pop()
            continue
        if line.endswith(" {"):
            name = line[:-2]
            entry = table.get(name)
            if entry is None:
                if not name.isidentifier():
                    raise NotPrinterForm(line)
                skipping = 1
                continue
            is_message, repeated, sub, _ = entry
            if not is_message:
                raise NotPrinterForm(line)
            child: dict[str, Any] = {}
            if repeated:
                current.setdefault(name, []).append(child)
            elif name in current:
                raise NotPrinterForm(f"{name} set twice")
            else:
                current[name] = child
            stack.append((current, table))
            if len(stack) + skipping > MAX_DEPTH:
                raise TooDeep(number)
            current, table = child, _fields(sub)
            continue
        name, sep, token = line.partition(": ")
        if not sep or line[0] in "#[" or not name.isidentifier():
            raise NotPrinterForm(line)
        entry = table.get(name)
        if entry is None:
            continue  # a scalar the schema lacks
        is_message, repeated, convert, default = entry
        if is_message:
            raise NotPrinterForm(line)
        try:
            value = convert(token)
        except (KeyError, ValueError, UnicodeDecodeError):
            raise NotPrinterForm(line) from None
        if repeated:
            current.setdefault(name, []).append(value)
        elif name in current:
            raise NotPrinterForm(f"{name} set twice")
        elif value != default or default is None:
            current[name] = value
    if stack or skipping:
        raise NotPrinterForm("unclosed block")
    return current
