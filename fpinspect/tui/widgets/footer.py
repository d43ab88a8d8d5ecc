"""The footer of every screen. On a terminal narrower than :data:`COMPACT_WIDTH` its keys sit
closer and the secondary ones are left to ``?`` and the command palette, so that ``q``, ``?``
and ``t`` (listed last) stay in view."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_WIDTH = 100
#: Actions whose keys a compact footer leaves out (``?`` lists them all): ``N`` goes with the
#: ``n`` it shows, the banner names ``i``; the Tasks pane's device and profile are buttons of its
#: form, and a result to open is found in its History too; the actions on an op are in the palette.
SECONDARY = frozenset(
    {
        "next_failing(-1)",
        "jump_introduced",
        "diff_files",
        "cycle('device')",
        "cycle('profile')",
        "open_result",
        "switches",
        "confirm(False)",
        "repro",
        "report",
        "baseline",
    }
)


class KeysFooter(Footer):
    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_WIDTH

    def watch_compact(self) -> None:
        self.refresh(recompose=True)

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if not (self.compact and isinstance(widget, FooterKey) and widget.action in SECONDARY):
                yield widget
