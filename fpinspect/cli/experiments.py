"""The ``fpinspect run`` and ``fpinspect tasks`` commands.

``run`` starts the task in a child process (:class:`~fpinspect.experiments.engine.ExperimentProcess`), shows
its progress with Rich on stderr, then prints the report (a table, or one JSON object
with ``--format json``) on stdout and writes ``--out``. ``--seed`` and ``--set KEY=VALUE``
change the profile's settings (checked before anything starts). Task E also takes
``--nproc N`` (train under torchrun with N processes), keeps its checkpoints in ``--out``,
and ``--resume DIR`` continues a stopped run set there. Exit status: 0 done; 2 bad
usage (unknown task, bad setting, unavailable device, unwritable ``--out``, nothing to
resume, an unusable results database); 1 the experiment itself failed. Each finished run is
recorded in the results database (``--no-record``: not; ``--db``; see ``fpinspect baseline``),
after its report and ``--out`` files are written.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from ..experiments.backends import DEVICES
from ..experiments.settings import PROFILES
from .baseline import record_options

#: ``run`` refuses settings asking for more than this many times the full profile's work
#: unless ``--force``.
MAX_WORK_RATIO = 10

if TYPE_CHECKING:  # loaded when a command runs: ``fpinspect --help`` needs only the option lists
    from rich.console import Console

    from ..experiments.events import Event
    from ..experiments.results import TaskReport
    from ..experiments.settings import TaskSettings


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"fpinspect run: {message}", err=True)
    sys.exit(code)


def _refuse_beyond_the_plan(task_id: str, device: str, profile: str, settings: TaskSettings) -> None:
    """Settings far beyond the plan's own (``--set inputs=10**12``) would run for years:
    refuse them with the cost model's figure for them, unless ``--force``."""
    from ..experiments.costs import estimates, ratio_text, work_ratio
    from ..experiments.registry import get_task
    from ..experiments.runs import RunStore, default_runs_dir

    task = get_task(task_id)
    ratio = work_ratio(task, settings)
    if ratio is None or ratio <= MAX_WORK_RATIO:
        return
    where = "cpu" if device == "auto" else device
    store = RunStore(default_runs_dir())
    guess = estimates(task, where, lambda p: store.last_seconds(task_id, where, p), profile, settings)[
        profile
    ]
    cost = f"; on {where} that is about {_duration(guess.seconds)} ({guess.source})" if guess else ""
    _fail(
        f"task {task_id}: these settings ask for {ratio_text(ratio)} times the work of the full profile{cost}; "
        "pass --force to run them anyway.",
        2,
    )


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}"
    return f"{seconds:.0f} seconds"


def _check_out(out: Path) -> Path | None:
    """Refuse, before any work, an output folder that cannot be made or written into (a
    file, a path below a file, ``/proc``, a read-only file system): the result would be lost
    after the run. The probe is the hidden folder :func:`write_outputs` stages the set in.
    Returns the outermost folder it made (``None``: ``out`` was there)."""
    made = None
    for folder in (out, *out.parents):
        if folder.exists():
            break
        made = folder
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"cannot create the output folder {out}: {exc.strerror or exc}.", 2)
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".incomplete-", dir=out))
    except OSError as exc:
        _fail(f"cannot write into the output folder {out}: {exc.strerror or exc}.", 2)
    return made


def _remove_made(out: Path, made: Path | None) -> None:
    """Remove ``out`` and the folders above it up to ``made`` (what :func:`_check_out` made), as
    long as they are empty: a run that wrote nothing leaves nothing behind."""
    if made is None:
        return
    for folder in (out, *out.parents):
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): what is in it stays
            return
        if folder == made:
            return


class TaskFailed(Exception):
    """A task's run ended without a result: ``str()`` is one sentence, ``kind`` the failure's
    (``usage``, ``error``, ``crash``, ``cancelled``), ``code`` the exit status (2 bad usage,
    1 the experiment failed)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind
        self.code = 2 if kind == "usage" else 1


class _Stopped(BaseException):
    """SIGTERM or SIGHUP arrived; unwinds like ctrl+c so the child is stopped on the way."""

    def __init__(self, signum: int):
        self.signum = signum


@contextmanager
def _stopped_like_ctrl_c() -> Iterator[None]:
    """SIGTERM (``timeout``, a scheduler, ``kill``) and SIGHUP (a closed terminal) get what
    ctrl+c gets: the run's child is stopped, nothing partial is written, and the command
    exits 128 + the signal's number. Later signals are ignored while stopping."""
    sigs = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]

    def stop(signum, frame):
        for s in sigs:
            signal.signal(s, signal.SIG_IGN)
        raise _Stopped(signum)

    previous = {s: signal.signal(s, stop) for s in sigs}
    try:
        yield
    except _Stopped as exc:
        name = signal.Signals(exc.signum).name
        _fail(
            f"stopped by {name}; the task's process was stopped and no output was written.", 128 + exc.signum
        )
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


