"""Comparing a whole run: every paired leaf of two dump trees (:mod:`fpinspect.dumps.runtree`),
one after the other, each as one comparison with replay evidence (:func:`.run.run_with_replay`).

Leaves are compared one at a time and each report is handed on before the next is loaded, so a
run of many ranks holds one leaf's comparison in memory at a time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..dumps.compare import DumpComparison
from ..dumps.datadump import DumpIndex, normalise_name
from ..dumps.errors import InputError
from ..dumps.graph import GeModel, load_graph
from ..dumps.report import Report
from ..dumps.runtree import Leaf, Scope, graph_files
from .run import run_with_replay


@dataclass
class LeafRun:
    """One leaf pair's comparison: its report, or the sentence why its dumps could not be read."""

    on: Leaf
    off: Leaf
    report: Report | None = None
    error: str | None = None


def leaf_arguments(on: Leaf, off: Leaf) -> dict:
    """The data folder and iteration arguments of a :class:`~fpinspect.dumps.compare.DumpComparison`
    for one leaf pair: the tree's root and the leaf as its iteration where the index reads it as
    one (a numbered folder), else the leaf's folder itself."""

    def side(leaf: Leaf) -> tuple[str, str | None]:
        if leaf.rel == "." or os.path.basename(leaf.rel).isdigit():
            return leaf.folder, (None if leaf.rel == "." else leaf.rel)
        return os.path.join(leaf.folder, leaf.rel), None

    (open_data, iteration), (close_data, close_iteration) = side(on), side(off)
    return {
        "open_data": open_data,
        "close_data": close_data,
        "iteration": iteration,
        "close_iteration": close_iteration,
    }


#: The folder GE dumps a process's graphs in: ``DUMP_GRAPH_PATH/pid_{pid}_deviceid_{device}/``.
_DEVICE_FOLDER = re.compile(r"[/\\]pid_\d+_deviceid_(\d+)[/\\]")


def _device_of(path: str) -> str | None:
    found = _DEVICE_FOLDER.search(path)
    return found.group(1) if found else None


class GraphChooser:
    """The graph of each leaf among those a graph path gives (:func:`~fpinspect.dumps.runtree.graph_files`):
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

    def choose(self, folder: str, iteration: str | None, rank: str | None = None) -> GeModel:
        """The graph of :meth:`choose_file`, loaded."""
        return self.model(self.choose_file(folder, iteration, rank))

    def choose_file(self, folder: str, iteration: str | None, rank: str | None = None) -> str:
        """The graph file of the dumps in ``folder`` (at ``iteration``) of ``rank``: among the
        graphs GE dumped for that device (``DUMP_GRAPH_PATH/pid_{pid}_deviceid_{rank}/``) where
        there are such folders, the one whose ops the dumps name most. Raises :class:`InputError`
        when no graph names any op those dumps name."""
        if len(self.files) == 1:
            return self.files[0]
        files = self.files
        if rank is not None:
            files = [f for f in files if _device_of(f) == rank] or files
        dumped = {f.op_name for f in DumpIndex.scan(folder, iteration).files}
        scores = [(len(dumped & self._names_of(file)), file) for file in files]
        best, file = max(scores, key=lambda s: s[0])  # the first of equals: files are sorted
        if best == 0:
            raise InputError(
                folder, f"names none of the ops of the {len(self.files)} graphs in {self.path}", "NO_GRAPH"
            )
        return file

    def _names_of(self, file: str) -> set[str]:
        self.model(file)
        return self._names[file]


def compare_leaves(
    scope: Scope,
    graphs: tuple[GraphChooser, GraphChooser],
    *,
    comparison_options: dict,
    replay: str = "failing",
    compare_input: bool = False,
    jobs: int = 1,
    amplification: float | None = None,
    cluster=None,
) -> Iterator[LeafRun]:
    """Each compared leaf pair of ``scope``, in order, against its fusion-on and fusion-off graphs
    chosen by ``graphs``. ``comparison_options`` are the further keyword arguments of
    :class:`~fpinspect.dumps.compare.DumpComparison` (thresholds, fused types, ...); ``cluster``, a
    Dask client, computes every leaf's records on its workers, the next leaf's already sent while
    this one's come back (so the workers never wait for the client to load and plan a leaf)."""

    def start(on, off) -> LeafRun | tuple:
        data = leaf_arguments(on, off)
        try:
            chosen = (
                graphs[0].choose(data["open_data"], data["iteration"], on.rank),
                graphs[1].choose(data["close_data"], data["close_iteration"], off.rank),
            )
            comparison = DumpComparison(*chosen, **data, **comparison_options)
        except InputError as exc:
            return LeafRun(on, off, error=str(exc))
        if cluster is not None:
            comparison.submit_to(cluster)
        return on, off, comparison

    def finish(started: LeafRun | tuple) -> LeafRun:
        if isinstance(started, LeafRun):
            return started
        on, off, comparison = started
        report = run_with_replay(
            comparison,
            replay=replay,
            compare_input=compare_input,
            jobs=jobs,
            amplification=amplification,
            cluster=cluster,
        )
        return LeafRun(on, off, report=report)

    if cluster is None:
        for on, off in scope.compared:
            yield finish(start(on, off))
        return
    ahead = None
    try:
        for on, off in scope.compared:
            previous, ahead = ahead, start(on, off)
            if previous is not None:
                yield finish(previous)
        if ahead is not None:
            done, ahead = ahead, None
            yield finish(done)
    finally:
        if isinstance(ahead, tuple):  # interrupted: take back what was sent ahead
            ahead[2].cancel_submitted(cluster)
