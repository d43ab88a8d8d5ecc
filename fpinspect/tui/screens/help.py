"""``?``: the keys of the screen underneath, and what the columns and verdicts mean."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ..widgets import styled

GLOSSARY = """\
[b]Verdicts[/b] compare each fused output with the original output it replaced:
  [$text-success]pass[/], [$text-warning]warn[/] (close to a threshold), [$text-error]fail[/]; thresholds depend on the format.
[b]worst[/b] is the relative Euclidean distance ||fused - original|| / ||original|| in eps of the format;
  NaN/inf means NaN or infinity on one side only.
[b]cause[/b] of a failing op: [$text-error]introduced[/] (its inputs match, so the error starts here),
  inherited (an input already differs), unverified (some inputs could not be compared),
  [$text-success]more accurate[/] (it fails against its own eager replay, yet is the closer of the two to fp64).
[b]Pairs[/b]: the cards under an op are its pairs (outputs, then inputs); [b]enter[/b] opens the one with the
  thick bar (at first the worst output), [b]\\[[/b] and [b]][/b] move the bar.
[b]ULP[/b]: steps between neighbouring values of the format; 0 is bit-identical up to the sign of zero.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark", "dismiss", "Close", id="help.close")]

    def __init__(self, bindings: dict[str, ActiveBinding]) -> None:
        super().__init__()
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        # fpinspect's keys (each has an id) before Textual's generic ones (focus, copy, scroll);
        # within each, the screen's, then the app's, then the focused widget's; one line per action
        def rank(active: ActiveBinding) -> tuple[bool, int]:
            node = 0 if isinstance(active.node, Screen) else 1 if isinstance(active.node, App) else 2
            return active.binding.id is None, node

        entries: dict[tuple[str, str], list[str]] = {}
        for active in sorted(self.bindings.values(), key=rank):
            b = active.binding
            if b.description:
                entries.setdefault((b.action, b.tooltip or b.description), []).append(
                    self.app.get_key_display(b)
                )
        rows = [
            Content.assemble((", ".join(keys).ljust(14), "bold $text-accent"), description)
            for (_, description), keys in entries.items()
        ]
        keys = Content("\n").join([Content.styled("Keys", "bold"), *rows])
        with VerticalScroll(id="help-body"):
            yield Static(keys)
            yield Static(Content.from_markup(GLOSSARY), id="help-glossary")
            yield Static(
                Content.styled(
                    "ctrl+p: command palette (go to op, diff files, export)   escape: close", styled.MUTED
                )
            )
