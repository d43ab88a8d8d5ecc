"""One pair in depth: the numbers of ``fpinspect diff``, the ULP histogram, the worst
elements and where the errors concentrate. The quick diff of two files uses it too."""

from __future__ import annotations

from dataclasses import replace

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from ...dumps import InputError
from ...dumps.engine.drilldown import error_profile, ulp_bins
from ...dumps.formats.layouts import LayoutError
from ...replay.evidence import ReplayEvidence
from ...reports.pair import pair_report
from ..compiling import tell_when_compiling
from ..messages import PairComputed, ProfileComputed
from ..pairs import FilePair, RecordPair
from ..widgets import styled
from ..widgets.footer import KeysFooter
from ..widgets.histogram import UlpHistogram
from ..widgets.profile import ProfileView
from ..widgets.replay_view import conclusion, standard, three_way
from ..widgets.worst import WorstTable

#: The parts that show a loading indicator until their numbers arrive.
_PANES = ("#pair-numbers", "#histogram", "#profile", "#worst")


class PairScreen(Screen):
    """``subject`` is a pair of the comparison (drill-down) or two files (quick diff);
    ``replay`` the replay of a drilled-down fused output: it adds the three-way view (fused,
    eager, fp64) and the ULP histogram of the fused output against its own eager replay."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="back")]
    AUTO_FOCUS = "#worst"

    def __init__(self, subject: RecordPair | FilePair, replay: ReplayEvidence | None = None) -> None:
        super().__init__()
        self.subject = subject
        self.replay = replay if replay is not None and "fused_vs_replay" in replay.results else None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Content.styled(self.subject.title, "bold"), id="pair-title")
        with Horizontal(id="pair-top"):
            with VerticalScroll(id="pair-numbers"):
                if self.replay is not None:
                    yield Static(self._three_way(), id="pair-replay")
                yield Static(id="pair-report")
            with Vertical(id="pair-plots"):
                with Horizontal(id="histograms"):
                    yield UlpHistogram(id="histogram")
                    if self.replay is not None:
                        yield UlpHistogram(id="histogram-replay")
                yield ProfileView(id="profile")
        yield WorstTable(id="worst")
        yield KeysFooter()

    def _three_way(self) -> Content:
        ev = self.replay
        lines = [Content.styled("Replay on this op's own inputs", "bold"), three_way(ev), conclusion(ev)]
        if ev.standard is not None:
            lines.append(standard(ev))
        return Content("\n").join(lines)

    def on_mount(self) -> None:
        if self.replay is None:
            self.query_one("#histogram").border_title = "ULP error histogram (log count)"
        else:
            self.query_one("#histogram").border_title = "ULP vs eager dump"
            replayed = self.query_one("#histogram-replay", UlpHistogram)
            replayed.border_title = "ULP vs eager replay"
            res = self.replay.results["fused_vs_replay"]
            if res.compared:
                replayed.bins = ulp_bins(res.stats)
            else:
                replayed.note = "No numbers to plot."
        self.query_one("#worst").border_title = "Worst elements"
        for part in _PANES:
            self.query_one(part).loading = True
        self.compute(self.subject)

    @work(thread=True, exclusive=True, group="pair", exit_on_error=False)
    def compute(self, subject: RecordPair | FilePair) -> None:
        worker = get_current_worker()
        tell_when_compiling(self.app)
        try:
            result, record = subject.compute()
            self.post_message(PairComputed(result, record))
            if result is None or not result.compared or worker.is_cancelled:
                return
            a, b = subject.arrays()
            profile = error_profile(
                a, b, result.stats, layout=subject.layout, stop=lambda: worker.is_cancelled
            )
        except (InputError, LayoutError, ValueError) as exc:
            self.post_message(ProfileComputed(None, f"Where errors concentrate: not available ({exc})."))
            return
        if profile is not None:
            self.post_message(ProfileComputed(profile))

    @on(PairComputed)
    def _computed(self, msg: PairComputed) -> None:
        res, rec = msg.result, msg.record
        title = Content.styled(self.subject.title, "bold")
        if rec is not None:
            title += Content("   ") + styled.verdict(rec.verdict)
            if rec.reasons:
                title += Content(": " + "; ".join(rec.reasons))
            if rec.conversion:
                title += Content.styled(f"   converted: {rec.conversion}", styled.MUTED)
        self.query_one("#pair-title", Static).update(title)
        report = self.query_one("#pair-report", Static)
        histogram = self.query_one(UlpHistogram)
        if res is None:  # a pair of the comparison that could not be compared (no file, no mapping ...)
            report.update(
                Content("Not compared: ") + styled.status(rec.status) + Content(f"\n{rec.plan.message or ''}")
            )
        else:
            report.update(
                pair_report(
                    replace(res, worst=[], status=rec.status if rec else res.status), *self.subject.names
                )
            )
        compared = res is not None and res.compared
        if compared:
            histogram.bins = ulp_bins(res.stats)
            self.query_one(WorstTable).show(res.worst)
        else:
            histogram.note = "No numbers to plot."
            self.query_one(ProfileView).show(None, "Nothing to profile.")
        for part in _PANES:
            if part != "#profile" or not compared:  # the profile loads until its own pass is done
                self.query_one(part).loading = False

    @on(ProfileComputed)
    def _profiled(self, msg: ProfileComputed) -> None:
        view = self.query_one(ProfileView)
        view.show(msg.profile, msg.problem)
        view.loading = False

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            for part in _PANES:
                self.query_one(part).loading = False
            self.notify(f"Could not compare: {event.worker.error}", severity="error")
