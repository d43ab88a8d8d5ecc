"""What a RUN argument names, for every command: one resolver.

RUN is a capture folder or a run folder (``dumpgraph_af_open/``, ``datadump_af_open/`` and their
``af_close`` siblings, :mod:`fpinspect.dumps.runs.sources`) whose data folders hold one leaf of dumps
or whole rank/graph/step trees (:mod:`fpinspect.dumps.runs.runtree`), or a saved ``compare --format
json`` report of one leaf or of a whole run. :func:`choose_inputs` says what a comparison of it
compares (one leaf pair, or a whole tree); a command that needs one leaf (``repro``,
``switches``, ``report`` of one leaf) takes it with ``--ranks/--graphs/--steps``
(:func:`leaf_inputs`, :func:`saved_leaf`), and without them hears which leaves there are."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..dumps.errors import InputError
from ..dumps.runs.leafgraphs import GraphChooser, leaf_arguments, pick_graphs
from ..dumps.runs.runtree import Leaf, pair_trees, parse_choice, scan_tree
from ..dumps.runs.sources import SourceError, Sources, resolve


class RunError(ValueError):
    """A RUN (or leaf choice) that cannot be used: one sentence."""


@dataclass
class Inputs:
    """What a comparison compares: one leaf pair (``graphs``, paths or loaded graphs, and ``data``, the
    data folder and iteration arguments of :class:`~fpinspect.dumps.engine.compare.DumpComparison`), or a
    whole tree (``scope`` and the graph ``choosers`` of its leaves); ``warnings`` about the graphs
    chosen for one leaf pair."""

    graphs: tuple = ()
    data: dict = field(default_factory=dict)
    scope: object = None
    choosers: tuple = ()
    warnings: list[str] = field(default_factory=list)


def run_sources(run: str) -> Sources:
    """The four inputs of the run folder (or capture folder, or fusion-on graph) ``run``, found by
    the naming ``open`` uses; raises :class:`RunError` naming what is missing."""
    try:
        sources = resolve(run)
    except SourceError as exc:
        raise RunError(str(exc)) from None
    if not sources.complete:
        raise RunError(
            f"{run} is not a whole run: no {' and no '.join(sources.lacking)} found beside it (a run folder holds "
            "dumpgraph_af_open/, dumpgraph_af_close/, datadump_af_open/ and datadump_af_close/)."
        )
    return sources


def leaf_names(leaves: list[Leaf]) -> str:
    """The leaves to choose from, as ``--ranks/--graphs/--steps`` name them."""
    shown = "; ".join(leaf.label() for leaf in leaves[:8])
    return shown + (f"; ... ({len(leaves)} in all)" if len(leaves) > 8 else "")


def choose_inputs(
    graphs: tuple,
    data: tuple,
    iterations: tuple = (None, None),
    *,
    ranks=None,
    graphs_chosen=None,
    steps=None,
    one_leaf: bool = False,
) -> Inputs:
    """The inputs of a comparison. ``--iteration`` names one folder of each side, as it always
    did; else both data folders are read as dump trees (:mod:`fpinspect.dumps.runs.runtree`): one leaf
    pair keeps today's report, several make a run's. ``one_leaf``: what needs one leaf alone
    (Model Explorer's format, ``repro``, ``report``): one leaf pair compared is taken, whatever
    was left out; more than one is a :class:`RunError` naming them. Raises :class:`RunError`
    with one sentence for anything that cannot be compared."""
    if any(i is not None for i in iterations):
        if ranks or graphs_chosen or steps:
            raise RunError(
                "--iteration chooses one folder; it cannot be combined with --ranks, --graphs or --steps."
            )
        return Inputs(
            graphs,
            dict(zip(("open_data", "close_data", "iteration", "close_iteration"), (*data, *iterations))),
        )
    try:
        chosen_steps = parse_choice(steps, "steps")
        on, off = scan_tree(data[0]), scan_tree(data[1])
        scope = pair_trees(
            on,
            off,
            ranks=parse_choice(ranks, "ranks"),
            graphs=parse_choice(graphs_chosen, "graphs"),
            steps="all" if steps is not None and chosen_steps is None else chosen_steps,
        )
        if not scope.compared:
            left_out = "; ".join(f"{s['what']}: {s['why']}" for s in scope.skipped)
            hint = ""
            if {on.layout, off.layout} <= {"steps", "flat"}:  # folders DumpIndex reads as iterations
                hint = " --iteration A --close-iteration B compares the folders A and B (. for the data folder itself)."
            raise RunError(f"the two dump trees have nothing to compare ({left_out}).{hint}")
        one = leaf_arguments(*scope.compared[0])
        if one_leaf and len(scope.compared) > 1:
            raise RunError(
                f"this needs one leaf of the dump trees, and {len(scope.compared)} are compared: choose one "
                f"with --ranks, --graphs and --steps ({leaf_names([on for on, _ in scope.compared])})."
            )
        single = scope.one_leaf or one_leaf
        if single and not any(os.path.isdir(g) for g in graphs if isinstance(g, str)):
            return Inputs(graphs, one, warnings=list(scope.warnings))
        choosers = GraphChooser(graphs[0], "fusion-on"), GraphChooser(graphs[1], "fusion-off")
        if not single:
            return Inputs(scope=scope, choosers=choosers)
        # one leaf pair and a folder of graphs: the graphs these dumps name
        picks = pick_graphs(choosers, *scope.compared[0])
        chosen = choosers[0].model(picks[0].file), choosers[1].model(picks[1].file)
        picked = [p.warning for p in picks if p.warning is not None]
        return Inputs(chosen, one, warnings=[*scope.warnings, *picked])
    except (ValueError, InputError) as exc:
        if isinstance(exc, RunError):
            raise
        raise RunError(str(exc)) from None


def run_inputs(run: str, *, ranks=None, graphs=None, steps=None, one_leaf: bool = False) -> Inputs:
    """:func:`choose_inputs` of the run ``run`` (:func:`run_sources`)."""
    s = run_sources(run)
    return choose_inputs(
        (s.open_graph, s.close_graph),
        (s.open_data, s.close_data),
        ranks=ranks,
        graphs_chosen=graphs,
        steps=steps,
        one_leaf=one_leaf,
    )


def leaf_inputs(run: str, *, ranks=None, graphs=None, steps=None) -> Inputs:
    """The one leaf pair of ``run`` to compare (chosen with ``--ranks/--graphs/--steps`` where its
    data folders are trees of several)."""
    return run_inputs(run, ranks=ranks, graphs=graphs, steps=steps, one_leaf=True)


def _label(value) -> str | None:
    return None if value is None else str(value)


def saved_leaves(report: dict, path: str, *, ranks=None, graphs=None, steps=None) -> list[dict]:
    """The leaves of a saved whole-run report (``compare --format json`` of dump trees: its
    ``runs``) that ``--ranks/--graphs/--steps`` choose, each ``{"rank", "graph", "step",
    "records", "summary", ...}``; raises :class:`RunError` when none is chosen."""
    runs = report.get("runs")
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise RunError(f"report {path} has no runs: give a `fpinspect compare --format json` report.")
    try:
        choices = [
            (key, parse_choice(text, what))
            for key, text, what in (
                ("rank", ranks, "ranks"),
                ("graph", graphs, "graphs"),
                ("step", steps, "steps"),
            )
        ]
    except ValueError as exc:
        raise RunError(str(exc)) from None
    chosen = [
        r for r in runs if all(choice is None or _label(r.get(key)) in choice for key, choice in choices)
    ]
    if not chosen:
        raise RunError(f"report {path} has no leaf of these --ranks/--graphs/--steps ({_saved_names(runs)}).")
    return chosen


def _saved_names(runs: list[dict]) -> str:
    return leaf_names(
        [Leaf("", "", _label(r.get("rank")), _label(r.get("graph")), _label(r.get("step"))) for r in runs]
    )


def saved_leaf(report: dict, path: str, *, ranks=None, graphs=None, steps=None) -> dict:
    """The one report of a leaf (``{"records", "summary"}``) that ``report`` holds: the report
    itself for one leaf, else the leaf of a whole run chosen with ``--ranks/--graphs/--steps``;
    raises :class:`RunError` naming the leaves when there are several."""
    if "runs" not in report:
        return report
    chosen = saved_leaves(report, path, ranks=ranks, graphs=graphs, steps=steps)
    if len(chosen) > 1:
        raise RunError(
            f"report {path} is of a whole run of {len(chosen)} leaves: choose one with --ranks, --graphs and "
            f"--steps ({_saved_names(chosen)})."
        )
    leaf = chosen[0]
    if leaf.get("error") is not None:
        raise RunError(
            f"report {path}: {Leaf('', '', *map(_label, (leaf.get('rank'), leaf.get('graph'), leaf.get('step')))).label()} was not compared ({leaf['error']})."
        )
    return {"records": leaf.get("records"), "summary": leaf.get("summary")}
