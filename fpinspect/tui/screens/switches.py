"""``f``: the switches that turn off the highlighted fused op, as ``fpinspect switches`` finds
them: each AutoFuse flag, what it does, the other fused ops it touches, and the
``export AUTOFUSE_FLAGS=...`` line; for a capture, what ``confirm`` proved and the command that
finds and verifies Inductor's switch. ``y`` copies the line and writes the whole panel to a file."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from ..acting import ActionRefused, Cancelled, Switches, shown
from ..widgets import styled

#: What ``i`` runs: given ``tell(line)`` and ``stop()``, the lines of Inductor's switches.
InductorJob = Callable[[Callable[[str], None], Callable[[], bool]], list[str]]


def switches_lines(found: Switches, capture: list[str]) -> list[tuple[int, Content]]:
    """The panel's lines, each with its indent (a wrapped line keeps it)."""
    o = found.op
    lines = [
        (
            0,
            Content.assemble(
                ("Switches of ", "bold"),
                (o.op, "bold $text-accent"),
                (f"  {o.type}: {', '.join(o.original_types) or 'original types not recorded'}", styled.MUTED),
            ),
        ),
        (0, Content.styled("AutoFuse (AUTOFUSE_FLAGS)", "bold")),
    ]
    if not o.switches:
        lines.append((2, Content.styled("no AutoFuse flag turns this op off", styled.MUTED)))
    for s in o.switches:
        lines.append((2, Content.styled(s.setting, "bold")))
        lines.append((6, Content(s.removes)))
        also = ", ".join(s.also) if s.also else "no other fused op"
        lines.append((6, Content.styled(f"also touches: {also}", styled.MUTED)))
    lines += [(2, Content.styled(f"note: {note}", "$text-warning")) for note in o.notes]
    if found.export_line:
        lines.append((0, Content.styled(found.export_line, "bold $text-success")))
    if capture:
        lines.append((0, Content.styled("Inductor (torch.compile), for the captured model", "bold")))
        lines += [(2, Content(line)) for line in capture]
    return lines


class SwitchesScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,f", "dismiss", "Close", id="switches.close"),
        Binding(
            "i",
            "inductor",
            "Inductor",
            tooltip="For a capture: the torch.compiler.disable lines for this region, verified by running the capture again",
            id="switches.inductor",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            tooltip="Copy the export line and write the panel to a file",
            id="switches.copy",
        ),
    ]

    def __init__(
        self, found: Switches, capture: list[str], file: Path, inductor: InductorJob | None = None
    ) -> None:
        """``inductor``: for a capture, what ``i`` runs (Inductor's switches, checked by a rerun)."""
        super().__init__()
        self.found, self.capture, self.file, self.inductor = found, capture, file, inductor
        self._checking: Worker | None = None
        #: the lines ``i`` found, kept with the panel's file
        self.checked: list[str] = []

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.inductor is not None if action == "inductor" else True

    def action_inductor(self) -> None:
        if self._checking is not None:
            return
        job = self.inductor
        progress = self.query_one("#switches-inductor", Static)
        progress.update(Content.styled("running the capture again (torch loads first)…", "$text-accent"))

        def run() -> list[str]:
            worker = get_current_worker()
            tell = partial(self.app.call_from_thread, self._heard)
            try:
                return job(tell, lambda: worker.is_cancelled)
            except (ActionRefused, Cancelled) as exc:
                return [f"not checked: {str(exc).rstrip('.') or 'cancelled'}."]

        self._checking = self.run_worker(
            run, thread=True, group="inductor", exit_on_error=False, description="checking Inductor's switch"
        )

    def _heard(self, line: str) -> None:
        if self.is_mounted:
            self.query_one("#switches-inductor", Static).update(
                Content.styled(f"rerun: {line}   escape stops it", "$text-accent")
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "inductor" or not event.worker.is_finished:
            return
        self._checking = None
        if event.state == WorkerState.SUCCESS:
            self.checked = event.worker.result
            self.query_one("#switches-inductor", Static).update(
                Content("\n").join(Content(line) for line in self.checked)
            )
        elif event.state == WorkerState.ERROR:
            self.query_one("#switches-inductor", Static).update(
                Content.styled(
                    f"not checked: {type(event.worker.error).__name__}: {event.worker.error}", "$text-error"
                )
            )

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="switches-body"):
            with Vertical(id="switches-text"):
                for k, (indent, line) in enumerate(switches_lines(self.found, self.capture)):
                    text = Static(line)
                    text.styles.padding = (0, 0, 0, indent)
                    text.styles.margin = (1 if k and not indent else 0, 0, 0, 0)  # a gap before a heading
                    yield text
            yield Static(id="switches-inductor")
            check = (
                "i: find Inductor's switch and verify it by a rerun   " if self.inductor is not None else ""
            )
            yield Static(
                Content.styled(
                    f"{check}y: copy the export line, and write this panel to {shown(self.file)}   escape: close",
                    styled.MUTED,
                ),
                id="switches-keys",
            )

    def action_copy(self) -> None:
        more = [*self.capture, *self.checked]
        text = self.found.text() + "".join(f"\n{line}" for line in more) + ("\n" if more else "")
        try:
            self.file.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"Cannot write {self.file} ({exc.strerror or exc}).", severity="error")
            return
        copied = self.found.export_line or self.found.text()
        self.app.copy_to_clipboard(copied)
        self.notify(
            f"Copied {'the export line' if self.found.export_line else 'the switches'} to the clipboard "
            f"(where the terminal allows it) and wrote them to {self.file}",
            timeout=10,
        )
