"""The line above the op list: progress with a spinner while pairs are computed, then which
fused op to look at first."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from .in_place import update_in_place

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Banner(Static):
    DEFAULT_CSS = """
    Banner {
        height: auto;
        max-height: 3;
        padding: 0 1;
        background: $panel;
        &.-introduced { background: $error 20%; }
        &.-clean { background: $success 15%; }
        &.-browse, &.-failed { background: $warning 20%; max-height: 5; }
    }
    """

    busy: reactive[bool] = reactive(False)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._message = Content("")
        self._note: Content | None = None
        self._frame = 0
        self._timer: Timer | None = None

    def say(self, message: Content | str, *, busy: bool = False, tone: str | None = None) -> None:
        """Show ``message``; ``busy`` adds a spinner; ``tone`` is one of introduced, clean,
        browse, failed (a background tint) or None."""
        self._message = Content(message) if isinstance(message, str) else message
        for name in ("introduced", "clean", "browse", "failed"):
            self.set_class(tone == name, f"-{name}")
        self.busy = busy
        self._draw()

    def note(self, note: Content | str | None) -> None:
        """A second line kept under every message (what the list shows); ``None`` removes it."""
        self._note = Content(note) if isinstance(note, str) else note
        self._draw()

    def watch_busy(self, busy: bool) -> None:
        if busy and self._timer is None:
            self._timer = self.set_interval(0.1, self._spin)
        elif not busy and self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(_FRAMES)
        self._draw()

    def _draw(self) -> None:
        spinner = Content.styled(_FRAMES[self._frame] + " ", "$text-accent") if self.busy else Content("")
        note = Content("\n") + self._note if self._note is not None else Content("")
        update_in_place(self, spinner + self._message + note)  # the spinner turns 10 times a second
