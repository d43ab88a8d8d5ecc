"""A whole run: every paired leaf of two dump trees (:mod:`fpinspect.dumps.runs.runtree`), one
:class:`~.pipeline.Inspection` after the other.

Leaves are compared one at a time and each report is handed on before the next is loaded, so a
run of many ranks holds one leaf's comparison in memory at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..dumps.engine.report import Report
from ..dumps.errors import InputError
from ..dumps.runs.leafgraphs import GraphChooser, leaf_folders, pick_graphs
from ..dumps.runs.runtree import Leaf
from .pipeline import Inspection
from .settings import CompareSettings


@dataclass
class LeafRun:
    """One leaf pair's comparison: its report, or the sentence why its dumps could not be read;
    ``graphs`` the fusion-on and fusion-off graph files it was compared against."""

    on: Leaf
    off: Leaf
    report: Report | None = None
    error: str | None = None
    graphs: tuple[str, str] | None = None


def leaf_json(run: LeafRun, summary: dict | None) -> dict:
    """``run`` as an entry of a whole run's ``runs`` (``compare --format json``): its rank, graph,
    step and folders, then its ``records`` and ``summary`` (the report's ``summary()``, given once
    made), or its ``error``."""
    from ..dumps.engine.pair import json_clean

    item = {**run.on.fields(), "fusion_on": run.on.rel, "fusion_off": run.off.rel}
    if run.report is None:
        return {**item, "error": run.error, "records": [], "summary": None}
    records = [run.report.record_fields(r) for r in run.report.records]
    return {**item, "records": records, "summary": json_clean(summary)}


def inspect_leaves(
    pairs: Iterable[tuple[Leaf, Leaf]],
    graphs: tuple[GraphChooser, GraphChooser],
    settings: CompareSettings | None = None,
    *,
    kl: bool = True,
    compare_input: bool = False,
    jobs: int = 1,
    cluster=None,
    on_item: Callable[[], object] | None = None,
) -> Iterator[LeafRun]:
    """Each leaf pair of ``pairs`` (a :class:`~fpinspect.dumps.runs.runtree.Scope`'s ``compared``), taken
    one at a time as the one before is done, inspected with ``settings`` against its fusion-on
    and fusion-off graphs chosen by ``graphs``. ``cluster``, a Dask client, computes every leaf's
    records on its workers, the next leaf's already sent while this one's come back (so the
    workers never wait for the client to load and plan a leaf). ``on_item()`` is called before each
    op of a graph is decoded (what it raises ends the run: the inspector's pacing)."""
    settings = settings or CompareSettings()
    used: dict[tuple, Leaf] = {}  # (rank, step, fusion-on graph file) -> the first leaf compared against it

    def start(on: Leaf, off: Leaf) -> LeafRun | tuple:
        try:
            picks = pick_graphs(graphs, on, off)
            chosen = graphs[0].model(picks[0].file), graphs[1].model(picks[1].file)
            inspection = Inspection.load(
                chosen, leaf_folders(on, off), settings, kl=kl, jobs=jobs, cluster=cluster, on_item=on_item
            )
        except InputError as exc:
            return LeafRun(on, off, error=str(exc))
        inspection.submit()
        return on, off, picks, inspection

    def finish(started: LeafRun | tuple) -> LeafRun:
        if isinstance(started, LeafRun):
            return started
        on, off, picks, inspection = started
        report = inspection.report(compare_input=compare_input)
        warnings = [pick.warning for pick in picks if pick.warning is not None]
        first = used.setdefault((on.rank, on.step, picks[0].file), on)
        if first.graph != on.graph:
            warnings.append(
                f"the dumps of graph {first.graph} and of graph {on.graph} were both compared against "
                f"the fusion-on graph {picks[0].file}: is a graph dump missing?"
            )
        report = report.with_warnings(warnings)
        return LeafRun(on, off, report=report, graphs=(picks[0].file, picks[1].file))

    if cluster is None:
        for on, off in pairs:
            yield finish(start(on, off))
        return
    ahead = None
    try:
        for on, off in pairs:
            previous, ahead = ahead, start(on, off)
            if previous is not None:
                yield finish(previous)
        if ahead is not None:
            last, ahead = ahead, None
            yield finish(last)
    finally:
        if isinstance(ahead, tuple):  # interrupted: take back what was sent ahead
            ahead[3].withdraw()
