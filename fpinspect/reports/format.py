"""Number and name formatting shared by the front ends (terminal, inspector, HTML page)."""

from __future__ import annotations

import math
import re

from rich.text import Text

BAD_STATUSES = {
    "FILE_NOT_FOUND",
    "NPY_LOAD_ERROR",
    "FORMAT_UNSUPPORTED",
    "FORMAT_CONVERSION_ERROR",
    "SHAPE_MISMATCH",
    "NO_MAPPING",
    "COMPUTE_ERROR",
    "ORIGIN_NOT_FOUND",
    "NAN_MISMATCH",
    "INF_MISMATCH",
}


#: The two relative errors a pair's report shows, named by their formulas so they are never
#: taken for one another: the reference script's, against the larger magnitude (never above 1
#: where the signs agree), and the one relative to B, which the error statistics use (over the
#: elements whose ``|B|`` is at least the format's smallest normal) and a worst element shows
#: whatever ``B`` is (``inf`` where B is 0).
REL_REFERENCE = "|A-B| / max(|A|,|B|)"
REL_TO_B = "|A-B|/|B|"

#: The columns of a worst-elements table (``diff`` and the inspector's drill-down).
WORST_COLUMNS = ("index", "A", "B", "abs", REL_TO_B, "ULP", "A bits", "B bits")


def worst_row(e: dict) -> tuple[str, ...]:
    """One worst element (an entry of ``PairResult.worst``) as the cells of :data:`WORST_COLUMNS`."""
    return (
        str(e["index"]),
        fmt_num(e["a"]),
        fmt_num(e["b"]),
        fmt_num(e["abs"], "e3"),
        fmt_num(e["rel"], "e3"),
        fmt_num(e["ulp"]),
        e["a_bits"],
        e["b_bits"],
    )


def fmt_num(v, kind: str = "g") -> str:
    """Compact, aligned-friendly number text; ``-`` for missing, NaN / inf spelled out."""
    if v is None:
        return "-"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if kind == "cos":
        return f"{v:.8f}"
    if kind == "pct":
        return f"{100 * v:.2f}%"
    if kind == "e":
        return f"{v:.4e}"
    if kind == "e3":
        return f"{v:.3e}"
    if kind == "e2":
        return f"{v:.2e}"
    return f"{v:.6g}"


def status_text(status: list[str]) -> Text:
    t = Text()
    for i, code in enumerate(status):
        if i:
            t.append(" ")
        style = "bold red" if code in BAD_STATUSES else ("green" if code == "OK" else "yellow")
        t.append(code, style=style)
    return t


#: What a terminal would act on instead of showing: the C0 controls (ESC, BEL, CR, ...), DEL, the
#: C1 controls (CSI, OSC, ... as single code points) and the bidirectional overrides and isolates,
#: which reorder what follows them on screen.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, keep: str = "") -> str:
    """``text`` (a name or message read from a file) with every control character written as a
    visible escape, ``\\x1b`` or ``\\u202e``, so a graph or dump file cannot retitle the terminal,
    write its clipboard (OSC 52) or hide text. Characters in ``keep`` (a report's own ``"\\n"``)
    stay as they are; printable text, other scripts included, is unchanged."""
    return _CONTROLS.sub(lambda m: m.group() if m.group() in keep else ascii(m.group())[1:-1], text)


def short_name(name: str | None, width: int) -> str:
    """Keep both ends of long op names: the start says the kind, the end says which. Control
    characters are shown escaped (:func:`printable`)."""
    if name is None:
        return "-"
    name = printable(name)
    if len(name) <= width:
        return name
    head = (width - 1) * 2 // 3
    return f"{name[:head]}…{name[-(width - 1 - head) :]}"
