"""``fpinspect baseline``: tag recorded runs as a baseline, check a run against one, and show a
figure's history; and the ``--record``/``--db`` options with which ``run`` and ``compare`` store
their results (:mod:`fpinspect.store`).

Exit status of ``baseline check``: 0 no figure regressed, 1 some did, 2 bad usage or an
unusable database.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .output import check_destination, echo
from .usage import UsageProblem

if TYPE_CHECKING:  # the store loads when a command uses it
    from ..store import ResultsDB, StoredRun


db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The results database (default: $FPINSPECT_DB, else $XDG_DATA_HOME/fpinspect/results.sqlite).",
)


def record_options(default: bool):
    """``--record/--no-record`` (on by ``default``) and ``--db PATH``."""

    def decorate(command):
        return click.option(
            "--record/--no-record",
            default=default,
            show_default=True,
            help="Store the settings, environment and figures in the results database (`fpinspect baseline`).",
        )(db_option(command))

    return decorate


@contextmanager
def _open(db: Path | None) -> Iterator[ResultsDB]:
    """The database, open while the block runs; any :class:`~fpinspect.store.StoreError` there (a
    locked file, a damaged row) is one sentence."""
    from ..store import ResultsDB, StoreError

    try:
        with ResultsDB(db) as store:
            yield store
    except StoreError as exc:
        raise UsageProblem(str(exc)) from None


def _store(db: Path | None, write: Callable[[ResultsDB], int]) -> None:
    from ..store import StoreError

    with _open(db) as store:
        try:
            run_id = write(store)
        except StoreError as exc:
            raise UsageProblem(str(exc)) from None
        click.echo(f"fpinspect: recorded as run {run_id} in {store.path}", err=True)


def record_result(
    db: Path | None, result: dict[str, Any], out: Path | None, workload: dict[str, Any]
) -> None:
    """Store an experiment's ``result.json`` object with the figures its task declares
    (:meth:`~fpinspect.store.ResultsDB.record_result`)."""
    from ..experiments.registry import get_task

    folder = str(out.resolve()) if out is not None else None
    figures = get_task(result["task"]).figures
    _store(db, lambda store: store.record_result(result, folder, workload, figures=figures))


def record_compare(db: Path | None, report, settings: dict[str, Any], inputs: dict[str, str]) -> None:
    """Store a ``compare`` report (a :class:`~fpinspect.dumps.engine.report.Report`:
    :func:`fpinspect.reports.record.record_compare`)."""
    from ..reports.record import record_compare as record

    _store(db, lambda store: record(store, report, settings, inputs))


def _resolve(store: ResultsDB, run: str | None) -> StoredRun:
    """``run`` (an id, or the ``--out`` folder a run was recorded with), or the newest run."""
    if run is None:
        runs = store.runs()
        if not runs:
            raise UsageProblem(
                f"the results database {store.path} holds no run yet (fpinspect run TASK records one)."
            )
        return runs[0]
    if run.isascii() and run.isdigit():  # not "²", which int() refuses
        found = store.run(int(run)) if int(run) < 2**63 else None  # SQLite's integers have 64 bits
        if found is None:
            raise UsageProblem(f"the results database {store.path} holds no run {run}.")
        return found
    matches = store.runs(artefacts=str(Path(run).resolve()))
    if not matches:
        raise UsageProblem(f"no run recorded in {store.path} wrote its results to {run}.")
    return matches[0]


@click.group("baseline")
def baseline_command() -> None:
    """Precision baselines: tag recorded runs, check a new run against them, see a figure's history.

    Every `fpinspect run` is recorded in the results database (--no-record: not), and so is
    `compare --record`.
    """


@baseline_command.command("tag")
@click.argument("name")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@db_option
def tag_command(name: str, runs: tuple[str, ...], db: Path | None) -> None:
    """Add RUNs (ids or --out folders; default: the newest run) to baseline NAME.

    Tag repeated runs of the same settings: their spread becomes the noise of each figure.
    """
    from ..store import StoreError
    from ..store.report import device_class_text

    with _open(db) as store:
        chosen = [_resolve(store, r) for r in runs] or [_resolve(store, None)]
        try:
            store.tag(name, [r.id for r in chosen])
        except StoreError as exc:
            raise UsageProblem(str(exc)) from None
        for r in chosen:
            echo(
                f"baseline {name}: run {r.id} (task {r.task}, {device_class_text(r.device_class)}, {r.recorded})"
            )


@baseline_command.command("check")
@click.argument("run", required=False)
@click.option("--against", "name", required=True, help="The baseline to compare with.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    help="text: the Markdown report drawn for a terminal; markdown: its source  "
    "[default: text on a terminal, else markdown]",
)
@db_option
def check_command(run: str | None, name: str, fmt: str | None, db: Path | None) -> None:
    """Compare RUN (an id or --out folder; default: the newest run) with baseline NAME.

    Only baseline runs of the same task, settings and device class count. Exit status 1 when
    a figure regressed beyond noise, 0 otherwise.
    """
    import sys

    if fmt is None:
        fmt = "text" if sys.stdout.isatty() else "markdown"
    from ..store import StoreError, check_run

    with _open(db) as store:
        chosen = _resolve(store, run)
        try:
            result = check_run(store, chosen, name)
        except StoreError as exc:
            raise UsageProblem(str(exc)) from None
    from ..store.report import check_json, check_markdown

    if fmt == "json":
        click.echo(json.dumps(check_json(result), ensure_ascii=False, allow_nan=False))
    elif fmt == "markdown":
        echo(check_markdown(result), nl=False)
    else:
        from rich.markdown import Markdown

        from ..reports.format import printable
        from .render import console

        console().print(Markdown(printable(check_markdown(result), keep="\n")))
    if result.regressed:
        raise SystemExit(1)


def bars(values: list[float | None], width: int = 40) -> list[str]:
    """One text bar per value, scaled between the smallest and the largest (``-``: no number)."""
    known = [v for v in values if v is not None]
    if not known:
        return ["-" for _ in values]
    lo, hi = min(known), max(known)
    span = hi - lo
    return [
        "-" if v is None else "█" * (1 + round((width - 1) * ((v - lo) / span if span else 1)))
        for v in values
    ]


@baseline_command.command("history")
@click.argument("task")
@click.option(
    "--figure",
    "name",
    help="The figure's name, or a start of it that only one figure has; without it, the figures of "
    "TASK's newest run are listed.",
)
@click.option(
    "--png", type=click.Path(dir_okay=False, path_type=Path), help="Also draw the history into this PNG."
)
@db_option
def history_command(task: str, name: str | None, png: Path | None, db: Path | None) -> None:
    """The figure NAME of TASK across its recorded runs: a table with a bar per run, and a PNG.
    Without --figure: the names of the figures TASK's newest run recorded."""
    from rich.table import Table

    from ..store.report import number_text
    from .render import console

    if png is not None and png.suffix.lower() != ".png":
        raise UsageProblem(f"--png {png} does not end in .png; give a PNG file name.")
    check_destination(None if png is None else str(png))
    with _open(db) as store:
        runs = store.runs(task=task)
        if not runs:
            raise UsageProblem(f"the results database {store.path} holds no run of task {task}.")
        known = [f.name for f in store.figures(runs[0].id)]
        if name is None:
            click.echo(f"The figures of task {task} (newest run {runs[0].id}), for --figure:")
            for figure in known:
                echo(f"  {figure}")
            return
        history = store.figure_history(task, name)
        if not history:
            name = _figure_named(name, known, task)
            history = store.figure_history(task, name)
        tags = {r.id: store.baseline_names(r.id) for r, _ in history}
    table = Table("run", "recorded", "torch", "fpinspect", "device class", "settings", "baselines", name)
    for r, value in history:
        env = r.environment
        table.add_row(
            str(r.id),
            r.recorded,
            str(env.get("torch", "-")),
            str(env.get("fpinspect", "-")),
            r.device_class,
            r.settings_hash,
            ", ".join(tags[r.id]),
            number_text(value),
        )
    console().print(table)
    for (r, value), bar in zip(history, bars([v for _, v in history])):
        click.echo(f"run {r.id:>5} {number_text(value):>12} {bar}")
    if png is not None:
        _draw(png, task, name, history)


