"""The ``fpinspect`` group and its dump commands (``diff``, ``compare``). Thin: parse, call a layer
below, render."""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading

import click

from .. import __version__
from ..reports.options import MAX_WORST, compare_options
from .baseline import record_options
from .output import check_destination, echo, indented_json, report_file, stdout_closed, write_json_object
from .tree import compare_tree, graphs_option, ranks_option, steps_option
from .usage import UsageProblem, model_option, require_torch


def _worst_option(default: int, what: str):
    return click.option(
        "--worst",
        type=click.IntRange(0, MAX_WORST),
        default=default,
        show_default=True,
        help=what,
    )


def _jobs(requested: int | None) -> int:
    return max(1, requested) if requested is not None else max(1, min(4, os.cpu_count() or 1))


def _existing_file(path: str, what: str) -> None:
    from ..dumps.errors import missing

    if not os.path.exists(path):
        raise UsageProblem(f"{what} {path} {missing(path).removeprefix('file ')}.")
    if os.path.isdir(path):
        raise UsageProblem(f"{what} {path} is a folder, not a file.")


def _tell_when_compiling() -> None:
    """One line on stderr when the statistics kernels are not in numba's disk cache yet (the
    first command after an install): it would otherwise sit silent while they compile."""
    from ..numerics import warmup

    if warmup.needs_compile():
        click.echo(
            f"fpinspect: compiling the numerics kernels once (about {warmup.COMPILE_SECONDS} s; cached afterwards)",
            err=True,
        )


#: The commands with a module of their own: name -> (module, attribute), relative to this package
#: or absolute (the inspector's commands live in :mod:`fpinspect.tui.commands`: the two front ends
#: import nothing of each other). A module is imported only when its command runs or is listed
#: (``--help``), so ``diff`` and ``compare`` do not import the inspector, the experiments or the
#: capture stack.
_COMMAND_MODULES = {
    "capture": (".capture", "capture_command"),
    "confirm": (".confirm", "confirm_command"),
    "convert": (".convert", "convert_command"),
    "explore": (".explore", "explore_command"),
    "launch": ("fpinspect.tui.commands", "launch_command"),
    "open": ("fpinspect.tui.commands", "open_command"),
    "open-result": ("fpinspect.tui.commands", "open_result_command"),
    "baseline": (".baseline", "baseline_command"),
    "report": (".report", "report_command"),
    "repro": (".repro", "repro_command"),
    "run": (".experiments", "run_command"),
    "switches": (".switches", "switches_command"),
    "tasks": (".experiments", "tasks_command"),
    "warm": (".warm", "warm_command"),
}


#: What each stopping signal ends a command with: its line, after ``fpinspect: ``.
_STOPPED = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}


class _Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised as ctrl+c's interrupt is: every ``finally`` on the way out
    runs (child processes stopped, temporary files removed)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame) -> None:
    raise _Stopped(signum)


