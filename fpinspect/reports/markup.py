"""What the HTML reports share: escaping, number formatting, the base style sheet, a key-value
table and a bar chart drawn as inline SVG (no script, no external asset)."""

from __future__ import annotations

import html
import math
import re

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}h3{font-size:1.05em;margin:.2em 0}
table{border-collapse:collapse;margin:.5em 0}th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}
th{background:#f4f4f4;cursor:pointer;user-select:none}td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{background:#c8e6c9}.warn{background:#ffe082}.fail{background:#ef9a9a}.none{background:#e0e0e0}
.badge{padding:1px 6px;border-radius:3px;font-size:.9em}.card{border:1px solid #ccc;border-radius:6px;padding:.6em 1em;margin:1em 0}
.lead{font-size:1.05em;background:#fff3e0;border-left:4px solid #ef6c00;padding:.5em 1em}
.muted{color:#666}#filter{font-size:1em;padding:4px 8px;width:24em}.hidden{display:none}
code{font-size:.95em}.kv td:first-child{color:#555}
"""


def escape(value) -> str:
    """``value`` as HTML text; None is empty."""
    return html.escape("" if value is None else str(value))


_MD_SPECIAL = re.compile(r"[\\`*\[\]<>&]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def md_escape(value) -> str:
    """``value`` as Markdown text that renders as written and makes no markup: no links or
    images (``[`` ``]`` escaped), no raw HTML (``<``, ``>`` and ``&`` as entities), no code
    spans or emphasis (`````, ``*`` and ``_`` escaped, except ``_`` inside a word, which
    CommonMark never reads as emphasis); line breaks become spaces. None is empty."""
    text = " ".join(("" if value is None else str(value)).splitlines())
    return _MD_SPECIAL.sub(lambda m: _MD_ENTITY.get(m[0]) or "\\" + m[0], text)


_MD_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def md_code(value) -> str:
    """``value`` as a Markdown code span (shown literally), or escaped text when it holds a
    backtick that would end the span."""
    text = " ".join(str(value).splitlines())
    return md_escape(text) if "`" in text else f"`{text}`"


def number(value, digits: int = 3) -> str:
    """A number for a table cell: ``digits`` significant digits for floats, NaN and ±inf
    spelled out, thousands separators for integers, a dash for None."""
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{digits}g}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else escape(value)


def kv_table(rows: list[tuple[str, str]]) -> str:
    """A two-column table: the keys escaped, the values already HTML."""
    return (
        '<table class="kv">'
        + "".join(f"<tr><td>{escape(k)}</td><td>{v}</td></tr>" for k, v in rows)
        + "</table>"
    )


#: Width of one character of a bar label (10 px sans-serif digits are 5.6 px wide in Chromium).
_CHAR = 6.0


def histogram_svg(
    counts: list[int],
    labels: list[str],
    width: int = 360,
    height: int = 120,
    caption: str = "ULP error (counts on a log scale)",
) -> str:
    """Bars of ``counts`` (log scale, so a few outliers stay visible) with ``labels`` under them,
    and ``caption`` under the chart (HTML text, so it wraps instead of being cut off).

    Labels wider than a bar are written upright (turned 90 degrees); where even so they would
    touch, only every k-th is written (each bar still names its range in its tooltip)."""
    if not counts or not any(counts):
        return '<p class="muted">no finite elements compared</p>'
    n = len(counts)
    bar = min(40, max(4, (width - 10) // n))
    widest = max((len(label) for label in labels), default=1) * _CHAR
    turned = widest > bar - 2
    # horizontal labels need their width between them; upright ones a line height (12 px)
    step = max(1, math.ceil((12 if turned else widest + 4) / bar))
    below = math.ceil(widest) + 10 if turned else 16
    top = math.log10(max(counts) + 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{bar * n + 10}" height="{height + below}" role="img">'
    ]
    for i, c in enumerate(counts):
        h = 0 if c == 0 else max(1.0, (height - 10) * math.log10(c + 1) / top)
        x, y = 5 + i * bar, height - h
        parts.append(
            f'<rect x="{x}" y="{y:.1f}" width="{bar - 2}" height="{h:.1f}" fill="#5c6bc0"><title>{escape(labels[i])}: {c}</title></rect>'
        )
        if i % step:
            continue
        mid = x + (bar - 2) / 2
        if turned:  # read bottom to top, ending under the bar; the glyphs centred on it
            mid += 3.5  # half a glyph height: x is the baseline
            parts.append(
                f'<text x="{mid:.1f}" y="{height + 4}" font-size="10" text-anchor="end" '
                f'transform="rotate(-90 {mid:.1f} {height + 4})">{escape(labels[i])}</text>'
            )
        else:
            parts.append(
                f'<text x="{mid:.1f}" y="{height + 12}" font-size="10" text-anchor="middle">{escape(labels[i])}</text>'
            )
    parts.append("</svg>")
    return f'<div class="hist">{"".join(parts)}<div class="muted" style="font-size:10px">{escape(caption)}</div></div>'
