"""Text pieces several widgets share, coloured with theme variables so that they read in
dark and light themes alike."""

from __future__ import annotations

from textual.content import Content

from ...dumps.engine import outcomes
from ...dumps.engine.outcomes import ROLES, VERDICTS
from ...dumps.formats.ge_decode import TensorDesc
from ...dumps.formats.ge_types import numpy_dtype_name
from ...reports.format import BAD_STATUSES

#: The palette's tones as the theme's variables.
_THEME: dict[outcomes.Tone, str] = {
    "success": "$text-success",
    "warning": "$text-warning",
    "error": "$text-error",
    "muted": "$foreground-muted",
}
VERDICT_STYLE = {v: outcomes.styled(v, _THEME) for v in VERDICTS}
ROLE_STYLE = {r: outcomes.styled(r, _THEME) for r in ROLES}
MUTED = _THEME["muted"]


def verdict(v: str | None) -> Content:
    return Content.styled(v or "not compared", VERDICT_STYLE.get(v, MUTED))


def role(r: str | None) -> Content:
    return Content.styled(r.replace("_", " "), ROLE_STYLE[r]) if r else Content("")


def status(codes: list[str]) -> Content:
    """Status codes, problems in the error colour and OK in the success colour."""
    parts = [
        Content.styled(
            c, "$text-error" if c in BAD_STATUSES else "$text-success" if c == "OK" else "$text-warning"
        )
        for c in codes
    ]
    return Content(" ").join(parts)


def tensor(desc: TensorDesc | None) -> str:
    """``float16 NC1HWC0 [1, 1, 4, 4, 16]`` from a graph's tensor description."""
    if desc is None:
        return "no description"
    dtype = numpy_dtype_name(desc.dtype) or desc.dtype or "?"
    return f"{dtype} {desc.full_layout or '-'} {list(desc.shape)}"
