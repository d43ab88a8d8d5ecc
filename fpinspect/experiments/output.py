"""Write a finished report to a folder: ``result.json``, ``report.md`` and one PNG per
histogram under ``figures/``. Matplotlib is imported only here, without pyplot, so the
calling process's plotting state is left alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .results import Histogram, Report


def format_cell(value: Any) -> str:
    """One table cell as text: floats to 6 significant digits, booleans as yes/no, None
    as a dash."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


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


def _md_cell(value: Any) -> str:
    return format_cell(value).replace("|", "\\|").replace("\n", "<br>")


def _md_table(columns: list[str], rows: list[list[Any]]) -> list[str]:
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


def render_markdown(report: Report, figures: dict[str, Path]) -> str:
    env = report.environment
    lines = [
        f"# {report.task} — {report.title}",
        "",
        f"> Claim {report.claim}",
        "",
        f"Measured on **{report.device}** ({env.get('device_name', 'unknown device')}), torch {env.get('torch')}, "
        f"{report.settings.get('dtype')}, seed {report.settings.get('seed')}, profile `{report.profile}`.",
        "",
        "## Expectation and measurement",
        "",
        *_md_table(
            ["topic", "expectation", "measured", "agrees"],
            [[v.topic, v.expectation, v.measured, agreement(v.agrees)] for v in report.verdicts],
        ),
    ]
    for t in report.tables:
        lines += ["", f"## {t.title}", "", *_md_table(list(t.columns), [list(r) for r in t.rows])]
    if figures:
        lines += ["", "## Figures", ""]
        lines += [f"![{h.title}]({figures[h.name].as_posix()})" for h in report.histograms]
    lines += ["", "## Settings", "", *_md_table(["setting", "value"], _flatten(report.settings))]
    lines += ["", "## Environment", "", *_md_table(["key", "value"], _flatten(env))]
    return "\n".join(lines) + "\n"


def write_outputs(report: Report, out_dir: Path) -> list[Path]:
    """Write ``result.json``, ``figures/<name>.png`` and ``report.md`` into ``out_dir``
    (created if needed); returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result = out_dir / "result.json"
    result.write_text(
        json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n", "utf-8"
    )
    figures: dict[str, Path] = {}
    if report.histograms:
        (out_dir / "figures").mkdir(exist_ok=True)
    for h in report.histograms:
        figures[h.name] = Path("figures") / f"{h.name}.png"
        write_figure(h, out_dir / figures[h.name])
    md = out_dir / "report.md"
    md.write_text(render_markdown(report, figures), "utf-8")
    return [result, md, *(out_dir / p for p in figures.values())]
