"""What the reports share: Markdown escaping, number formatting, the HTML pages' templates (which
escape every value: ``templates/``), and the geometry of a bar chart
drawn as inline SVG (no script, no external asset)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import jinja2

from ..dumps.engine import outcomes

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
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


#: Width of one character of a bar label (10 px sans-serif digits are 5.6 px wide in Chromium).
_CHAR = 6.0


@dataclass(frozen=True)
class Bar:
    """One bar of a :class:`Chart`, its coordinates as the SVG writes them."""

    x: int
    y: str
    height: str
    count: int | float
    label: str
    #: Where its label is written (``mid`` the label's anchor), None when it is left out.
    mid: str | None


@dataclass(frozen=True)
class Chart:
    """Bars of counts on a log scale (a few outliers stay visible) with labels under them and a
    caption under the chart (HTML text, so it wraps instead of being cut off): the geometry of
    the ``histogram`` macro of ``templates/macros.html``.

    Labels wider than a bar are written upright (``turned``, 90 degrees); where even so they
    would touch, only every k-th is written (each bar still names its range in its tooltip)."""

    bars: list[Bar]
    bar: int
    width: int
    height: int
    below: int
    turned: bool
    caption: str


def chart(
    counts: list[int] | list[float],
    labels: list[str],
    width: int = 360,
    height: int = 120,
    caption: str = "ULP error (counts on a log scale)",
) -> Chart | None:
    """The chart of ``counts`` named by ``labels``; None when there is nothing to draw."""
    if not counts or not any(counts):
        return None
    n = len(counts)
    bar = min(40, max(4, (width - 10) // n))
    widest = max((len(label) for label in labels), default=1) * _CHAR
    turned = widest > bar - 2
    # horizontal labels need their width between them; upright ones a line height (12 px)
    step = max(1, math.ceil((12 if turned else widest + 4) / bar))
    below = math.ceil(widest) + 10 if turned else 16
    top = math.log10(max(counts) + 1)
    bars = []
    for i, c in enumerate(counts):
        h = 0 if c == 0 else max(1.0, (height - 10) * math.log10(c + 1) / top)
        x = 5 + i * bar
        mid = x + (bar - 2) / 2 + (3.5 if turned else 0)  # upright: half a glyph height, x is the baseline
        bars.append(Bar(x, f"{height - h:.1f}", f"{h:.1f}", c, labels[i], None if i % step else f"{mid:.1f}"))
    return Chart(bars, bar, bar * n + 10, height, below, turned, caption)


#: The pages' templates (``templates/``), escaping every value they are given: text read from
#: a report or a result (an op's name, a claim) is shown as written and never becomes markup.
_PAGES = jinja2.Environment(
    loader=jinja2.PackageLoader("fpinspect.reports", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
    finalize=lambda value: "" if value is None else value,
)
_PAGES.filters["number"] = number
#: A verdict's (or role's) background on the pages.
_PAGES.globals["background"] = lambda name: outcomes.BACKGROUND[outcomes.tone(name)]
#: What :func:`number` writes as a number (a table cell right-aligned), not as text.
_PAGES.tests["numeric"] = lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)


def page(template: str, **context) -> str:
    """The HTML of ``templates/<template>`` given ``context``."""
    return _PAGES.get_template(template).render(**context)
