"""``fpinspect switches``: what turns off exactly the fusions that introduced an error."""

from __future__ import annotations

import os

import click

from ..reports.options import compare_options
from .output import echo, indented_json, read_report
from .tree import leaf_options, one_leaf
from .usage import UsageProblem, model_option


@click.command("switches")
@click.argument("source", metavar="REPORT.json|RUN_DIR|CAPTURE_DIR", required=False)
@click.option(
    "--for",
    "compiler",
    type=click.Choice(["autofuse", "ge", "inductor"]),
    help="the fusing compiler whose switches to write  [default: autofuse, then inductor for a capture folder]",
)
@click.option("--graph", help="the fusion-on dump graph (default: found beside the report's dump folders)")
@click.option(
    "--fusion-result",
    type=click.Path(dir_okay=False),
    help="atc's fusion_result.json: the GE fusion passes that took effect (with --for ge)",
)
@click.option(
    "--plan",
    "plan_dir",
    metavar="RESULTS_DIR",
    help="instead of a source: the plan's §6.1 list from tasks B's and E's results under RESULTS_DIR",
)
@model_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@compare_options(replay=True)
@leaf_options
def switches_command(
    source: str | None,
    compiler: str | None,
    graph: str | None,
    fusion_result: str | None,
    plan_dir: str | None,
    model: str | None,
    fmt: str,
    settings,
    ranks: str | None,
    graphs_chosen: str | None,
    steps: str | None,
) -> None:
    """Write the switches that turn off the fusions that introduced an error.

    REPORT.json is a `fpinspect compare --format json` report; RUN_DIR a run folder holding
    dumpgraph_af_open/, dumpgraph_af_close/, datadump_af_open/ and datadump_af_close/, which is
    compared first. For each introduced fused op: the AUTOFUSE_FLAGS (or GE fusion_switch.cfg
    lines) that remove it, what they do, which other fused ops of the graph they also touch, and
    where no switch can. Where the data folders are dump trees of several ranks, graphs or steps
    (or the report is of such a whole run), --ranks, --graphs and --steps choose the leaf.

    CAPTURE_DIR (a folder written by `fpinspect capture`), with --for inductor (by default after
    the AutoFuse flags, where PyTorch is installed; the JSON then holds it under "inductor"): the
    regions to leave unfused (the introduced fused ops, and those confirm.json confirms or puts in
    its smallest set), the torch.compiler.disable lines for the smallest submodule that holds each
    region (or, where none does, the capture's own --unfuse), their side effects, and a check: the
    capture run again with those regions unfused, verified when its final outputs pass eager's
    thresholds. A model factory that capture.json names runs only when given with --model.

    --plan RESULTS_DIR: the test plan's §6.1 list instead. Per chain of task B that is worse
    fused than eager beyond noise (and E's training divergence): the evidence (P99 and max ULP
    error, fused against eager, and the inputs where fused is worst) and the AUTOFUSE_FLAGS that
    would turn that fusion off.
    """
    if (source is None) == (plan_dir is None):
        raise UsageProblem("give either REPORT.json|RUN_DIR or --plan RESULTS_DIR.")
    if plan_dir is not None:
        if compiler not in (None, "autofuse") or graph or fusion_result:
            raise UsageProblem(
                "--plan lists AutoFuse switches; --for, --graph and --fusion-result need a source."
            )
        _plan_switches(plan_dir, fmt)
        return
    from ..capture.spec import FILE as CAPTURE_FILE

    is_capture = os.path.isfile(os.path.join(source, CAPTURE_FILE))
    if compiler == "inductor" and not is_capture:
        raise UsageProblem(
            f"--for inductor needs a capture folder, and {source} has no {CAPTURE_FILE} "
            "(make one with fpinspect capture)."
        )
    if compiler == "inductor" and (graph or fusion_result):
        raise UsageProblem("--graph and --fusion-result are for --for autofuse and ge.")
    if model is not None and not is_capture:
        raise UsageProblem(f"--model runs a capture again, and {source} has no {CAPTURE_FILE}.")
    doc: dict = {}
    introduced = None
    if compiler != "inductor":
        leaf = {"ranks": ranks, "graphs": graphs_chosen, "steps": steps}
        introduced, doc = _graph_switches(
            source, compiler or "autofuse", graph, fusion_result, fmt, settings, leaf
        )
    if compiler == "inductor" or (compiler is None and is_capture):
        from .switches_inductor import inductor_switches_of, untrusted_model
        from .usage import torch_missing

        untrusted = untrusted_model(source, model)
        if compiler is None and torch_missing():
            echo(
                "fpinspect: note: Inductor's switches for this capture (--for inductor) need PyTorch.",
                err=True,
            )
        elif compiler is None and untrusted:
            echo(f"fpinspect: note: no Inductor switches (--for inductor): {untrusted}.", err=True)
        else:
            if compiler is None and fmt == "text":
                echo("\nInductor (torch.compile), for the captured model:")
            found = inductor_switches_of(source, fmt, settings, introduced, model)
            doc = found if compiler == "inductor" else {**doc, "inductor": found}
    if fmt == "json":
        echo(indented_json(doc))


