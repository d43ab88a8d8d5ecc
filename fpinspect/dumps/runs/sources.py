"""Which dumps `fpinspect open` and `fpinspect compare RUN` use: the bundled sample, or a side given and the other
side found by the usual naming.

A run folder holds ``dumpgraph_af_open/<graph>`` and ``dumpgraph_af_close/<graph>`` (atc's
``.json`` or GE's ``ge_proto_*_Build.txt``; a folder of several graphs, GE's dump of every graph
of every process, is kept as the folder, and the graph each leaf's dumps name is chosen later),
``datadump_af_open/`` and ``datadump_af_close/``. Given the fusion-on side, the fusion-off
side is the same path with its last ``..._af_open`` (or ``af_open``) part renamed
``..._af_close`` (``af_close``); a graph's data folder is its graph folder with
``dumpgraph`` renamed ``datadump``. Explicit ``--close-graph`` / ``--close-data`` win.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..errors import missing
from .runtree import graph_files

#: The bundled sample run ``fpinspect open`` shows without arguments (package data: it is in the wheel).
SAMPLE = Path(__file__).resolve().parents[2] / "sample_dumps" / "regression"

OPEN, CLOSE = "af_open", "af_close"


class SourceError(Exception):
    """A given path is missing or of the wrong kind; ``str()`` is one sentence."""


@dataclass(frozen=True)
class Sources:
    """The four inputs of a comparison; without the fusion-off side (or a data folder) the
    app browses the fusion-on graph alone."""

    open_graph: str
    open_data: str | None = None
    close_graph: str | None = None
    close_data: str | None = None

    @property
    def complete(self) -> bool:
        return None not in (self.open_data, self.close_graph, self.close_data)

    @property
    def name(self) -> str:
        """A short name for the run: the folder holding the graph folder."""
        graph_folder = Path(self.open_graph).resolve()
        if not graph_folder.is_dir():
            graph_folder = graph_folder.parent
        return graph_folder.parent.name or Path(self.open_graph).name

    @property
    def run_dir(self) -> str | None:
        """The run folder holding the fusion-on graph's ``dumpgraph_*`` folder, if it is one."""
        folder = os.path.abspath(self.open_graph)
        if not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        return os.path.dirname(folder) if os.path.basename(folder).startswith("dumpgraph") else None

    @property
    def data_root(self) -> str:
        """Where a file picker starts: the folder holding the data folders (or the graph folder)."""
        folders = [f for f in (self.open_data, self.close_data) if f] or [os.path.dirname(self.open_graph)]
        return os.path.commonpath([os.path.dirname(os.path.abspath(f)) for f in folders])

    @property
    def lacking(self) -> list[str]:
        """The inputs a comparison needs that were not found, as a user names them."""
        return [
            label
            for label, value in (
                ("fusion-on data folder", self.open_data),
                ("fusion-off graph", self.close_graph),
                ("fusion-off data folder", self.close_data),
            )
            if value is None
        ]

    def how_to_compare(self) -> str:
        """What is missing for a comparison, and the command that adds it."""
        missing = self.lacking
        cmd = [
            "fpinspect",
            "open",
            _shown(self.open_graph),
            _shown(self.open_data) if self.open_data else "DATA",
            "--close-graph",
            _shown(self.close_graph) if self.close_graph else "CLOSE_GRAPH",
            "--close-data",
            _shown(self.close_data) if self.close_data else "CLOSE_DATA",
        ]
        return f"Browsing one graph (no {' or '.join(missing)} found). To compare, run: {shlex.join(cmd)}"


def _shown(path: str) -> str:
    """``path`` relative to the working folder when it lies inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def swap_side(path: str | os.PathLike) -> Path | None:
    """``path`` with its last ``af_open`` / ``..._af_open`` part renamed to the
    ``af_close`` form; ``None`` when no part is named that way."""
    parts = list(Path(path).parts)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == OPEN or parts[i].endswith("_" + OPEN):
            parts[i] = parts[i][: -len(OPEN)] + CLOSE
            return Path(*parts)
    return None


def _graph_in(folder: Path) -> Path | None:
    """The one graph file in ``folder``: its one ``.json`` file, else its one GE text graph of
    the ``Build`` stage (``ge_proto_*_Build.txt``), else its one ``ge_proto_*.txt``; ``None``
    if there is no such single file."""
    for pattern in ("*.json", "ge_proto_*_Build.txt", "ge_proto_*.txt"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0] if len(found) == 1 else None
    return None


def _close_graph_of(open_graph: Path) -> Path | None:
    """The fusion-off graph: the same file (or folder of graphs) on the ``af_close`` side, else
    the one graph file of that side's folder (GE numbers its text graphs per run)."""
    same = swap_side(open_graph)
    if same is None or same.is_file() or (open_graph.is_dir() and same.is_dir()):
        return same
    folder = swap_side(open_graph.parent)
    return _graph_in(folder) if folder is not None and folder.is_dir() else None