class ProgressView:
    """Rich progress bars fed by experiment events: one bar per stage, messages above."""

    def __init__(self, console: Console):
        from .render import stage_bars

        self.progress = stage_bars(console)
        self.bars: dict[str, int] = {}

    def __enter__(self) -> ProgressView:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def update(self, event: Event) -> None:
        from rich.markup import escape

        from ..experiments.events import Message, Progress, Started

        if isinstance(event, Started):
            self.progress.console.print(f"running {event.task} on {event.device} (profile {event.profile})")
        elif isinstance(event, Message):
            self.progress.console.print(f"[dim]{escape(event.text)}[/dim]", highlight=False)
        elif isinstance(event, Progress):
            bar = self.bars.get(event.stage)
            if bar is None:
                bar = self.bars[event.stage] = self.progress.add_task(event.stage, total=event.total)
            self.progress.update(bar, completed=event.done, total=event.total)


def render_report(console: Console, report: TaskReport) -> None:
    from rich.markup import escape
    from rich.table import Table as RichTable
    from rich.text import Text

    from ..experiments.output import agreement, dtypes_of, format_cell

    console.rule(f"{report.task} — {report.title}")
    env = report.environment
    console.print(
        f"Claim {report.claim}\n{report.device} ({env.get('device_name', '?')}), torch {env.get('torch')}, "
        f"{dtypes_of(report.settings)}, seed {report.settings.get('seed')}, profile {report.profile}",
        highlight=False,
    )
    verdicts = RichTable("topic", "expectation", "measured", "agrees", title="Expectation and measurement")
    for v in report.verdicts:
        verdicts.add_row(*(Text(t) for t in (v.topic, v.expectation, v.measured, agreement(v.agrees))))
    console.print(verdicts)
    for t in (t for t in report.tables if t.summary):
        table = RichTable(*t.columns, title=escape(t.title))
        for row in t.rows:
            table.add_row(*(Text(format_cell(c)) for c in row))
        console.print(table)
    hidden = [t.title for t in report.tables if not t.summary]
    if hidden:
        console.print(f"[dim]Also in report.md (--out) and --format json: {'; '.join(hidden)}.[/dim]")


def _training_options(
    task_id: str,
    settings: TaskSettings,
    device: str,
    profile: str,
    out: Path | None,
    nproc: int | None,
    resume: Path | None,
) -> tuple[TaskSettings, str, str, Path | None]:
    """Apply ``--nproc`` and ``--resume`` (tasks with ``nproc`` and ``run_dir`` settings,
    i.e. task E) and point the run's checkpoints at ``--out``; returns the settings, the
    device, the profile and the output folder to use (a resumed set keeps its own)."""
    from ..experiments.training.store import Checkpoints, read_run, same_computation

    names = {f.name for f in dataclasses.fields(settings)}
    if "run_dir" not in names:
        if nproc is not None or resume is not None:
            _fail(f"task {task_id} runs in one process; --nproc and --resume are for task E.", 2)
        return settings, device, profile, out
    changes: dict = {}
    if resume is not None:
        saved = read_run(resume)
        if saved is None or saved.get("task") != task_id:
            run_file = Checkpoints(resume).run_file
            why = "cannot be read or is damaged" if run_file.exists() else "is missing"
            _fail(f"{resume} holds no stopped run of task {task_id} to resume ({run_file} {why}).", 2)
        try:
            settings = type(settings).from_dict(saved["settings"])
        except (ValueError, TypeError) as exc:
            _fail(f"{resume}/checkpoints/run.json holds settings this version cannot use: {exc}.", 2)
        device = saved.get("device", device) if device == "auto" else device
        matching = [
            p for p in PROFILES if not same_computation(saved["settings"], settings.profile(p).to_dict())
        ]
        profile = matching[0] if matching else profile
        out = out if out is not None else resume
        changes.update(resume=True, run_dir=str(resume.resolve()))
    elif out is not None:
        changes["run_dir"] = str(out.resolve())
    if nproc is not None:
        changes["nproc"] = nproc
    try:
        return dataclasses.replace(settings, **changes), device, profile, out
    except ValueError as exc:
        _fail(f"task {task_id}: {exc}.", 2)


