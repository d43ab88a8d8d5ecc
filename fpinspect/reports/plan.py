"""The whole test plan as one report: a self-contained HTML page and its Markdown twin.

Made from the ``result.json`` of every task found in a results folder: the folder itself, or
its subfolders (``run all``'s ``DIR/<task>/``, or the run folders the task launcher keeps). Per
task the expectation against the measurement, its tables and its figures (its PNGs embedded as
data URIs, so the page needs no other file); the plan's §12 tables of A and B ready to paste; the
§6.1 switch list (:mod:`.plan_switches`); and an index of which tasks ran, where, with which
profile, and which are missing. A result that cannot be read, or a run that failed, is named in
the index and in :attr:`PlanResults.problems`, never raised. The page is laid out by
``templates/plan.html``, which escapes every value.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..experiments.output import (
    FIGURES,
    RESULT,
    agreement,
    dtypes_of,
    figures_of,
    format_cell,
    markdown_table,
)
from ..experiments.registry import TASK_IDS, UnknownTask, canonical_id, get_task
from ..experiments.results import Curve, Histogram, Table, TaskReport
from ..experiments.runs import ResultError, load_result, read_json, verdict_summary
from .markup import Chart, chart, md_code, md_escape, page
from .plan_switches import SwitchList, switch_list

#: The run record ``run all`` and the task launcher keep beside a result.
RUN_RECORD = "run.json"
#: The tasks whose first table is a §12 table of the plan (A's runs / unique hashes / max ULP,
#: B's error summary per chain), in the order §12 lists them.
SECTION_12 = ("A", "B")


class PlanError(ValueError):
    """The results folder cannot be used at all; ``str()`` is one sentence naming it."""


@dataclass(frozen=True)
class TaskEntry:
    """What the results folder holds for one task. ``status`` is ``ran`` (``report`` set),
    ``failed`` (its run record says so), ``damaged`` (a result.json that cannot be read) or
    ``missing``; ``problem`` says why there is no report, in one sentence."""

    task: str
    status: str = "missing"
    folder: Path | None = None
    report: TaskReport | None = None
    problem: str = ""
    #: Other runs of the task found in the folder, not shown.
    others: int = 0

    @property
    def title(self) -> str:
        return get_task(self.task).title if self.task in TASK_IDS else ""

    @property
    def priority(self) -> str:
        return get_task(self.task).priority if self.task in TASK_IDS else ""


@dataclass
class PlanResults:
    root: Path
    #: One entry per task of the plan, in the plan's order, then folders of no known task.
    entries: list[TaskEntry] = field(default_factory=list)

    @property
    def reports(self) -> dict[str, TaskReport]:
        return {e.task: e.report for e in self.entries if e.report is not None}

    @property
    def problems(self) -> list[str]:
        """One sentence per task without a report (missing, failed, damaged)."""
        return [f"{e.task}: {e.problem}" for e in self.entries if e.problem]

    def switches(self) -> SwitchList:
        return switch_list(self.reports)


def _task_of(folder: Path) -> str | None:
    """The task a folder is named after: ``<task>`` (``run all``) or
    ``<date>-<time>-<task>-<device>-<profile>`` (the task launcher's run folders)."""
    parts = folder.name.split("-")
    for candidate in (folder.name, parts[2] if len(parts) >= 5 else ""):
        try:
            return canonical_id(candidate)
        except UnknownTask:
            continue
    return None


def _entry(folder: Path) -> TaskEntry | None:
    """The folder's result (or the record of a run that left none); None when it holds neither."""
    result = folder / RESULT
    if os.path.lexists(result):
        try:
            report = load_result(result)
        except ResultError as exc:
            return TaskEntry(_task_of(folder) or folder.name, "damaged", folder, problem=str(exc))
        try:
            task = canonical_id(report.task)
        except UnknownTask:
            return TaskEntry(
                report.task, "damaged", folder, problem=f"{result} is a result of no task of the plan."
            )
        return TaskEntry(task, "ran", folder, report)
    if not os.path.lexists(folder / RUN_RECORD):
        return None
    task = _task_of(folder) or folder.name
    try:
        record = read_json(folder / RUN_RECORD)
    except ResultError as exc:
        return TaskEntry(task, "damaged", folder, problem=str(exc))
    status = record.get("status") if isinstance(record, dict) else None
    if status in ("running", "finished"):
        why = "has not finished" if status == "running" else "finished, but its result.json is missing"
        return TaskEntry(task, "failed", folder, problem=f"the run in {folder} {why}.")
    message = record.get("message") if isinstance(record, dict) else None
    why = f" ({message})" if isinstance(message, str) and message else ""
    return TaskEntry(
        task, "failed", folder, problem=f"the run in {folder} ended with {status or 'no result'}{why}."
    )


def _mtime(entry: TaskEntry) -> float:
    try:
        return max(
            os.stat(entry.folder / name).st_mtime
            for name in (RESULT, RUN_RECORD)
            if os.path.lexists(entry.folder / name)
        )
    except (OSError, ValueError):
        return 0.0


def collect(root: Path | str) -> PlanResults:
    """Every task's newest result under ``root`` (a run that finished before one that did not)."""
    root = Path(root)
    if not root.is_dir():
        raise PlanError(f"results folder {root} {'is not a folder' if root.exists() else 'does not exist'}.")
    try:
        folders = [root, *sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))]
    except OSError as exc:
        raise PlanError(f"results folder {root} cannot be read ({exc.strerror or exc}).") from None
    found: dict[str, list[TaskEntry]] = {}
    for folder in folders:
        entry = _entry(folder)
        if entry is not None:
            found.setdefault(entry.task, []).append(entry)
    plan = PlanResults(root)
    for task in [*TASK_IDS, *sorted(set(found) - set(TASK_IDS))]:
        runs = found.get(task)
        if not runs:
            plan.entries.append(TaskEntry(task, problem=f"no result in {root}."))
            continue
        best = max(runs, key=lambda e: (e.status == "ran", _mtime(e)))
        plan.entries.append(dataclasses.replace(best, others=len(runs) - 1))
    if not found:
        raise PlanError(f"results folder {root} holds no task's result.json (nor its subfolders).")
    return plan


