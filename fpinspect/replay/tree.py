"""Comparing a whole run: every paired leaf of two dump trees (:mod:`fpinspect.dumps.runtree`),
one after the other, each as one comparison with replay evidence (:func:`.run.run_with_replay`).

Leaves are compared one at a time and each report is handed on before the next is loaded, so a
run of many ranks holds one leaf's comparison in memory at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..dumps.compare import DumpComparison
from ..dumps.errors import InputError
from ..dumps.report import Report
from ..dumps.runtree import Leaf, Scope
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


def compare_leaves(
    scope: Scope,
    open_graph,
    close_graph,
    *,
    comparison_options: dict,
    replay: str = "failing",
    compare_input: bool = False,
    jobs: int = 1,
    amplification: float | None = None,
) -> Iterator[LeafRun]:
    """Each compared leaf pair of ``scope`` against the graphs ``open_graph``/``close_graph`` (paths
    or split graphs, shared by every leaf), in order. ``comparison_options`` are the further keyword
    arguments of :class:`~fpinspect.dumps.compare.DumpComparison` (thresholds, fused types, ...)."""
    for on, off in scope.compared:
        try:
            comparison = DumpComparison(
                open_graph, close_graph, **leaf_arguments(on, off), **comparison_options
            )
        except InputError as exc:
            yield LeafRun(on, off, error=str(exc))
            continue
        report = run_with_replay(
            comparison, replay=replay, compare_input=compare_input, jobs=jobs, amplification=amplification
        )
        yield LeafRun(on, off, report=report)