def _run_and_write(
    task_id: str, settings: TaskSettings, device: str, profile: str, out: Path | None, err: Console
) -> tuple[dict, TaskReport]:
    """Run the task in its child with progress on ``err``, write ``out``; the payload and report.
    Raises :class:`TaskFailed` when the task ends without a result."""
    from ..experiments.engine import ExperimentFailed, ExperimentProcess, collect
    from ..experiments.output import undrawn_figures, write_outputs
    from ..experiments.results import TaskReport

    failure: ExperimentFailed | None = None
    with (
        ExperimentProcess(task_id, settings, device=device, profile=profile) as process,
        ProgressView(err) as view,
    ):
        try:
            payload = collect(process, view.update)
        except ExperimentFailed as exc:
            failure = exc
    if failure is not None:
        if failure.kind == "usage":
            raise TaskFailed(f"{failure}.", failure.kind)
        log = f" (log: {failure.log_path})" if failure.log_path else ""
        raise TaskFailed(f"task {task_id} failed on device {device}: {failure}{log}", failure.kind)
    report = TaskReport.from_dict(payload)
    if out is not None:
        written = write_outputs(report, out)
        err.print(f"wrote {len(written)} files to {out}", highlight=False)
        skipped = undrawn_figures(report)
        if skipped:
            err.print(
                f"matplotlib is not installed, so {len(skipped)} figure(s) were not drawn: {'; '.join(skipped)}.",
                highlight=False,
            )
    return payload, report