# -- figures ---------------------------------------------------------------------------------------

_PNG = b"\x89PNG\r\n\x1a\n"


def _figure_file(entry: TaskEntry, name: str, root: Path) -> Path | None:
    """The task's drawn figure ``name``: a regular file inside its figures folder, itself inside
    the results folder ``root``, after every symbolic link is followed; None otherwise. A figure
    name is read from ``result.json``: ``../`` in it, or a link out of the folder, must not make
    the report embed (or link) a file from elsewhere."""
    if entry.folder is None:
        return None
    figures = entry.folder / FIGURES
    try:
        inside = figures.resolve(strict=True)
        path = (figures / f"{name}.png").resolve(strict=True)
        regular = stat.S_ISREG(os.stat(path).st_mode)
        top = root.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return None
    return path if regular and path.is_relative_to(inside) and inside.is_relative_to(top) else None


def _png(entry: TaskEntry, name: str, root: Path) -> bytes | None:
    """The bytes of :func:`_figure_file` when they are a PNG, else None."""
    path = _figure_file(entry, name, root)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read() if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    return data if data.startswith(_PNG) else None


@dataclass(frozen=True)
class _FigureView:
    """A figure as the page shows it: its PNG as a data URI, else its histogram (``chart``),
    else a line saying it was not drawn."""

    title: str
    folder: Path | None
    png: str | None = None
    histogram: bool = False
    chart: Chart | None = None


