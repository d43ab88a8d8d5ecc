"""Write a finished report to a folder: ``result.json``, ``report.md`` and one PNG per
histogram and curve under ``figures/``. Matplotlib is imported only here, without pyplot,
so the calling process's plotting state is left alone; without matplotlib the JSON and the
report are still written, and the report names the figures it could not draw."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .results import Curve, Histogram, TaskReport

Chart = Histogram | Curve


def can_draw() -> bool:
    """Whether matplotlib is installed (figures need it; result.json and report.md do not)."""
    return importlib.util.find_spec("matplotlib") is not None


def figures_of(report: TaskReport) -> list[Chart]:
    """The report's figures in report order: histograms, then curves."""
    return [*report.histograms, *report.curves]


def undrawn_figures(report: TaskReport) -> list[str]:
    """Titles of the figures :func:`write_outputs` skips here (all of them without matplotlib)."""
    return [] if can_draw() else [f.title for f in figures_of(report)]


def format_cell(value: Any) -> str:
    """One table cell as text: floats to 6 significant digits, booleans as yes/no, None
    as a dash, lists as JSON (the form ``--set`` accepts)."""
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        try:
            return json.dumps(value, ensure_ascii=False)
        except TypeError:
            return str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def dtypes_of(settings: dict[str, Any]) -> str:
    """The formats a run measured: its ``dtypes`` when the task has that setting, else ``dtype``."""
    return ", ".join(settings["dtypes"]) if settings.get("dtypes") else str(settings.get("dtype"))


def agreement(agrees: bool | None) -> str:
    return {True: "yes", False: "no", None: "cannot tell here"}[agrees]


def write_figure(h: Histogram, path: Path) -> None:
    """A bar chart of ``h`` with each bar's value written above it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(4.5, 0.8 * len(h.bins) + 2.0), 3.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    positions = range(len(h.bins))
    bars = ax.bar(positions, h.counts, color="#4c72b0")
    ax.bar_label(bars, labels=[format_cell(c) for c in h.counts], fontsize=8)
    long_labels = max((len(b) for b in h.bins), default=0) > 6
    ax.set_xticks(
        list(positions),
        list(h.bins),
        rotation=30 if long_labels else 0,
        ha="right" if long_labels else "center",
    )
    ax.set_title(h.title, fontsize=10)
    ax.set_xlabel(h.xlabel)
    ax.set_ylabel(h.ylabel)
    ax.margins(y=0.15)
    fig.savefig(path, dpi=120)


def _draw_secondary(ax, c: Curve) -> list:
    """``c``'s secondary lines, dashed, on a second y axis at the right of ``ax``; returns
    them for the shared legend. On a log axis, values <= 0 are left out."""
    right = ax.twinx()
    colors = ("#c44e52", "#8c8c8c", "#55a868", "#8172b2")
    lines = []
    for s, color in zip(c.secondary, colors * len(c.secondary)):
        y = [v if v > 0 or not c.secondary_log else float("nan") for v in s.y]
        lines += right.plot(s.x, y, "--", color=color, linewidth=1.0, label=s.label)
    if c.secondary_log and any(v > 0 for s in c.secondary for v in s.y):
        right.set_yscale("log")
    right.set_ylabel(c.secondary_ylabel)
    return lines


def write_curve(c: Curve, path: Path) -> None:
    """A line chart of ``c``: one line per series (steps for a CDF), the secondary lines on
    a second axis, with one legend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 3.8), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for s in c.series:
        if not s.x:
            continue
        if c.steps:
            ax.step(s.x, s.y, where="post", label=s.label)
        else:
            ax.plot(s.x, s.y, marker="o", markersize=3, label=s.label)
    positive = [x for s in c.series for x in s.x if x > 0]
    if c.xscale == "log" and positive:
        ax.set_xscale("symlog", linthresh=min(positive))
    ax.set_title(c.title, fontsize=10)
    ax.set_xlabel(c.xlabel)
    ax.set_ylabel(c.ylabel)
    ax.grid(alpha=0.3)
    handles = ax.get_lines()
    if c.secondary:
        handles = [*handles, *_draw_secondary(ax, c)]
    if any(s.x for s in (*c.series, *c.secondary)):
        ax.legend(handles=handles, fontsize=8)
    fig.savefig(path, dpi=120)


