"""What a comparison says — a pair's verdict, a failing op's role — in order, and how each
looks in every front end.

The palette gives each verdict and role one tone, says which are bold, and which colour a light
page gives a tone (the HTML reports, Model Explorer's nodes); a front end maps a tone to its own
medium once (Textual's theme variables, rich's colour names), so a verdict reads the same in the
terminal table, the inspector and the pages. This module imports nothing of fpinspect, so every
layer can use it (the results store too, which must not reach numerics' lazy torch import)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

#: The verdicts, least severe first.
VERDICTS = ("pass", "warn", "fail")
#: The roles of a failing op (:mod:`.localise`), in the order a summary lists them.
ROLES = ("introduced", "inherited", "more_accurate", "unverified")


def worst_verdict(verdicts: Iterable[str | None]) -> str | None:
    """The most severe of ``verdicts`` (``fail`` > ``warn`` > ``pass``); ``None`` entries (not
    compared) are skipped, and ``None`` is returned when nothing was compared."""
    judged = [v for v in verdicts if v is not None]
    return max(judged, key=VERDICTS.index) if judged else None


Tone = Literal["success", "warning", "error", "muted"]

#: The tone of each verdict (None: not compared) and of each role of :mod:`.localise`.
TONES: dict[str | None, Tone] = {
    "pass": "success",
    "warn": "warning",
    "fail": "error",
    None: "muted",
    "introduced": "error",
    "inherited": "muted",
    "unverified": "warning",
    "more_accurate": "success",
}
#: The verdicts and roles shown in bold: where to look.
BOLD = frozenset({"fail", "introduced", "more_accurate"})
#: A tone's background on a light page.
BACKGROUND: dict[Tone, str] = {
    "success": "#c8e6c9",
    "warning": "#ffe082",
    "error": "#ef9a9a",
    "muted": "#e0e0e0",
}
#: The text colour of an op that introduced an error, on a page.
INTRODUCED_TEXT = "#b71c1c"


def tone(name: str | None) -> Tone:
    """The tone of a verdict or a role; a name with none (not compared, no role) is muted."""
    return TONES.get(name, "muted")


def styled(name: str | None, colours: dict[Tone, str]) -> str:
    """The style of a verdict or role in a medium whose colour for each tone is ``colours``
    (``bold`` before it where the name is bold): ``bold red`` for ``fail`` in rich."""
    return ("bold " if name in BOLD else "") + colours[tone(name)]
