"""The watched run of the Tasks pane: stage and progress, elapsed time and ETA, the latest
two histograms side by side (B's fused and eager as they accumulate), a line chart when
the task streams curves (E's losses), and the run's messages."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Log, ProgressBar, Static

from ..launcher import FAILED, FINISHED, QUEUED, TrackedRun
from . import styled
from .charts import LineChart, TaskHistogram


def clock_text(seconds: float | None) -> str:
    """``75.4`` -> ``1:15``; ``None`` -> ``-``."""
    if seconds is None:
        return "-"
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class LiveRun(Vertical):
    DEFAULT_CSS = """
    LiveRun {
        #live-head { height: 1; padding: 0 1; }
        #live-progress-row { height: 1; padding: 0 1; }
        #live-bar { width: auto; }
        #live-time { width: 1fr; padding: 0 2; }
        #live-plots { height: 1fr; min-height: 8; }
        #live-plots > * { width: 1fr; border: round $panel-lighten-2; border-title-color: $foreground-muted; }
        #live-log { height: 7; border-top: solid $panel-lighten-2; }
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        #: (run id, lines of it shown) in the log pane
        self._logged: tuple[int, int] | None = None
        #: (run id, its plots_revision) last drawn in the plots
        self._plotted: tuple[int, int] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="live-head")
        with Horizontal(id="live-progress-row"):
            yield ProgressBar(total=1, show_eta=False, id="live-bar")
            yield Static(id="live-time")
        with Horizontal(id="live-plots"):
            yield TaskHistogram(id="live-h0")
            yield TaskHistogram(id="live-h1")
            yield LineChart(id="live-curve")
            yield LineChart(id="live-curve2")
        yield Log(id="live-log", max_lines=200, auto_scroll=True)

    def on_mount(self) -> None:
        self.show(None, 0.0)

    def show(self, run: TrackedRun | None, now: float) -> None:
        head = self.query_one("#live-head", Static)
        bar = self.query_one("#live-bar", ProgressBar)
        timing = self.query_one("#live-time", Static)
        h0, h1 = self.query_one("#live-h0", TaskHistogram), self.query_one("#live-h1", TaskHistogram)
        curves = [self.query_one("#live-curve", LineChart), self.query_one("#live-curve2", LineChart)]
        if run is None:
            head.update(Content.styled("No run yet: choose a task and press enter.", styled.MUTED))
            bar.update(total=1, progress=0)
            timing.update("")
            for plot in (h0, h1, *curves):
                plot.display = False
            self._plotted = None
            self._show_log(None)
            return
        state = {QUEUED: "queued, waiting for the device", FINISHED: "finished", FAILED: "failed"}.get(
            run.state, "running"
        )
        if run.state == FAILED and run.failure is not None:
            state = f"failed ({run.failure.kind}): {run.failure.message}"
        tone = {FINISHED: "bold $text-success", FAILED: "bold $text-error"}.get(run.state, "bold")
        stage = f" · {run.stage}" if run.stage else ""
        # fixed sizes: redrawing these four times a second must not lay the screen out again
        head.update(Content.assemble((run.label, "bold"), " · ", (state, tone), stage), layout=False)
        bar.update(total=max(run.total, 1), progress=run.done)
        steps = f"{run.done}/{run.total}  " if run.total else ""
        timing.update(
            f"{steps}elapsed {clock_text(run.elapsed(now))}  ETA {clock_text(run.eta(now))}"
            if run.started is not None
            else "",
            layout=False,
        )
        if self._plotted != (run.id, run.plots_revision):
            self._plotted = (run.id, run.plots_revision)
            self._show_plots(run, h0, h1, curves)
        self._show_log(run)

    def _show_plots(
        self, run: TrackedRun, h0: TaskHistogram, h1: TaskHistogram, curves: list[LineChart]
    ) -> None:
        # the latest two histograms side by side (B's eager and fused), then line charts: the
        # newest one beside histograms (B's CDF), else the first two (E's train and eval loss)
        shown = list(run.histograms.values())[-2:]
        for plot, h in zip((h0, h1), [*shown, None, None]):
            plot.display = h is not None
            if h is not None and plot.histogram is not h:
                plot.histogram = h
                plot.border_title = h.title
        names = list(run.curves)
        names = names[-1:] if shown else names[:2]
        for chart, name in zip(curves, [*names, None, None]):
            chart.display = name is not None
            if name is not None:
                chart.border_title = name
                chart.xlabel, chart.xlog = run.curve_axes.get(name, ("", False))
                chart.lines = run.curves[name]

    def _show_log(self, run: TrackedRun | None) -> None:
        """Append the lines not shown yet; start over for another run."""
        log = self.query_one("#live-log", Log)
        if run is None:
            if self._logged is not None:
                log.clear()
            self._logged = None
            return
        shown_id, shown = self._logged if self._logged is not None else (None, 0)
        if shown_id != run.id:
            log.clear()
            shown = run.logged - len(run.log)
        new = run.logged - shown
        if new > 0:
            log.write_lines(list(run.log)[-min(new, len(run.log)) :])
        self._logged = (run.id, run.logged)
