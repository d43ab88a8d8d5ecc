"""The Tasks pane's run settings: the device (those whose backend loads here), the profile
with each profile's estimated cost, the seed and ``KEY=VALUE`` overrides. The screen keeps
the chosen device and profile and passes them in; this widget only shows and reads them."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Input, RadioButton, RadioSet, Static

from ...experiments.backends.probe import CHOICES
from ...experiments.costs import estimates
from ...experiments.settings import PROFILES
from . import styled
from .choice import CHOSEN, UNCHOSEN, Choice
from .live_run import clock_text


def one_line(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def duration_text(seconds: float) -> str:
    """``clock_text`` up to two days, whole days beyond (a full profile on a CPU)."""
    return f"{seconds / 86400:,.0f} days" if seconds >= 2 * 86400 else clock_text(seconds)


class RunForm(Vertical):
    def __init__(self, device: str, profile: str) -> None:
        super().__init__(id="run-form")
        self._device, self._profile = device, profile

    def compose(self) -> ComposeResult:
        yield Static(Content.styled("Device", "bold"))
        with RadioSet(id="device"):
            for name in CHOICES:
                yield Choice(name, value=name == self._device, name=name)
        yield Static(id="device-note")
        yield Static(Content.styled("Profile", "bold"))
        with RadioSet(id="profile"):
            for name in PROFILES:
                yield Choice(name, value=name == self._profile, name=name)
        yield Static(id="estimate")
        with Horizontal(id="overrides-row"):
            yield Input(placeholder="seed", type="integer", id="seed")
            yield Input(id="overrides")

    def on_mount(self) -> None:
        self.border_title = "Run settings"

    def buttons(self, which: str) -> list[RadioButton]:
        """The buttons of ``which`` (``device`` or ``profile``)."""
        return list(self.query_one(f"#{which}", RadioSet).query(RadioButton))

    def choose(self, which: str, name: str) -> None:
        next(b for b in self.buttons(which) if b.name == name).value = True

    def cycle(self, which: str, current: str) -> None:
        """Choose the next enabled button of ``which`` after ``current``."""
        buttons = [b for b in self.buttons(which) if not b.disabled]
        names = [b.name for b in buttons]
        nxt = buttons[(names.index(current) + 1) % len(buttons)] if current in names else buttons[0]
        nxt.value = True

    def show_devices(self, devices: dict[str, str | None]) -> None:
        """Disable each device with a reason it cannot run here, and list the reasons."""
        for button in self.buttons("device"):
            button.disabled = devices.get(button.name) is not None
        notes = [f"{d}: {why}" for d, why in devices.items() if why]
        self.show_device_note("\n".join(notes))

    def show_device_note(self, text: str) -> None:
        self.query_one("#device-note", Static).update(Content.styled(text, styled.MUTED))

    def show_task(self, task, profile: str) -> None:
        """The profile's seed in its box, and its other settings as the overrides' hint."""
        base = task.settings.profile(profile)
        self.query_one("#seed", Input).value = str(base.seed)
        others = {k: v for k, v in base.to_dict().items() if k not in ("seed", "dtype")}
        shown = " ".join(
            f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in others.items()
        )
        box = self.query_one("#overrides", Input)
        box.value = ""
        box.placeholder = one_line(f"KEY=VALUE: {shown}", 200) if shown else "no settings to override"

    def show_estimate(
        self, task, device: str, profile: str, last_seconds: Callable[[str], float | None], settings=None
    ) -> None:
        """Each profile's cost on ``device`` before anything runs, with where the figure
        comes from (:func:`~fpinspect.experiments.costs.estimates`; ``last_seconds(profile)``:
        the slowest kept run of the profile's settings; ``settings``: the chosen profile's with the form's
        overrides, scaled by their work); the chosen profile is marked ``●`` (not by colour alone)."""
        parts = []
        guesses = estimates(task, device, last_seconds, profile, settings)
        for each in PROFILES:
            guess = guesses[each]
            cost = (
                f"{'~' if guess.rough else '≈'} {duration_text(guess.seconds)} ({guess.source})"
                if guess is not None
                else "no estimate: not measured, not run on this device yet"
            )
            chosen = each == profile
            parts.append(
                Content.assemble(
                    f"{CHOSEN if chosen else UNCHOSEN} ", (each, "bold" if chosen else ""), f": {cost}"
                )
            )
        self.query_one("#estimate", Static).update(Content("\n").join(parts))

    def requested_settings(self, task, profile: str):
        """The profile's settings with the seed and ``KEY=VALUE`` overrides typed here (as
        ``fpinspect run --seed/--set`` takes them); SettingError says why not."""
        seed = self.query_one("#seed", Input).value.strip()
        assignments = self.query_one("#overrides", Input).value.split()
        return task.settings.profile(profile).with_overrides(int(seed) if seed else None, assignments)
