"""The Textual app of ``fpinspect open``, built from an :class:`AppSettings` by :func:`make_app`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..dumps.runs.sources import Sources
from ..experiments.runs import RunStore, default_runs_dir
from ..inspection.settings import CompareSettings
from .answering import Answering
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .screens.open_result import open_result_file
from .screens.runs import RunsScreen, run_scope
from .screens.tasks import TasksScreen
from .widgets.footer import COMPACT_WIDTH


@dataclass
class AppSettings:
    """What to open and how: the inputs (None: no dumps, as ``fpinspect launch``), key remaps
    (binding id -> keys) and the theme; for the Tasks pane the results directory, what to
    start on (``inspect``, ``tasks`` or ``result``), the preselected task, device and profile,
    the result file to show, and (for tests) preset device availability and clocks."""

    sources: Sources | None
    keymap: dict[str, str] = field(default_factory=dict)
    theme: str = "textual-dark"
    runs_dir: Path = field(default_factory=default_runs_dir)
    start: str = "inspect"
    task: str | None = None
    device: str | None = None
    profile: str = "quick"
    result: Path | None = None
    devices: dict[str, str | None] | None = None
    #: how the run is compared and judged (``--threshold``, ``--fused-types``, ...), as by ``compare``
    compare: CompareSettings = field(default_factory=CompareSettings)
    clock: Callable[[], float] = time.monotonic
    now: Callable[[], datetime] = datetime.now


class InspectorApp(App[str | None]):
    """Exits with a one-sentence problem as its result (return code 2) when the input cannot be read."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "fpinspect"
    HORIZONTAL_BREAKPOINTS = [(0, "-compact"), (COMPACT_WIDTH, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("t", "tasks", "Tasks", tooltip="Run the test plan's tasks", id="tasks"),
    ]

    def __init__(self, settings: AppSettings) -> None:
        super().__init__()
        self.settings = settings
        #: marked by each key or mouse event; the workers' loops wait while it is answered
        self.answering = Answering()
        #: every message shown to the user in a toast, oldest first (toasts expire; this does not)
        self.told: list[str] = []

    def notify(self, message: str, **options) -> None:
        """Textual's ``notify`` (thread-safe, as it is), remembering the message in :attr:`told`."""
        self.told.append(str(message))
        super().notify(message, **options)

    def on_mount(self) -> None:
        self.theme = self.settings.theme
        self.set_keymap(self.settings.keymap)
        if self.settings.sources is not None and self.settings.start == "inspect":
            self.sub_title = self.settings.sources.name
            compare = self.settings.compare
            scope = run_scope(self.settings.sources)
            if scope is not None:
                self.push_screen(RunsScreen(self.settings.sources, scope, settings=compare))
            else:
                self.push_screen(MainScreen(self.settings.sources, settings=compare))
            return
        self.action_tasks()
        if self.settings.result is not None:
            open_result_file(self, self.settings.result)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent) and not event.is_forwarded:
            self.answering.key()
        await super().on_event(event)

    def tasks_screen(self) -> TasksScreen:
        """The one Tasks pane, installed so that its runs go on while other screens show."""
        if not self.is_screen_installed("tasks"):
            s = self.settings
            self.install_screen(
                TasksScreen(
                    RunStore(s.runs_dir),
                    task=s.task,
                    device=s.device,
                    profile=s.profile,
                    devices=s.devices,
                    clock=s.clock,
                    now=s.now,
                ),
                "tasks",
            )
        return self.get_screen("tasks")

    def action_tasks(self) -> None:
        screen = self.tasks_screen()
        if screen not in self.screen_stack:
            self.push_screen(screen)
        elif self.screen is not screen:
            self.notify("The Tasks pane is open underneath: escape goes back to it.", timeout=2)

    async def action_quit(self) -> None:
        # every run's child is stopped before the app goes; the wait for them runs beside the UI
        if self.is_screen_installed("tasks"):
            self.get_screen("tasks").stop_all(then=self.exit)
        else:
            self.exit()

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


def make_app(settings: AppSettings) -> InspectorApp:
    return InspectorApp(settings)
