"""Opening a result from the Tasks pane, its History and the command line: a kept run, a
``result.json`` by path, or one picked from a folder tree."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from ...experiments.runs import KeptRun, ResultError, load_result
from ..widgets.result_view import ResultView
from .pick_result import PickResultScreen
from .result import ResultScreen


def open_kept_run(app: App, run: KeptRun) -> None:
    """Show a kept run: its result when it finished, else its failure record."""
    r = run.record
    label = f"{r.task} on {r.device} ({r.profile})"
    if run.has_result:
        open_result_file(app, run.result_path)
    else:
        app.push_screen(
            ResultScreen(
                ResultView(
                    failure=(r.status, r.message or "no result was written", r.log_tail),
                    source=run.folder,
                    label=label,
                )
            )
        )


def open_result_file(app: App, path: Path) -> bool:
    """Push the result view of ``path``; a file that cannot be read is one sentence."""
    try:
        report = load_result(path)
    except ResultError as exc:
        app.notify(str(exc), severity="error", timeout=8)
        return False
    app.push_screen(ResultScreen(ResultView(report, source=path)))
    return True


def pick_result(app: App, start: Path) -> None:
    def chosen(path: Path | None) -> None:
        if path is not None:
            open_result_file(app, path)

    app.push_screen(PickResultScreen(start), chosen)