def _graph_switches(
    source: str,
    compiler: str,
    graph: str | None,
    fusion_result: str | None,
    fmt: str,
    settings,
    leaf: dict,
) -> tuple[list[str], dict]:
    """AutoFuse's or GE's switches for ``source``: printed as text (with ``fmt`` text), returned
    as JSON with the introduced fused ops; a run folder is compared with ``settings``. Of a whole
    run (dump trees, or its saved report) of several leaves: the introduced ops of every leaf
    ``leaf`` (``--ranks/--graphs/--steps``) leaves, by graph, each graph's switches."""
    from ..dumps.errors import InputError
    from ..dumps.switches import effective_passes

    if not os.path.isdir(source) and settings.not_for_saved(source):
        raise UsageProblem(settings.not_for_saved(source))
    try:
        passes = effective_passes(fusion_result) if fusion_result else None
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
    by_graph = _whole_run(source, settings, leaf)
    if by_graph is None:
        introduced, found = _introduced(source, settings, leaf)
        return introduced, _switches_of(source, introduced, graph or found, compiler, passes, fmt)
    if graph is not None and len(by_graph) > 1:
        raise UsageProblem(
            f"--graph names one graph, and {source} holds {len(by_graph)} ({', '.join(map(str, by_graph))}): "
            "choose one with --graphs."
        )
    union: list[str] = []
    docs = []
    for label, (introduced, found) in by_graph.items():
        if fmt == "text":
            echo(("\n" if docs else "") + f"graph {label}:")
        docs.append(
            {"graph": label, **_switches_of(source, introduced, graph or found, compiler, passes, fmt)}
        )
        union += [name for name in introduced if name not in union]
    return union, {"introduced": union, "graphs": docs}


def _whole_run(source: str, settings, leaf: dict) -> dict[str | None, tuple[list[str], object]] | None:
    """Of a whole run of several leaves (the ones ``leaf`` chooses): the introduced fused ops of
    its leaves by graph label, each with the fusion-on graph found for it; ``None`` for one leaf."""
    from ..inspection.runs import RunError, run_inputs, saved_leaves

    by_graph: dict[str | None, tuple[list[str], object]] = {}

    def add(label, introduced: list[str], graph) -> None:
        names, found = by_graph.setdefault(label, ([], graph))
        names += [n for n in introduced if n not in names]
        if found is None and graph is not None:
            by_graph[label] = (names, graph)

    try:
        if os.path.isdir(source):
            inputs = run_inputs(source, ranks=leaf["ranks"], graphs=leaf["graphs"], steps=leaf["steps"])
            if inputs.scope is None or len(inputs.scope.compared) == 1:
                return None
            from ..inspection.leaves import inspect_leaves

            for run in inspect_leaves(inputs.scope.compared, inputs.choosers, settings, kl=False):
                if run.report is None:
                    echo(f"fpinspect: warning: {run.on.label()}: {run.error}", err=True)
                    continue
                add(run.on.graph, run.report.summary().introduced, run.graphs[0] if run.graphs else None)
            return by_graph
        report = read_report(source)
        if "runs" not in report:
            return None
        chosen = saved_leaves(report, source, **leaf)
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
    if len(chosen) == 1:
        return None
    for run in chosen:
        summary = run.get("summary")
        introduced = summary.get("introduced") if isinstance(summary, dict) else None
        if run.get("error") is not None or introduced is None:
            continue
        if not isinstance(introduced, list) or not all(isinstance(n, str) for n in introduced):
            raise UsageProblem(
                f"report {source} has a leaf whose summary.introduced is not a list of op names."
            )
        files = [r.get("fused_file") for r in run.get("records") or [] if isinstance(r, dict)]
        graph = next((_graph_of_dump(f) for f in files if isinstance(f, str)), None)
        add(run.get("graph"), introduced, graph)
    return by_graph


