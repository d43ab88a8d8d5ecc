"""Load a GE dump graph — atc's JSON (``atc --mode=5 --json``) or GE's ``ge_proto_*.txt`` — into
:class:`GeModel`: typed ops (:mod:`.ge_decode`), their data and control edges followed either
way, and a deterministic topological order (a networkx graph of the same on request).

Every graph of ``graph[]`` is read: the root graph and all subgraphs. The fusion mapping built
on the model is :mod:`.fusion`; GE's type tables are :mod:`.ge_types`.
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import InputError, missing
from .ge_decode import Malformed, OpInfo, as_dict, as_list, as_str, op_info
from .ge_json import decode_op

if TYPE_CHECKING:
    import networkx as nx

_GRAPH_ERROR = "GRAPH_LOAD_ERROR"


@dataclass
class GeModel:
    """A loaded dump graph.

    ``graphs`` are the graph names in file order (root first; an unnamed graph is called
    ``graph_<position>``). ``ops`` maps op name -> :class:`OpInfo` in file order, over all
    graphs. ``warnings`` lists what was tolerated: duplicate op names (first kept), references
    to undefined ops, a cycle. The edges are the ops' own inputs (:attr:`OpInfo.inputs` and
    :attr:`OpInfo.control_inputs`); :meth:`data_producers` and :meth:`data_consumers` follow
    them either way, and :attr:`nx` is the same graph in networkx, built on first use.
    """

    path: str
    graphs: list[str]
    ops: dict[str, OpInfo]
    warnings: list[str] = field(default_factory=list)
    #: names referenced but not defined -> the graph of the first op referencing them
    missing: dict[str, str] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list, repr=False)
    _consumers: dict[str, list[str]] = field(default_factory=dict, repr=False)

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

    def data_producers(self, name: str) -> list[str]:
        """The ops feeding op ``name`` through data edges, each once, in input order
        (``[]`` for a name the file references but does not define)."""
        op = self.ops.get(name)
        return list(dict.fromkeys(ref.op for ref in op.inputs if ref is not None)) if op else []

    def data_consumers(self, name: str) -> list[str]:
        """The ops fed by op (or undefined name) ``name`` through data edges, each once, in file order."""
        return list(self._consumers.get(name, ()))

    @cached_property
    def nx(self) -> nx.MultiDiGraph:
        """The graph in networkx: one node per op (attributes ``type``, ``graph``, ``attrs``,
        ``output_desc``, ``missing=False``) and one per name referenced but not defined
        (``type=None``, ``missing=True``); data edges carry ``kind="data"``, ``src_index``,
        ``dst_index``; control edges ``kind="control"``. Nodes in file order (undefined names
        where first referenced), edges op by op, data inputs before control ones."""
        import networkx  # imported here: only callers of this property need it

        g = networkx.MultiDiGraph()
        for op in self.ops.values():
            g.add_node(
                op.name,
                type=op.type,
                graph=op.graph,
                attrs=op.attrs,
                output_desc=op.output_desc,
                missing=False,
            )
        for op in self.ops.values():
            for src, attrs in _in_edges(op):
                if src not in g:
                    g.add_node(
                        src, type=None, graph=self.missing[src], attrs={}, output_desc=[], missing=True
                    )
                g.add_edge(src, op.name, **attrs)
        return g


def _in_edges(op: OpInfo) -> Iterator[tuple[str, dict]]:
    """The edges into ``op``: its data inputs in order, then its control inputs."""
    for k, ref in enumerate(op.inputs):
        if ref is not None:
            yield ref.op, {"kind": "data", "src_index": ref.index, "dst_index": k}
    for name in op.control_inputs:
        yield name, {"kind": "control"}


def _edges(
    ops: dict[str, OpInfo], graphs: list[str], warnings: list[str], on_item: Callable[[], object] | None
) -> tuple[dict[str, str], list[str], dict[str, list[str]]]:
    """The undefined names referenced (-> the graph of their first reference), the
    topological order (:meth:`GeModel.topological_order`) and each op's data consumers."""
    missing: dict[str, str] = {}
    succ: dict[str, list[str]] = {}  # every edge, with multiplicity: what the order counts
    consumers: dict[str, list[str]] = {}
    indegree: dict[str, int] = {}
    for op in ops.values():
        if on_item is not None:
            on_item()
        name = op.name
        data = [ref.op for ref in op.inputs if ref is not None]
        for src in (*data, *op.control_inputs):
            if src not in ops and src not in missing:
                missing[src] = op.graph
                warnings.append(f"op {name!r} references {src!r}, which is not in the file")
            succ.setdefault(src, []).append(name)
        for src in dict.fromkeys(data):
            consumers.setdefault(src, []).append(name)
        indegree[name] = len(data) + len(op.control_inputs)
    order = _topological_order(ops, missing, graphs, succ, indegree, warnings, on_item)
    return missing, order, consumers


