"""The graphs of each leaf of a dump tree: which fusion-on and fusion-off graph files a leaf's
dumps were written by (:class:`GraphChooser`), and the data-folder arguments of one leaf pair's
comparison (:func:`leaf_arguments`, :func:`leaf_folders`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import InputError
from ..formats.datadump import DumpIndex, normalise_name
from ..formats.graph import GeModel, load_graph
from .runtree import Leaf, graph_files, scan_tree
from .sources import Sources


@dataclass(frozen=True)
class GraphPick:
    """The graph file chosen for a leaf's dumps, and why the choice was not clear-cut where it
    was not (another graph of the same id on that device, or one naming as many of the dumps)."""

    file: str
    warning: str | None = None


def leaf_arguments(on: Leaf, off: Leaf) -> dict:
    """The data folder and iteration arguments of a :class:`~fpinspect.dumps.engine.compare.DumpComparison`
    for one leaf pair: the tree's root and the leaf as its iteration where the index reads it as
    one (a numbered folder), else the leaf's folder itself."""

    def side(leaf: Leaf) -> tuple[str, str | None]:
        if leaf.rel == "." or os.path.basename(leaf.rel).isdigit():
            return leaf.folder, (None if leaf.rel == "." else leaf.rel)
        return os.path.join(leaf.folder, leaf.rel), None

    (open_data, iteration), (close_data, close_iteration) = side(on), side(off)
    if iteration is not None and close_iteration is None:
        close_iteration = "."  # the fusion-off folder itself (its own iteration would follow the other's)
    return {
        "open_data": open_data,
        "close_data": close_data,
        "iteration": iteration,
        "close_iteration": close_iteration,
    }


def leaf_folders(on: Leaf, off: Leaf) -> dict:
    """The same arguments as :func:`leaf_arguments`, naming each leaf's own folder: indexing it
    lists that folder alone, not the whole tree again for every leaf of a run."""
    return {
        "open_data": os.path.normpath(os.path.join(on.folder, on.rel)),
        "close_data": os.path.normpath(os.path.join(off.folder, off.rel)),
        "iteration": None,
        "close_iteration": None,
    }


#: The folder GE dumps a process's graphs in: ``DUMP_GRAPH_PATH/pid_{pid}_deviceid_{device}/``.
_DEVICE_FOLDER = re.compile(r"[/\\]pid_\d+_deviceid_(\d+)[/\\]")
#: GE's name of a dumped graph: ``ge_proto_{index}_graph_{graph_id}_{stage}.txt``
_GRAPH_ID = re.compile(r"ge_proto_\d+_graph_(\d+)_")


def _device_of(path: str) -> str | None:
    found = _DEVICE_FOLDER.search(path)
    return found.group(1) if found else None


def _same_graph(a: str, b: str) -> bool:
    """Whether two graph files are dumps of one graph id by one device (or one folder): GE
    compiled that graph again, and only one of them ran at the dumped step."""
    id_a, id_b = _GRAPH_ID.search(os.path.basename(a)), _GRAPH_ID.search(os.path.basename(b))
    if id_a is None or id_b is None or id_a.group(1) != id_b.group(1):
        return False
    device = _device_of(a)
    return device == _device_of(b) if device is not None else os.path.dirname(a) == os.path.dirname(b)


class GraphChooser:
    """The graph of each leaf among those a graph path gives (:func:`~fpinspect.dumps.runs.runtree.graph_files`):
    the only one, or the one whose ops the leaf's dumps name most. Each graph is loaded once and
    shared by every leaf that uses it."""

    def __init__(self, path: str, side: str):
        """Raises :class:`InputError` when ``path`` gives no graph, or its only graph cannot be read."""
        self.path, self.side = path, side
        self.files = graph_files(path)
        if not self.files:
            raise InputError(
                path, f"holds no {side} graph (no .json or ge_proto_*.txt file)", "GRAPH_LOAD_ERROR"
            )
        self._models: dict[str, GeModel] = {}
        self._names: dict[str, set[str]] = {}
        if len(self.files) == 1:
            self.model(self.files[0])

    def model(self, file: str) -> GeModel:
        if file not in self._models:
            self._models[file] = load_graph(file)
            self._names[file] = {normalise_name(name) for name in self._models[file].ops}
        return self._models[file]

    def pick(self, folder: str, iteration: str | None, rank: str | None = None) -> GraphPick:
        """The graph file of the dumps in ``folder`` (at ``iteration``) of ``rank``: among the
        graphs GE dumped for that device (``DUMP_GRAPH_PATH/pid_{pid}_deviceid_{rank}/``) where
        there are such folders, the one whose ops the dumps name most (the first in file order of
        equals), with a warning naming the others of its graph id and those naming as many ops.
        Raises :class:`InputError` when no graph names any op those dumps name."""
        if len(self.files) == 1:
            return GraphPick(self.files[0])
        files = self.files
        if rank is not None:
            files = [f for f in files if _device_of(f) == rank] or files
        dumped = {f.op_name for f in DumpIndex.scan(folder, iteration).files}
        scores = {file: len(dumped & self._names_of(file)) for file in files}
        file = max(scores, key=scores.__getitem__)  # the first of equals: files are sorted
        best = scores[file]
        if best == 0:
            raise InputError(
                folder, f"names none of the ops of the {len(self.files)} graphs in {self.path}", "NO_GRAPH"
            )
        rivals = [f for f in files if f != file and (scores[f] == best or _same_graph(f, file))]
        if not rivals:
            return GraphPick(file)
        said = "; ".join(
            f"{rival} {'is the same graph id' if _same_graph(rival, file) else 'is another graph'} "
            f"and names {scores[rival]}"
            for rival in rivals
        )
        return GraphPick(
            file, f"the {self.side} graph {file} was used: it names {best} of the dumps' ops; {said}"
        )

    def _names_of(self, file: str) -> set[str]:
        self.model(file)
        return self._names[file]


def pick_graphs(
    graphs: tuple[GraphChooser, GraphChooser], on: Leaf, off: Leaf
) -> tuple[GraphPick, GraphPick]:
    """The fusion-on and fusion-off graph files of one leaf pair (:meth:`GraphChooser.pick`)."""
    data = leaf_folders(on, off)
    return (
        graphs[0].pick(data["open_data"], data["iteration"], on.rank),
        graphs[1].pick(data["close_data"], data["close_iteration"], off.rank),
    )


def leaf_sources(sources: Sources, warn: Callable[[str], object]) -> Sources:
    """``sources`` of one leaf pair with each folder of graphs replaced by the graph file its
    side's dumps name most (:meth:`GraphChooser.pick`, the rank read from the data folder where
    it holds one rank); ``warn`` is told why a choice was not clear-cut. Raises
    :class:`InputError` when no graph of a folder names the dumps' ops."""
    chosen = {}
    for field_name, data, side in (
        ("open_graph", sources.open_data, "fusion-on"),
        ("close_graph", sources.close_data, "fusion-off"),
    ):
        graph = getattr(sources, field_name)
        if graph is None or data is None or not os.path.isdir(graph):
            continue
        ranks = {leaf.rank for leaf in scan_tree(data).leaves}
        pick = GraphChooser(graph, side).pick(data, None, ranks.pop() if len(ranks) == 1 else None)
        chosen[field_name] = pick.file
        if pick.warning is not None:
            warn(pick.warning)
    return replace(sources, **chosen)
