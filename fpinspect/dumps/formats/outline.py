"""The fused ops of an atc JSON graph, listed before the graph is loaded: what the inspector
shows while :func:`~.graph.load_graph` builds the whole model in the background.

Reading a 100 000-op graph whole (every attribute and tensor description decoded, the
networkx graph, the topological order) takes tens of seconds; its fused ops' names, types and
original ops take one msgspec pass that skips everything else. The outline is in file order
(:meth:`~.graph.GeModel.topological_order` needs the whole graph) and its :class:`FusedOp`
views have no inputs or outputs: the model loaded after it replaces it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from .fusion import ORIGINAL_OP_NAMES, FusedOp, _names, is_fused, original_op_names
from .ge_decode import Malformed, OpInfo, decode_attr_value
from .graph import SplitGraph, split_json

#: The op attributes an outline reads; every other attribute is skipped unparsed.
ORIGINAL_OP_TYPES = "_datadump_original_op_types"
_WANTED = (ORIGINAL_OP_NAMES, ORIGINAL_OP_TYPES)


class _Entry(msgspec.Struct):
    key: Any = None
    value: msgspec.Raw = msgspec.Raw(b"null")


class _Op(msgspec.Struct):
    name: Any = None
    type: Any = None
    attr: list[_Entry | None] | dict[str, msgspec.Raw] | None = None


_op = msgspec.json.Decoder(_Op | None)


class _Strings(msgspec.Struct, forbid_unknown_fields=True):
    s: list[str]
    val_type: str = "VT_LIST_STRING"


class _StringList(msgspec.Struct, forbid_unknown_fields=True):
    """How atc writes a list of strings: ``{"list": {"s": [...], "val_type": "VT_LIST_STRING"}}``."""

    list: _Strings


_string_list = msgspec.json.Decoder(_StringList)


def _value(raw: msgspec.Raw, key: str) -> Any:
    """One wanted attribute as :func:`~.ge_decode.decode_attr_value` decodes it: atc's list of
    strings straight to a list (most of the time), any other shape through that function."""
    try:
        value = _string_list.decode(raw)
        if value.list.val_type == "VT_LIST_STRING":
            return value.list.s
    except msgspec.ValidationError:
        pass
    return decode_attr_value(msgspec.json.decode(raw), f"attr {key!r}")


def _attrs(attr: list[_Entry | None] | dict[str, msgspec.Raw] | None) -> dict[str, Any]:
    """The wanted attributes, decoded as :func:`~.ge_decode.decode_attrs` decodes them."""
    if not attr:
        return {}
    if isinstance(attr, dict):
        return {key: _value(raw, key) for key, raw in attr.items() if key in _WANTED}
    return {e.key: _value(e.value, e.key) for e in attr if e is not None and e.key in _WANTED}


def outline_fused_ops(
    path: str | os.PathLike | SplitGraph,
    types: Iterable[str] | None = None,
    *,
    first: int = 0,
    on_first: Callable[[list[FusedOp]], None] | None = None,
    on_item: Callable[[], object] | None = None,
) -> list[FusedOp] | None:
    """The fused ops (:func:`~.fusion.is_fused`) of the atc JSON graph at ``path`` (or split
    already, :func:`~.graph.split_json`) in file order (all graphs, root first; a repeated
    name's first definition), narrowed to op ``types`` if given: name, type, graph and original
    op names and types as the loaded model has them.

    ``on_first(ops)``, if given, is called once with the first ``first`` of them as soon as they
    are decoded (a screen lists them while the rest is decoded: ~10 µs an op, a second for
    100 000); not if there are fewer. A graph found malformed after them still gives ``None``.
    ``on_item()``, if given, is called before each op is decoded; what it raises ends the call.

    ``None`` when the file cannot be outlined (missing, not JSON, a ``ge_proto`` text graph, a
    value of the wrong type): :func:`~.graph.load_graph` then says what is wrong, or reads it.
    """
    split = path if isinstance(path, SplitGraph) else split_json(path)
    wanted = None if types is None else frozenset(types)
    return None if split is None else _outline(split, wanted, first if on_first else 0, on_first, on_item)


def _outline(
    split: SplitGraph,
    wanted: frozenset[str] | None,
    first: int,
    on_first: Callable | None,
    on_item: Callable[[], object] | None,
) -> list[FusedOp] | None:
    decode = _op.decode
    try:
        out, seen = [], set()
        for gi, graph in enumerate(split.graphs):
            if graph is None:
                continue
            graph_name = graph.name or f"graph_{gi}"
            if not isinstance(graph_name, str):
                return None
            for raw in graph.op or []:
                if on_item is not None:
                    on_item()
                op = decode(raw)  # op by op: the interpreter lock is free in between
                if op is None or op.name in seen:
                    continue
                if not (isinstance(op.name, str) and op.name and isinstance(op.type or "", str)):
                    return None
                seen.add(op.name)
                info = OpInfo(op.name, op.type or "", graph_name, [], [], _attrs(op.attr), [], [])
                if is_fused(info) and (wanted is None or info.type in wanted):
                    out.append(
                        FusedOp(
                            info.name,
                            info.type,
                            graph_name,
                            [],
                            original_op_names(info),
                            _names(info.attrs.get(ORIGINAL_OP_TYPES)),
                            [],
                        )
                    )
                    if len(out) == first:
                        on_first(list(out))
        return out
    except (msgspec.ValidationError, Malformed):
        return None
