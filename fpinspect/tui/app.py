"""The Textual app of ``fpinspect open``, built from a :class:`Settings` by :func:`make_app`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from .screens.help import HelpScreen
from .screens.main import MainScreen
from .sources import Sources


@dataclass
class Settings:
    """What to open and how: the inputs, key remaps (binding id -> keys) and the theme."""

    sources: Sources
    keymap: dict[str, str] = field(default_factory=dict)
    theme: str = "textual-dark"


class InspectorApp(App[str | None]):
    """Exits with a one-sentence problem as its result (return code 2) when the input cannot be read."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "fpinspect"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
    ]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings

    def on_mount(self) -> None:
        self.theme = self.settings.theme
        self.set_keymap(self.settings.keymap)
        self.sub_title = self.settings.sources.name
        self.push_screen(MainScreen(self.settings.sources))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen(self.screen.active_bindings))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        commands = getattr(screen, "palette_commands", None)
        if commands is not None:
            yield from commands()


def make_app(settings: Settings) -> InspectorApp:
    return InspectorApp(settings)