class _Group(click.Group):
    """The ``fpinspect`` group: its commands of :data:`_COMMAND_MODULES` load on first use, and
    ``ctrl+c``, SIGTERM and SIGHUP end any command with one line and status 128 + the signal's
    number (130, 143, 129). Standard output closed before everything was written to it (``| head``)
    is one sentence on stderr and status 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_COMMAND_MODULES})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in _COMMAND_MODULES:
            module, attribute = _COMMAND_MODULES[name]
            self.add_command(getattr(importlib.import_module(module, __package__), attribute), name)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        taken = {}  # the handlers replaced, put back once the command is done (an embedding goes on)
        if threading.current_thread() is threading.main_thread():  # where handlers can be set
            for signum in (signal.SIGTERM, signal.SIGHUP):
                if signal.getsignal(signum) == signal.SIG_DFL:  # not one ignored (nohup) or taken
                    taken[signum] = signal.signal(signum, _raise_stopped)
        try:
            try:
                return super().invoke(ctx)
            finally:  # here, where a closed pipe is one sentence, not a traceback at exit
                sys.stdout.flush()
        except BrokenPipeError:
            stdout_closed()
        except KeyboardInterrupt as exc:
            # Child processes are stopped by their owners' ``finally`` blocks as the interrupt
            # unwinds; worker threads are not waited for (they hold no state worth keeping).
            signum = exc.signum if isinstance(exc, _Stopped) else signal.SIGINT
            sys.stderr.write(f"fpinspect: {_STOPPED[signum]}\n")
            sys.stderr.flush()
            os._exit(128 + signum)
        finally:
            for signum, handler in taken.items():
                signal.signal(signum, handler)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fpinspect")
def main() -> None:
    """Find where operator fusion changed your numbers.

    Compare fusion-on and fusion-off dumps, diff any two tensors with ULP-aware
    statistics, and run the fusion precision test plan.
    """


@main.command()
@click.argument("a", metavar="A.npy")
@click.argument("b", metavar="B.npy")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table for people, json (one object) for scripts",
)
@_worst_option(10, "how many of the worst elements to list")
@click.option(
    "--jobs", "-j", type=int, default=None, help="threads for large files (default: one per core, at most 4)"
)
@click.option(
    "--max-ulp",
    type=int,
    default=None,
    help="exit with status 1 when the largest ULP difference exceeds this (or NaN/inf differ)",
)
def diff(a: str, b: str, fmt: str, worst: int, jobs: int, max_ulp: int | None) -> None:
    """Compare two .npy files element by element (mode 2).

    B is the reference side. Reports the reference script's trio (cosine, max absolute,
    max relative error), ULP statistics, msaccucmp and msprobe metrics, special-value
    counts and the worst elements. Exit status: 0 compared, 1 over --max-ulp, 2 bad input or
    nothing compared (SHAPE_MISMATCH, COMPUTE_ERROR).
    """
    from ..dumps.engine.pair import compare_npy

    _existing_file(a, "file")
    _existing_file(b, "file")
    _tell_when_compiling()
    res = compare_npy(a, b, jobs=_jobs(jobs), worst=max(0, worst))
    with report_file(None) as out:
        if fmt == "json":
            click.echo(indented_json(res.to_json()), file=out)
        else:
            from ..reports.pair import pair_report  # rich: only the table needs it
            from .render import console

            console().print(pair_report(res, a, b))
    if not res.compared and any(s in res.status for s in ("NPY_LOAD_ERROR", "FILE_NOT_FOUND")):
        if fmt == "json":
            click.echo(f"fpinspect: {res.message}", err=True)
        sys.exit(2)
    if not res.compared and "EMPTY" not in res.status:
        # SHAPE_MISMATCH, COMPUTE_ERROR: the files cannot be compared, which is not a result
        click.echo(
            f"fpinspect: nothing was compared ({', '.join(res.status)}): {res.message or ''}".rstrip(": "),
            err=True,
        )
        sys.exit(2)
    if max_ulp is not None and res.compared:  # an EMPTY pair is within any bound
        u = res.metrics.errors.ulp.max
        if (u is not None and u > max_ulp) or res.stats.nan_mismatch or res.stats.inf_mismatch:
            sys.exit(1)


def _compared_inputs(run: str | None, *given: str | None) -> tuple[str, str, str, str]:
    """The four inputs of ``compare``: the options given, the rest found from ``run`` by the
    naming ``open`` uses (:func:`~fpinspect.dumps.runs.sources.resolve`)."""
    found: tuple = (None,) * 4
    if run is not None:
        from ..dumps.runs.sources import SourceError, resolve

        try:
            s = resolve(run)
        except SourceError as exc:
            raise UsageProblem(str(exc)) from None
        found = (s.open_graph, s.close_graph, s.open_data, s.close_data)
    inputs = tuple(g if g is not None else f for g, f in zip(given, found))
    names = ("--af-open-graph", "--af-close-graph", "--af-open-data", "--af-close-data")
    lacking = [n for n, v in zip(names, inputs) if v is None]
    if lacking:
        where = (
            f"not every input of {run} is found by the usual naming (..._af_open -> ..._af_close): give"
            if run
            else "give a run folder, or"
        )
        raise UsageProblem(f"{where} {', '.join(lacking)}.")
    return inputs


@main.command()
@click.argument("run", required=False, metavar="[RUN]")
@click.option(
    "--af-open-graph", help="dump graph (atc JSON or ge_proto_*.txt) of the run with auto-fusion on"
)
@click.option(
    "--af-close-graph", help="dump graph (atc JSON or ge_proto_*.txt) of the run with auto-fusion off"
)
@click.option("--af-open-data", help="datadump .npy folder of the fusion-on run")
@click.option("--af-close-data", help="datadump .npy folder of the fusion-off run")
@click.option(
    "--compare-input", is_flag=True, help="list fused-op input comparisons too (always used for localisation)"
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "model-explorer"]),
    default="table",
    show_default=True,
    help="model-explorer: node data for Google's Model Explorer (each op's worst error, coloured by verdict)",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), help="write the report to this file instead of stdout"
)
@click.option(
    "--jobs",
    "-j",
    type=int,
    default=None,
    help="compare this many pairs at once, on worker processes (default: one per core, at most 4)",
)
@click.option("--iteration", help="iteration folder to use in both dump folders (default: the latest)")
@click.option("--close-iteration", help="iteration folder of the fusion-off dumps, if it differs")
@click.option(
    "--fail-on",
    type=click.Choice(["fail", "warn"]),
    default=None,
    help="exit with status 1 when any record is at or above this verdict",
)
@compare_options(
    replay=True, worst="how many of the worst elements each record lists (the inspector keeps 10)"
)
@ranks_option
@graphs_option
@steps_option
@click.option(
    "--scheduler",
    metavar="ADDRESS|local:N",
    help="compare the pairs on a Dask cluster: a running scheduler's address (tcp://host:8786; it must "
    "answer within 5 s and have a worker within 60 s), or local:N to start N worker processes here "
    "(needs pip install 'fpinspect[cluster]')",
)
@click.option(
    "--confirm",
    "confirm_regions",
    is_flag=True,
    help="for a capture folder: also run fpinspect confirm's ablation on the failing and warned fused "
    "ops, add its verdicts to the report and name where it disagrees with the localisation",
)
@model_option
@record_options(default=False)
def compare(
    run,
    af_open_graph,
    af_close_graph,
    af_open_data,
    af_close_data,
    compare_input,
    fmt,
    output,
    jobs,
    iteration,
    close_iteration,
    settings,
    fail_on,
    ranks,
    graphs_chosen,
    steps,
    scheduler,
    confirm_regions,
    model,
    record,
    db,
) -> None:
    """Compare every fused op of a fusion-on run with the original ops it replaced.

    RUN is a run folder (dumpgraph_af_open/, datadump_af_open/ and their af_close
    siblings) or the fusion-on graph, the other inputs found by name as `open` finds them;
    or give all four --af-* options (an option given wins over what RUN implies).

    Maps each fused output to the original output it stands for, converts storage
    layouts, computes the reference trio plus ULP / msaccucmp / msprobe metrics, judges
    each pair (pass / warn / fail) and names the fused op that introduced an error: the
    one that differs from its own eager replay and is not closer to float64 than eager.

    The data folders may be whole dump trees (GE's {time}/{device}/{model}/{model_id}/{step},
    msprobe's step{k}/rank{r}): every rank and graph is compared, at the latest step both hold,
    and the report says what was left out and why.
    """
    af_open_graph, af_close_graph, af_open_data, af_close_data = _compared_inputs(
        run, af_open_graph, af_close_graph, af_open_data, af_close_data
    )
    from ..dumps.errors import InputError
    from ..inspection.pipeline import Inspection

    check_destination(output)
    _tell_when_compiling()
    # No cyclic garbage collection while the command runs: its objects (both graphs, a record per
    # pair) live until it ends, and each full collection rescanned them all (about 1 s of 10 000
    # small pairs); records make almost no cycles (measured: 0.4 objects a pair). Restored when
    # the command ends, for a caller that runs it in its own process (tests, an embedding).
    if gc.isenabled():
        gc.disable()
        click.get_current_context().call_on_close(gc.enable)
    table = settings.thresholds
    kl = fmt == "json"  # the only format that shows msaccucmp's KL divergence
    from ..inspection.runs import RunError, choose_inputs

    try:
        inputs = choose_inputs(
            (af_open_graph, af_close_graph),
            (af_open_data, af_close_data),
            (iteration, close_iteration),
            ranks=ranks,
            graphs_chosen=graphs_chosen,
            steps=steps,
            one_leaf=fmt == "model-explorer",
        )
    except RunError as exc:
        raise UsageProblem(str(exc)) from None
    cluster = None
    if scheduler:
        from ..dumps.engine.cluster import connect

        try:
            cluster = click.get_current_context().with_resource(connect(scheduler))
        except InputError as exc:
            raise UsageProblem(str(exc)) from None
    if inputs.scope is not None:
        if confirm_regions:
            raise UsageProblem("--confirm runs one captured model again, not a dump tree.")
        if record:
            raise UsageProblem("--record stores the comparison of one graph pair, not of a dump tree.")
        from ..inspection.leaves import inspect_leaves

        runs = inspect_leaves(
            inputs.scope.compared,
            inputs.choosers,
            settings,
            kl=kl,
            compare_input=compare_input,
            jobs=_jobs(jobs),
            cluster=cluster,
        )
        try:
            compare_tree(inputs.scope, runs, fmt, output, fail_on)
        except InputError as exc:  # the cluster lost mid-run: the report file is not written
            raise UsageProblem(str(exc)) from None
        return
    try:
        inspection = Inspection.load(
            inputs.graphs, inputs.data, settings, kl=kl, jobs=_jobs(jobs), cluster=cluster
        )
        report = inspection.report(compare_input=compare_input)
        cmp = inspection.comparison
    except InputError as exc:
        raise UsageProblem(str(exc)) from None
    report = report.with_warnings(inputs.warnings)
    disagreements = None
    if confirm_regions:
        report, disagreements = _confirmed(run, report, settings, model)
    available = report.sources.fused_types
    for wanted in sorted(cmp.fused_types or ()):
        if wanted not in available:
            listed = ", ".join(f"{t} {n}" for t, n in available.items()) or "none"
            echo(
                f"fpinspect: warning: --fused-types {wanted}: no fused op of that type (fused types: {listed})",
                err=True,
            )
    for warning in report.sources.warnings:
        echo(f"fpinspect: warning: {warning}", err=True)
    with report_file(output) as out:
        if fmt == "json":
            write_json_object(out, report.json_fields())
        elif fmt == "model-explorer":
            from ..dumps.engine.model_explorer import node_data

            graph_of = {op.name: op.graph for op in cmp.fused}
            out.write(indented_json(node_data(report, graph_of, table)) + "\n")
        elif fmt == "csv":
            from ..reports.export import compare_csv

            compare_csv(report, out)
        else:
            from .render import compare_table, console, plain_console  # rich: only the table needs it

            con = console() if output is None else plain_console(out)
            con.print(compare_table(report))
            if disagreements is not None:
                con.print(confirm_lines(report, disagreements), markup=False)
    if record:
        from ..reports.record import compare_settings
        from .baseline import record_compare

        record_compare(
            db,
            report,
            compare_settings(
                table.to_json(),
                cmp.amplification,
                settings.replay,
                settings.fused_types or (),
                settings.compare_unfused,
            ),
            {
                "af_open_graph": af_open_graph,
                "af_close_graph": af_close_graph,
                "af_open_data": af_open_data,
                "af_close_data": af_close_data,
            },
        )
    if fail_on:
        levels = ("warn", "fail") if fail_on == "warn" else ("fail",)
        if any(r.verdict in levels for r in report.records) or not report.compared:
            sys.exit(1)  # a run that compared nothing is never clean


def _confirmed(run: str | None, report, settings, model: str | None) -> tuple:
    """``compare --confirm``: the ablation of the report's failing and warned fused ops: ``report``
    with it as evidence, and the disagreements with its localisation."""
    from ..capture.spec import FILE

    if run is None or not os.path.isfile(os.path.join(run, FILE)):
        raise UsageProblem(
            f"--confirm runs the captured model again, so RUN must be a folder written by fpinspect capture "
            f"(one with {FILE}); {run or 'the --af-* inputs'} is not"
        )
    require_torch("fpinspect compare --confirm")
    from ..capture.confirm import annotate
    from .confirm import _keep, ablate

    result, _, _ = ablate(run, "failing", settings, report=report, model=model)
    _keep(run, result.to_json())
    return annotate(report, result)


def confirm_lines(report, disagreements) -> str:
    """What ``compare --confirm`` says after the table: each ablated region's verdict, then where the
    ablation and the localisation disagree."""
    regions = report.confirm.regions
    if not regions:
        return "Ablation (--confirm): no fused op fails or warns, so none was run again."
    lines = ["Ablation (--confirm), each region the only one fused:"]
    lines += [f"  {name}: {verdict}" for name, verdict in regions.items()]
    lines += (
        ["Where the ablation and the comparison disagree:", *(f"  {d.sentence()}" for d in disagreements)]
        if disagreements
        else ["The ablation agrees with the comparison on every region run."]
    )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    main()