def _topological_order(
    ops: dict[str, OpInfo],
    missing: dict[str, str],
    graphs: list[str],
    succ: dict[str, list[str]],
    indegree: dict[str, int],
    warnings: list[str],
    on_item: Callable[[], object] | None,
) -> list[str]:
    """Kahn's algorithm, the ready op of the smallest ``(graph rank, position)`` first:
    positions are the file order, undefined names after every op, where first referenced."""
    rank = {name: i for i, name in enumerate(graphs)}
    key: dict[str, tuple[int, int]] = {}
    for position, (name, graph) in enumerate(
        [*((op.name, op.graph) for op in ops.values()), *missing.items()]
    ):
        key[name] = (rank.get(graph, len(graphs)), position)
    ready = [(*key[name], name) for name in missing] + [
        (*key[name], name) for name, n in indegree.items() if n == 0
    ]
    heapq.heapify(ready)
    order = []
    while ready:
        if on_item is not None:
            on_item()
        name = heapq.heappop(ready)[2]
        if name in ops:
            order.append(name)
        for child in succ.get(name, ()):
            indegree[child] -= 1
            if indegree[child] == 0:
                heapq.heappush(ready, (*key[child], child))
    if len(order) < len(ops):
        warnings.append("the graph has a cycle; ops are ordered as in the file")
        return list(ops)
    return order


def load_graph(
    path: str | os.PathLike | SplitGraph | GeModel, on_item: Callable[[], object] | None = None
) -> GeModel:
    """Load the dump graph at ``path``: atc's JSON, or GE's ``ge_proto_*.txt`` (protobuf text
    format of ``ModelDef``, :mod:`.ge_text`), told apart by their first bytes; or the JSON graph
    :func:`split_json` read already, whose ops are dropped once decoded (the file's bytes would
    otherwise stay in memory beside the model: 250 MB of the inspector's peak on 100 000 ops).

    Raises :class:`InputError` (code ``GRAPH_LOAD_ERROR``) when the file is missing or
    unreadable, is not JSON, has no ``graph`` list, defines no op at all, or holds a value
    of the wrong type (the message names the op and field). A :class:`GeModel` is returned as it is
    (a graph shared by the comparisons of several dump folders is loaded once).

    ``on_item()``, if given, is called before each op of a JSON graph is decoded, and as each is
    ordered; what it raises ends the load (a caller's way to stop it halfway).
    """
    if isinstance(path, GeModel):
        return path
    if isinstance(path, SplitGraph):
        data = path.data()
        path.graphs.clear()  # its ops now live in data alone, dropped with it
        return _decoded(path.path, data, on_item)
    return _load_graph(os.fspath(path), on_item)


def _load_graph(path: str, on_item: Callable[[], object] | None) -> GeModel:
    kind = "graph file"
    try:
        head = _first_bytes(path)
        if not head:
            raise InputError(path, "is empty (or only blank lines), not a graph file", _GRAPH_ERROR)
        kind = "text graph (ge_proto_*.txt)" if looks_like_text_graph(head) else "graph JSON file"
        data = _read_text_graph(path) if kind.startswith("text") else _read_json(path)
    except FileNotFoundError:
        raise InputError(path, missing(path), _GRAPH_ERROR) from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a graph file", _GRAPH_ERROR) from None
    except UnicodeDecodeError:
        raise InputError(path, f"is not a text file (not UTF-8), so not a {kind}", _GRAPH_ERROR) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", _GRAPH_ERROR
        ) from None
    except RecursionError:
        raise InputError(path, f"is nested too deeply to be a {kind}", _GRAPH_ERROR) from None
    except OSError as exc:
        problem = missing(path) if not os.path.exists(path) else f"cannot be read ({exc.strerror or exc})"
        raise InputError(path, problem, _GRAPH_ERROR) from None
    return _decoded(path, data, on_item)


def _decoded(path: str, data: Any, on_item: Callable[[], object] | None) -> GeModel:
    try:
        return _model(path, data, on_item)
    except Malformed as exc:
        raise InputError(path, f"is not a valid GE dump graph: {exc}", _GRAPH_ERROR) from None
    except RecursionError:
        raise InputError(
            path, "is not a valid GE dump graph: its attributes are nested too deeply to read", _GRAPH_ERROR
        ) from None


class JsonGraph(msgspec.Struct):
    """One entry of ``graph[]`` as :func:`split_json` reads it: its name and its ops left undecoded."""

    name: Any = None
    op: list[msgspec.Raw] | None = None


