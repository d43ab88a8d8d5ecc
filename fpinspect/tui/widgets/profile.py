"""Where the errors of a pair sit: per axis, a sparkline of the off elements along it and the
stretches holding most of them."""

from __future__ import annotations

from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Sparkline, Static

from ...dumps.engine.drilldown import OFF_ULP, AxisProfile, ErrorProfile
from ...reports.format import fmt_num
from . import styled


def axis_summary(ax: AxisProfile) -> Content:
    """``by row (64): 17 99.6%, 3 0.4% · off in 2 of 64``: the stretches holding most off
    elements and their share of them, or ``evenly spread``."""
    head = Content.assemble((f"by {ax.name}", "bold"), f" ({fmt_num(ax.size)}")
    head += Content(f", bins of {fmt_num(ax.group)}): " if ax.group > 1 else "): ")
    spots = ax.hotspots(3)
    if not spots:
        return head + Content.styled("none off", styled.MUTED)
    if spots[0].share < 2 / ax.off.size:
        body = "evenly spread"
    else:
        body = ", ".join(
            f"{h.start if h.stop - h.start == 1 else f'{h.start}-{h.stop - 1}'} {fmt_num(h.share, 'pct')}"
            for h in spots
        )
    held = int(ax.off.astype(bool).sum())
    return head + Content(body) + Content.styled(f" · off in {held} of {ax.off.size}", styled.MUTED)


class ProfileView(Vertical):
    """Fed by :meth:`show` once the profile worker is done; loading until then."""

    DEFAULT_CSS = """
    ProfileView {
        height: auto;
        max-height: 12;
        overflow-y: auto;
        padding: 0 1;
        & > Sparkline > .sparkline--max-color { color: $text-error; }
        & > Sparkline > .sparkline--min-color { color: $panel-lighten-3; }
    }
    """

    def show(self, profile: ErrorProfile | None, problem: str | None = None) -> None:
        self.remove_children()
        if profile is None:
            self.mount(Static(Content.styled(problem or "no profile", styled.MUTED)))
            return
        share = profile.off / profile.elements if profile.elements else 0.0
        title = Content.assemble(
            ("Where errors concentrate", "bold"),
            (
                f"  {fmt_num(profile.off)} of {fmt_num(profile.elements)} elements "
                f"({fmt_num(share, 'pct')}) are off by more than {OFF_ULP:g} ULP or NaN/inf",
                styled.MUTED,
            ),
        )
        parts: list = [Static(title)]
        if profile.off:
            for ax in profile.axes:
                parts += [Static(axis_summary(ax)), Sparkline(ax.off.tolist())]
        self.mount_all(parts)