def _figure_named(start: str, known: list[str], task: str) -> str:
    """The one figure of ``known`` whose name starts with ``start``; one sentence when none or
    several do."""
    matches = [n for n in known if n.startswith(start)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        listed = ", ".join(matches[:8]) + (f" and {len(matches) - 8} more" if len(matches) > 8 else "")
        raise UsageProblem(f"--figure {start!r} starts {len(matches)} figures of task {task}: {listed}.")
    listed = ", ".join(known[:8]) + (f" and {len(known) - 8} more" if len(known) > 8 else "")
    raise UsageProblem(
        f"no run of task {task} has a figure {start!r}; its newest run has: {listed or 'none'} "
        f"(fpinspect baseline history {task} lists them)."
    )


def _draw(png: Path, task: str, name: str, history: list[tuple[StoredRun, float | None]]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        click.echo(
            "fpinspect: matplotlib is not installed (pip install 'fpinspect[experiments]'), so no PNG was drawn.",
            err=True,
        )
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    points = [(str(r.id), v) for r, v in history if v is not None]
    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o")
    ax.set_xlabel("run")
    ax.set_ylabel(name)
    ax.set_title(f"{task}: {name}")
    fig.tight_layout()
    try:
        fig.savefig(png)
    except OSError as exc:
        raise UsageProblem(f"cannot write {png}: {exc.strerror or exc}.") from None
    finally:
        plt.close(fig)
    click.echo(f"fpinspect: wrote {png}", err=True)