def _figure_view(entry: TaskEntry, figure: Histogram | Curve, root: Path) -> _FigureView:
    png = _png(entry, figure.name, root)
    if png is not None:
        src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        return _FigureView(figure.title, entry.folder, png=src)
    if isinstance(figure, Histogram):
        drawn = chart(
            [float(c) for c in figure.counts],
            list(figure.bins),
            caption=f"{figure.xlabel} ({figure.ylabel}, log scale)",
        )
        return _FigureView(figure.title, entry.folder, histogram=True, chart=drawn)
    return _FigureView(figure.title, entry.folder)


def _figure_markdown(entry: TaskEntry, figure: Histogram | Curve, md_dir: Path, root: Path) -> str:
    if _png(entry, figure.name, root) is not None:
        png = entry.folder / FIGURES / f"{figure.name}.png"
        link = quote(Path(os.path.relpath(png, md_dir)).as_posix())
        return f"![{md_escape(figure.title)}]({link})"
    return f"- {md_escape(figure.title)}: not drawn (its numbers are in result.json)"


# -- HTML --------------------------------------------------------------------------------------------


def _agree_class(agrees: bool | None) -> str:
    return {True: "yes", False: "no", None: "cannot"}[agrees]


def _measured_on(report: TaskReport) -> str:
    env = report.environment
    return (
        f"{report.device} ({env.get('device_name', 'unknown device')}), torch {env.get('torch')}, "
        f"{dtypes_of(report.settings)}, seed {report.settings.get('seed')}, profile {report.profile}"
    )


def _index_rows(plan: PlanResults) -> list[list[str]]:
    rows = []
    for e in plan.entries:
        r = e.report
        rows.append(
            [
                e.task,
                e.priority,
                e.title,
                e.status,
                r.device if r else "-",
                (r.environment.get("device_name") or "-") if r else "-",
                r.profile if r else "-",
                verdict_summary(r) if r else "-",
                str(e.folder) if e.folder else "-",
            ]
        )
    return rows


_INDEX_COLUMNS = (
    "task",
    "priority",
    "title",
    "status",
    "device",
    "device name",
    "profile",
    "verdicts",
    "folder",
)


def _section_12(plan: PlanResults) -> list[tuple[str, Table | None]]:
    out = []
    for task in SECTION_12:
        r = plan.reports.get(task)
        out.append((task, r.tables[0] if r and r.tables else None))
    return out


def _md_table(columns, rows) -> list[str]:
    """A Markdown table of text read from results: every cell escaped (:func:`.markup.md_escape`)."""
    return markdown_table(
        [md_escape(format_cell(c)) for c in columns],
        [[md_escape(format_cell(c)) for c in row] for row in rows],
    )


def _markdown_lines(t: Table) -> list[str]:
    return _md_table(t.columns, t.rows)


def _task_view(e: TaskEntry, root: Path) -> dict:
    """What the page shows of one task beside its entry: where it was measured, its verdicts'
    rows and classes, its figures."""
    r = e.report
    if r is None:
        return {"entry": e}
    return {
        "entry": e,
        "measured_on": _measured_on(r),
        "verdicts": [(v.topic, v.expectation, v.measured, agreement(v.agrees)) for v in r.verdicts],
        "agree_classes": [_agree_class(v.agrees) for v in r.verdicts],
        "figures": [_figure_view(e, f, root) for f in figures_of(r)],
    }


def render_html(plan: PlanResults, title: str = "fpinspect: the fusion precision test plan") -> str:
    """The plan's report as one HTML page that needs no other file and no network."""
    ran = [e.task for e in plan.entries if e.report is not None]
    absent = [f"{e.task} ({e.status})" for e in plan.entries if e.report is None]
    lead = f"{len(ran)} of {len(TASK_IDS)} tasks have a result" + (
        f"; without one: {', '.join(absent)}." if absent else "."
    )
    return page(
        "plan.html",
        title=title,
        lead=lead,
        plan=plan,
        INDEX_COLUMNS=_INDEX_COLUMNS,
        index_rows=_index_rows(plan),
        index_classes=[e.status for e in plan.entries],
        section_12=[
            (task, t, "\n".join(_markdown_lines(t)) if t is not None else None)
            for task, t in _section_12(plan)
        ],
        switches=plan.switches(),
        tasks=[_task_view(e, plan.root) for e in plan.entries],
        format_cell=format_cell,
    )