def _switches_of(source: str, introduced: list[str], graph_path, compiler: str, passes, fmt: str) -> dict:
    """The switches of the fused ops ``introduced`` of the graph ``graph_path`` (a path or a graph
    read already), printed with ``fmt`` text; their JSON."""
    from ..dumps.errors import InputError
    from ..dumps.formats.fusion import fused_ops
    from ..dumps.formats.graph import load_graph
    from ..dumps.switches import autofuse_flags, autofuse_switches, fusion_switch_file, ge_switches

    if graph_path is None:
        raise UsageProblem(
            f"cannot find the fusion-on graph of {source}: give it with --graph "
            "(the report's dump folders have no dumpgraph_af_open/ beside them)."
        )
    try:
        model = load_graph(graph_path)
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
    fused = {op.name: op for op in fused_ops(model)}
    missing = [name for name in introduced if name not in fused]
    if missing:
        raise UsageProblem(
            f"the graph {graph_path} has no fused op {', '.join(missing)}; give the run's own graph."
        )
    every = list(fused.values())
    ops = [
        autofuse_switches(fused[n], every) if compiler == "autofuse" else ge_switches(fused[n], passes)
        for n in introduced
    ]
    setting = autofuse_flags(ops) if compiler == "autofuse" else fusion_switch_file(ops)
    key = "autofuse_flags" if compiler == "autofuse" else "fusion_switch_file"
    doc = {"introduced": introduced, "ops": [o.to_json() for o in ops], key: setting}
    if fmt == "json":
        return doc
    if not introduced:
        echo("No fused op introduced an error: nothing to switch off.")
        return doc
    for o in ops:
        echo(f"{o.op} ({o.type}: {', '.join(o.original_types) or 'original types not recorded'})")
        _echo_switches(o.switches, o.notes)
    if compiler == "autofuse":
        echo(f'\nEach op\'s first switch, together:\nexport AUTOFUSE_FLAGS="{setting}"')
    elif setting:
        echo("\nfusion_switch.cfg (atc --fusion_switch_file):\n" + setting, nl=False)
    return doc


def _echo_switches(switches, notes) -> None:
    for s in switches:
        echo(f"  {s.setting}")
        echo(f"      {s.removes}")
        if s.also:
            echo(f"      also touches: {', '.join(s.also)}")
    for note in notes:
        echo(f"  note: {note}")


def _plan_switches(results_dir: str, fmt: str) -> None:
    from ..reports.plan import PlanError, collect

    try:
        plan = collect(results_dir)
    except PlanError as exc:
        raise UsageProblem(str(exc)) from None
    found = plan.switches()
    if fmt == "json":
        echo(indented_json(found.to_json()))
        return
    if not found.entries:
        echo(found.empty_sentence())
    for entry in found.entries:
        echo(f"{entry.subject} ({entry.task}: {entry.operators})")
        for line in entry.evidence:
            echo(f"  evidence: {line}")
        _echo_switches(entry.switches, entry.notes)
    for note in found.notes:
        echo(f"note: {note}")


def _introduced(source: str, settings, leaf: dict) -> tuple[list[str], object]:
    """The introduced fused ops of ``source`` (a report, or a run folder compared with
    ``settings``; of a whole run, the leaf ``leaf`` chooses) and, where it can be found, the
    fusion-on graph (a path, or the graph a folder of graphs gave the leaf)."""
    from ..inspection.runs import RunError, saved_leaf

    if os.path.isdir(source):
        inputs = one_leaf(source, leaf["ranks"], leaf["graphs"], leaf["steps"])
        return compared_run(inputs, settings).summary().introduced, inputs.graphs[0]
    try:
        report = saved_leaf(read_report(source), source, **leaf)
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
    summary = report.get("summary")
    introduced = summary.get("introduced") if isinstance(summary, dict) else None
    if not isinstance(introduced, list) or not all(isinstance(n, str) for n in introduced):
        raise UsageProblem(
            f"report {source} has no summary.introduced: give a `fpinspect compare --format json` report."
        )
    graph = None
    for record in report.get("records") or []:
        fused_file = record.get("fused_file") if isinstance(record, dict) else None
        if isinstance(fused_file, str):
            graph = _graph_of_dump(fused_file)
            break
    return introduced, graph


def _graph_of_dump(path: str) -> str | None:
    """The fusion-on graph beside the data folder that holds the dump file ``path``, however deep
    in a dump tree (``datadump_af_open/{time}/{device}/...``)."""
    from ..dumps.runs.runfolder import graph_beside

    folder = os.path.dirname(path)
    while folder and os.path.dirname(folder) != folder:
        if "datadump" in os.path.basename(folder):
            return graph_beside(folder)
        folder = os.path.dirname(folder)
    return None


def compared_run(inputs, settings):
    """The report of one leaf pair's ``inputs`` (:class:`~fpinspect.inspection.runs.Inputs`),
    compared as ``compare`` does with the same ``settings``
    (:class:`~fpinspect.inspection.settings.CompareSettings`)."""
    from ..dumps.errors import InputError
    from ..inspection.pipeline import Inspection

    try:
        return Inspection.load(inputs.graphs, inputs.data, settings).report()
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