def _data_of(graph: Path) -> Path | None:
    """The data folder named after the graph's folder (``dumpgraph_x`` -> ``datadump_x``)."""
    folder = graph if graph.is_dir() else graph.parent
    if "dumpgraph" not in folder.name:
        return None
    data = folder.with_name(folder.name.replace("dumpgraph", "datadump"))
    return data if data.is_dir() else None


def _existing(path: Path | None, kind: str) -> str | None:
    """``path`` as a string if it exists and is of ``kind`` (``"dir"``, ``"file"``, or
    ``"graph"``: a file or a folder of graphs)."""
    if not path:
        return None
    ok = {"dir": path.is_dir, "file": path.is_file, "graph": path.exists}[kind]()
    return str(path) if ok else None


def _open_graph(path: Path) -> Path:
    """The fusion-on graph for a path given as GRAPH: a file, a graph folder holding one
    ``.json`` (that file) or several graphs (the folder), or a run folder holding
    ``dumpgraph_af_open/``."""
    if not path.exists():
        raise SourceError(f"graph {path} {missing(path).removeprefix('file ')}.")
    if path.is_file():
        return path
    for folder in (path / f"dumpgraph_{OPEN}", path):
        if not folder.is_dir():
            continue
        graph = _graph_in(folder)
        if graph is not None:
            return graph
        if graph_files(folder):
            return folder
    raise SourceError(
        f"{path} is a folder without a graph: give the graph file, a folder of graphs, or a run "
        f"folder holding dumpgraph_{OPEN}/ with .json or ge_proto_*_Build.txt files."
    )


def _one_graph_or_data(graph: str | None, data: str | None, side: str) -> None:
    """A folder of several graphs needs its side's data folder: its dumps choose the graph."""
    if graph is not None and data is None and os.path.isdir(graph):
        raise SourceError(
            f"the {side} graph {graph} is a folder of {len(graph_files(graph))} graphs: give the "
            f"{side} data folder too (its dumps choose the graph), or one graph file."
        )


def _checked(path: str | None, kind: str, what: str) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if not p.exists():
        noun = "folder" if kind == "dir" else "file"
        raise SourceError(f"{what} {path} {missing(p, noun).removeprefix(noun + ' ')}.")
    if kind == "dir" and not p.is_dir():
        raise SourceError(f"{what} {path} is a file, not a dump folder.")
    if kind == "file" and not p.is_file():
        raise SourceError(f"{what} {path} is a folder, not a graph file.")
    if kind == "graph" and p.is_dir() and not graph_files(p):
        raise SourceError(f"{what} {path} is a folder without a graph (no .json or ge_proto_*.txt file).")
    return p


def resolve(
    graph: str | None = None,
    data: str | None = None,
    close_graph: str | None = None,
    close_data: str | None = None,
    *,
    sample: Path = SAMPLE,
) -> Sources:
    """The inputs to open, from the command line's ``GRAPH DATA --close-graph --close-data``.

    No arguments: the bundled sample run. Raises :class:`SourceError` for a path that does
    not exist or is of the wrong kind, and when the sample is missing.
    """
    if graph is None:
        if data is not None or close_graph is not None or close_data is not None:
            raise SourceError("give the fusion-on GRAPH first (DATA and --close-* name the other inputs).")
        if not sample.is_dir():
            raise SourceError(
                f"the bundled sample dumps are missing ({sample} does not exist); "
                "give a dump graph: fpinspect open GRAPH [DATA]."
            )
        graph = str(sample)
    open_graph = _open_graph(Path(graph))
    open_data = _checked(data, "dir", "data folder") or _data_of(open_graph)
    close_graph_p = _checked(close_graph, "graph", "--close-graph")
    close_data_p = _checked(close_data, "dir", "--close-data")
    sources = Sources(
        open_graph=str(open_graph),
        open_data=str(open_data) if open_data else None,
        close_graph=str(close_graph_p) if close_graph_p else _existing(_close_graph_of(open_graph), "graph"),
        close_data=str(close_data_p)
        if close_data_p
        else _existing(open_data and swap_side(open_data), "dir"),
    )
    _one_graph_or_data(sources.open_graph, sources.open_data, "fusion-on")
    _one_graph_or_data(sources.close_graph, sources.close_data, "fusion-off")
    return sources