# -- Markdown ------------------------------------------------------------------------------------------


def _switches_markdown(switches: SwitchList) -> list[str]:
    lines: list[str] = []
    for s in switches.entries:
        lines += [
            "",
            f"### {md_escape(s.subject)} ({md_escape(s.task)}: {md_code(s.operators)})",
            "",
            "Evidence:",
            "",
        ]
        lines += [f"- {md_escape(x)}" for x in s.evidence]
        lines += ["", "Switches (AUTOFUSE_FLAGS), narrowest first:", ""]
        lines += [
            f"- {md_code(sw.setting)}: {md_escape(sw.removes)}"
            + (f" (also touches: {md_escape(', '.join(sw.also))})" if sw.also else "")
            for sw in s.switches
        ] or ["- no switch"]
        lines += [f"- note: {md_escape(n)}" for n in s.notes]
    if not switches.entries:
        lines += ["", switches.empty_sentence()]
    if switches.notes:
        lines += ["", *(f"- {md_escape(n)}" for n in switches.notes)]
    return lines


def render_markdown(
    plan: PlanResults, md_dir: Path, title: str = "fpinspect: the fusion precision test plan"
) -> str:
    """The plan's report in Markdown; figures are linked relative to ``md_dir`` (where the file
    goes). Every text read from the results is escaped: it renders as written and makes no link,
    image or HTML."""
    lines = [
        f"# {title}",
        "",
        f"From {md_code(plan.root)}.",
        "",
        "## Tasks",
        "",
        *_md_table(_INDEX_COLUMNS, _index_rows(plan)),
    ]
    if plan.problems:
        lines += ["", "## Problems", "", *(f"- {md_escape(p)}" for p in plan.problems)]
    lines += ["", "## §12 tables (A and B), ready to paste"]
    for task, t in _section_12(plan):
        lines += ["", f"### {task}" + (f": {md_escape(t.title)}" if t else ""), ""]
        lines += _markdown_lines(t) if t else [f"{task} has no result."]
    lines += ["", "## §6.1 fusion switches", *_switches_markdown(plan.switches())]
    for e in plan.entries:
        lines += ["", f"## {md_escape(e.task)} — {md_escape(e.title)}", ""]
        if e.report is None:
            lines.append(f"{e.status}: {md_escape(e.problem)}")
            continue
        r = e.report
        lines += [
            f"> Claim {md_escape(r.claim)}",
            "",
            f"Measured on {md_escape(_measured_on(r))}; {md_code(e.folder)}.",
            "",
            "### Expectation and measurement",
            "",
        ]
        lines += _md_table(
            ["topic", "expectation", "measured", "agrees"],
            [[v.topic, v.expectation, v.measured, agreement(v.agrees)] for v in r.verdicts],
        )
        for t in r.tables:
            lines += ["", f"### {md_escape(t.title)}", "", *_markdown_lines(t)]
        figures = figures_of(r)
        if figures:
            lines += ["", "### Figures", "", *(_figure_markdown(e, f, md_dir, plan.root) for f in figures)]
    return "\n".join(lines) + "\n"


#: The report's files in a results folder, as ``run all`` and the Tasks pane write them.
HTML_NAME, MARKDOWN_NAME = "plan.html", "plan.md"


def write_plan(results_dir: Path | str) -> tuple[Path, Path]:
    """Write the plan's report of ``results_dir`` into it (:data:`HTML_NAME`, :data:`MARKDOWN_NAME`);
    returns their paths. Raises :class:`PlanError` when the folder holds no result."""
    plan = collect(results_dir)
    html, md = Path(results_dir) / HTML_NAME, Path(results_dir) / MARKDOWN_NAME
    html.write_text(render_html(plan), "utf-8")
    md.write_text(render_markdown(plan, md.parent), "utf-8")
    return html, md