class _Document(msgspec.Struct):
    graph: list[JsonGraph | None]


@dataclass(frozen=True)
class SplitGraph:
    """atc's JSON graph file at ``path`` read and split by :func:`split_json`: its ``graphs``, each
    op as raw JSON (:class:`msgspec.Raw`, a view of the file's bytes)."""

    path: str
    graphs: list[JsonGraph | None]

    def data(self) -> dict:
        """The dict :func:`_model` decodes (its ops still raw)."""
        return {
            "graph": [
                None if g is None else {"name": g.name, "op": g.op} if g.name is not None else {"op": g.op}
                for g in self.graphs
            ]
        }


def split_json(path: str | os.PathLike) -> SplitGraph | None:
    """Read atc's JSON graph at ``path`` and split it into its ops, each left undecoded: one pass
    of msgspec over the file, in C, that skips everything else (the model's attributes, a weight
    table); ``None`` when msgspec refuses the file (missing, not JSON, a ``ge_proto`` text graph,
    no ``graph`` list): :func:`load_graph` then reads it or says what is wrong.

    The ops are then decoded one by one (:func:`load_graph`, :func:`~.outline.outline_fused_ops`),
    each dropped once decoded: a 100 000-op graph never exists as dicts at once, and the
    interpreter lock is free between two ops, where a screen's thread needs it. This pass is
    the one long call (0.2-0.3 s for 130 MB): a caller splits once for both.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
        return SplitGraph(os.fspath(path), msgspec.json.decode(data, type=_Document).graph)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def _read_json(path: str) -> dict:
    """atc's JSON as the dict :func:`_model` decodes, through :func:`split_json`. A file msgspec
    refuses (not JSON, not UTF-8, no ``graph`` list, a graph that is not an object) is read
    again with ``json`` for its message (the line and column of a syntax error) or for
    ``_model`` to name the problem."""
    split = split_json(path)
    if split is not None:
        return split.data()
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def looks_like_text_graph(head: bytes) -> bool:
    """True if the first bytes of a file look like protobuf text rather than JSON.

    JSON graphs start with ``{``; text graphs with a field name (``graph {``, ``name: ...``)
    or a ``#`` comment. (Here, not in :mod:`.ge_text`: telling a JSON graph apart must not
    import protobuf, which only text graphs need.)
    """
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return bool(stripped) and (stripped[:1].isalpha() or stripped[:1] in b"_#")


def _first_bytes(path: str) -> bytes:
    """The file's first bytes after any byte-order mark and blank space; empty for a file that
    holds nothing else."""
    with open(path, "rb") as f:
        head = f.read(4096).removeprefix(b"\xef\xbb\xbf")
        while head:
            if stripped := head.lstrip(b" \t\r\n"):
                return stripped
            head = f.read(1 << 16)
    return b""


def _read_text_graph(path: str) -> dict:
    from .ge_text import TextGraphError, read_text_graph

    try:
        return read_text_graph(path)
    except TextGraphError as exc:
        raise InputError(path, str(exc).removeprefix("the file "), _GRAPH_ERROR) from None


def _model(path: str, data: Any, on_item: Callable[[], object] | None = None) -> GeModel:
    if not isinstance(data, dict) or not isinstance(data.get("graph"), list):
        raise Malformed(
            "it has no 'graph' list (expected the JSON of 'atc --mode=5 --json' or a ge_proto_*.txt)"
        )
    graphs: list[str] = []
    ops: dict[str, OpInfo] = {}
    warnings: list[str] = []
    for gi, raw_graph in enumerate(data["graph"]):
        if raw_graph is None:
            continue
        raw_graph = as_dict(raw_graph, f"graph[{gi}]")
        name = as_str(raw_graph.get("name") or f"graph_{gi}", f"graph[{gi}].name")
        graphs.append(name)
        for oi, raw_op in enumerate(as_list(raw_graph.get("op"), f"graph {name!r} op")):
            if on_item is not None:
                on_item()
            what = f"op #{oi} of graph {name!r}"
            if isinstance(raw_op, msgspec.Raw):  # from split_json
                op = decode_op(raw_op, name, what)
            else:
                op = None if raw_op is None else op_info(raw_op, name, what)
            if op is None:
                continue
            if op.name in ops:
                warnings.append(
                    f"op name {op.name!r} appears again in graph {name!r}; the first "
                    f"definition (graph {ops[op.name].graph!r}) is used"
                )
                continue
            ops[op.name] = op
    if not ops:
        raise Malformed("it defines no operators")
    missing, order, consumers = _edges(ops, graphs, warnings, on_item)
    return GeModel(path, graphs, ops, warnings, missing, order, consumers)