def _md_cell(value: Any) -> str:
    return format_cell(value).replace("|", "\\|").replace("\n", "<br>")


def markdown_table(columns: list[str], rows: list[list[Any]]) -> list[str]:
    """The lines of a Markdown table (cells as :func:`format_cell` writes them, ``|`` escaped)."""
    out = ["| " + " | ".join(_md_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return out


def _flatten(d: dict[str, Any], prefix: str = "") -> list[list[Any]]:
    rows: list[list[Any]] = []
    for k, v in d.items():
        if isinstance(v, dict):
            rows += _flatten(v, f"{prefix}{k}.")
        else:
            rows.append([f"{prefix}{k}", v])
    return rows


def render_markdown(report: TaskReport, figures: dict[str, Path]) -> str:
    env = report.environment
    lines = [
        f"# {report.task} — {report.title}",
        "",
        f"> Claim {report.claim}",
        "",
        f"Measured on **{report.device}** ({env.get('device_name', 'unknown device')}), torch {env.get('torch')}, "
        f"{dtypes_of(report.settings)}, seed {report.settings.get('seed')}, profile `{report.profile}`; "
        f"fpinspect {env.get('fpinspect')}, numpy {env.get('numpy')}, Python {env.get('python')}.",
        "",
        "## Expectation and measurement",
        "",
        *markdown_table(
            ["topic", "expectation", "measured", "agrees"],
            [[v.topic, v.expectation, v.measured, agreement(v.agrees)] for v in report.verdicts],
        ),
    ]
    for t in report.tables:
        lines += ["", f"## {t.title}", "", *markdown_table(list(t.columns), [list(r) for r in t.rows])]
    drawn = [f for f in figures_of(report) if f.name in figures]
    skipped = [f.title for f in figures_of(report) if f.name not in figures]
    if drawn or skipped:
        lines += ["", "## Figures", ""]
        lines += [f"![{f.title}]({figures[f.name].as_posix()})" for f in drawn]
    if skipped:
        lines += [
            "",
            "Not drawn (matplotlib is not installed; the numbers are in result.json): "
            + "; ".join(skipped)
            + ".",
        ]
    lines += ["", "## Settings", "", *markdown_table(["setting", "value"], _flatten(report.settings))]
    lines += ["", "## Environment", "", *markdown_table(["key", "value"], _flatten(env))]
    return "\n".join(lines) + "\n"


def write_outputs(report: TaskReport, out_dir: Path) -> list[Path]:
    """Write ``result.json``, ``figures/<name>.png`` (when matplotlib is installed, see
    :func:`undrawn_figures`) and ``report.md`` into ``out_dir`` (created if needed);
    returns the paths written.

    All or nothing: the set is written into a hidden folder in ``out_dir`` and moved into
    place with the interrupting signals held back, so an interrupted write leaves the
    previous set (or none), never a ``result.json`` beside half of ``figures/``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".incomplete-", dir=out_dir))
    try:
        names = _write_set(report, staging)
        with _signals_held():
            for name in (RESULT, "report.md", FIGURES):  # the previous set, result first
                _remove(out_dir / name)
            for name in (FIGURES, "report.md", RESULT):
                if (staging / name).exists():
                    os.replace(staging / name, out_dir / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out_dir / name for name in names]


RESULT = "result.json"
FIGURES = "figures"


def _write_set(report: TaskReport, folder: Path) -> list[Path]:
    """The output set written into ``folder``; returns the paths relative to it."""
    (folder / RESULT).write_text(
        json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n", "utf-8"
    )
    figures: dict[str, Path] = {}
    drawable = figures_of(report) if can_draw() else []
    if drawable:
        (folder / FIGURES).mkdir()
    for f in drawable:
        figures[f.name] = Path(FIGURES) / f"{f.name}.png"
        (write_curve if isinstance(f, Curve) else write_figure)(f, folder / figures[f.name])
    (folder / "report.md").write_text(render_markdown(report, figures), "utf-8")
    return [Path(RESULT), Path("report.md"), *figures.values()]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def _signals_held():
    """Hold back ctrl+c, SIGTERM and SIGHUP (delivered when the block ends) on this thread;
    where the platform cannot, the block runs as it is."""
    held = {signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)}
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