@click.command("run")
@click.argument("task")
@click.option(
    "--device",
    type=click.Choice(DEVICES),
    default="auto",
    show_default=True,
    help="auto takes npu, then cuda, then cpu.",
)
@click.option(
    "--profile",
    type=click.Choice(PROFILES),
    default="quick",
    show_default=True,
    help="full = the test plan's settings; quick = scaled for a 2-core CPU.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write result.json, report.md and figures/*.png here.",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--seed", type=int, help="Seed of the inputs (default: the profile's).")
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="KEY=VALUE",
    help="Change one setting of the profile (repeatable; see `fpinspect tasks`).",
)
@click.option(
    "--force",
    is_flag=True,
    help=f"Run settings that ask for more than {MAX_WORK_RATIO} times the work of the full profile.",
)
@click.option(
    "--nproc",
    type=click.IntRange(min=1),
    help="Task E: train with N processes under torchrun (DistributedDataParallel).",
)
@click.option(
    "--resume",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Task E: continue the stopped run set in DIR (its --out folder).",
)
@record_options(default=True)
def run_command(
    task: str,
    device: str,
    profile: str,
    out: Path | None,
    fmt: str,
    seed: int | None,
    assignments: tuple[str, ...],
    force: bool,
    nproc: int | None,
    resume: Path | None,
    record: bool,
    db: Path | None,
) -> None:
    """Run TASK of the fusion precision test plan (see `fpinspect tasks`).

    TASK `all` runs every task, P0 first, then P1, then P2, each into --out DIR/<task>/ (with
    its run.json), goes on past a task that fails, and ends with the plan's report:
    DIR/plan.html and DIR/plan.md (`fpinspect report --plan DIR`).
    """
    from rich.console import Console

    from ..experiments.registry import TASK_IDS, UnknownTask, canonical_id, get_task
    from ..experiments.settings import SettingError
    from .render import console

    if task.strip().lower() == "all":
        if out is None or fmt == "json" or assignments or nproc is not None or resume is not None:
            _fail(
                "run all takes --out DIR (and --device, --profile, --seed), not --format json, "
                "--set, --nproc or --resume.",
                2,
            )
        sys.exit(run_all(out, device, profile, seed))
    try:
        task_id = canonical_id(task)
    except UnknownTask:
        _fail(f"unknown task {task!r}; choose one of {', '.join(TASK_IDS)} (see 'fpinspect tasks').", 2)
    try:
        settings = get_task(task_id).settings.profile(profile).with_overrides(seed, assignments)
    except SettingError as exc:
        _fail(f"task {task_id}: {exc}.", 2)
    if not force:
        _refuse_beyond_the_plan(task_id, device, profile, settings)
    if resume is not None and (seed is not None or assignments):
        _fail("--resume continues a run set with the settings it was started with; drop --seed and --set.", 2)
    settings, device, profile, out = _training_options(task_id, settings, device, profile, out, nproc, resume)
    made = _check_out(out) if out is not None else None
    err = Console(stderr=True)
    try:
        with _stopped_like_ctrl_c():
            try:
                payload, report = _run_and_write(task_id, settings, device, profile, out, err)
            except TaskFailed as exc:
                _fail(str(exc), exc.code)
    except BaseException:  # interrupted, stopped or failed: no empty --out folder of ours stays
        if out is not None:
            _remove_made(out, made)
        raise
    if fmt == "json":
        click.echo(json.dumps(payload, ensure_ascii=False, allow_nan=False))
    else:
        render_report(console(), report)
    if record:
        from .baseline import record_result

        record_result(db, payload, out, settings.workload())


@click.command("tasks")
def tasks_command() -> None:
    """List the test-plan tasks `fpinspect run` knows, with their quick and full settings."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    from ..experiments.output import format_cell
    from ..experiments.registry import all_tasks
    from .render import console

    con = console()
    con.print("Each claim cites its section of the test plan: docs/test-plan.md in fpinspect's source.\n")
    for task in all_tasks():
        quick, full = task.settings.profile("quick").to_dict(), task.settings.profile("full").to_dict()
        con.print(f"[bold]{task.id}[/bold]  {task.title}\n[dim]{task.claim}[/dim]", highlight=False)
        table = RichTable("setting", "quick", "full", box=box.SIMPLE, padding=(0, 2))
        for name in (n for n in full if n not in task.settings.UNUSED):
            table.add_row(name, Text(format_cell(quick[name])), Text(format_cell(full[name])))
        con.print(table)


def run_all(out: Path, device: str, profile: str, seed: int | None) -> int:
    """Every task in the plan's priority order into ``out/<task>/``, then the plan's report in
    ``out``; the exit status: 0 when every task gave a result, else the first failure's."""
    import time
    from datetime import datetime

    from rich.console import Console

    from ..experiments.registry import all_tasks
    from ..experiments.runs import RunRecord, RunStore, verdict_summary
    from ..reports.plan import HTML_NAME, MARKDOWN_NAME
    from .report import write_plan_report

    tasks = sorted(all_tasks(), key=lambda t: t.priority or "P9")  # stable: the plan's order within one
    err = Console(stderr=True)
    settings = {t.id: t.settings.profile(profile).with_overrides(seed, ()) for t in tasks}
    _check_out(out)
    code, done = 0, []
    with _stopped_like_ctrl_c():
        for i, task in enumerate(tasks, 1):
            err.rule(f"run all {i}/{len(tasks)}: {task.id} ({task.priority}) {task.title}")
            folder = out / task.id
            task_settings, task_device, task_profile, folder = _training_options(
                task.id, settings[task.id], device, profile, folder, None, None
            )
            _check_out(folder)
            started, start = datetime.now().isoformat(timespec="seconds"), time.monotonic()
            record = dict(
                task=task.id,
                device=device,
                profile=profile,
                settings=task_settings.to_dict(),
                started=started,
            )
            try:
                _, report = _run_and_write(task.id, task_settings, task_device, task_profile, folder, err)
                record.update(status="finished", verdict=verdict_summary(report), device=report.device)
                done.append((task.id, "finished", verdict_summary(report)))
            except TaskFailed as exc:
                err.print(f"[red]{task.id} failed:[/red] {exc}", highlight=False)
                record.update(status=exc.kind, message=str(exc))
                done.append((task.id, exc.kind, str(exc)))
                code = code or exc.code
            RunStore.write_record(folder, RunRecord(**record, seconds=round(time.monotonic() - start, 1)))
    for task_id, status, what in done:
        err.print(f"{task_id:>3}  {status:<9} {what}", highlight=False)
    write_plan_report(str(out), str(out / HTML_NAME), str(out / MARKDOWN_NAME))
    return code
