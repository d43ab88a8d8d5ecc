"""A comparison as one self-contained HTML page: no network, no external asset, any browser.

The page is made from the ``--format json`` report of ``compare`` (a plain dict), so a report
saved last week renders as well as a run compared now; a run compared now also gives each
output's ULP histogram in log2 bins (``bins``), where a saved report has only the shares at 0,
1 and 2+ ULP. Sections: the summary and the localisation's sentence; a table of every record,
sortable by any column and filtered by a text box; a card per fused op with each output's
metrics, the replay's three-way view, its histogram (inline SVG) and its worst elements. A link
may carry the filter: ``report.html#q=autofuse_2 fail``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

#: Record key -> (counts, lower edges, integer distances): a histogram of ULP errors in log2 bins.
Bins = Mapping[tuple[str, str, int], tuple[list[int], list[float], bool]]

_CSS = """
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

_JS = """
var filter = document.getElementById('filter');
filter.addEventListener('input', function (e) {
  var words = e.target.value.toLowerCase().split(/\\s+/).filter(Boolean);
  function shown(el) { var t = el.textContent.toLowerCase(); return words.every(function (w) { return t.indexOf(w) >= 0; }); }
  document.querySelectorAll('#records tbody tr').forEach(function (tr) { tr.classList.toggle('hidden', !shown(tr)); });
  document.querySelectorAll('.card').forEach(function (c) { c.classList.toggle('hidden', !shown(c)); });
  document.getElementById('count').textContent = document.querySelectorAll('#records tbody tr:not(.hidden)').length;
});
document.querySelectorAll('#records th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = document.querySelector('#records tbody'), rows = Array.from(body.rows);
    var up = th.dataset.dir !== 'up'; th.dataset.dir = up ? 'up' : 'down';
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v || a.cells[col].textContent, y = b.cells[col].dataset.v || b.cells[col].textContent;
      var p = parseFloat(x), q = parseFloat(y);
      var c = (!isNaN(p) && !isNaN(q)) ? p - q : x.localeCompare(y);
      return up ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
// a link to the page may carry its filter: report.html#q=words
var q = new URLSearchParams(location.hash.slice(1)).get('q');
if (q) { filter.value = q; filter.dispatchEvent(new Event('input')); }
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value))


def _num(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{digits}g}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else _e(value)


def _cause(summary: dict) -> dict[str, str]:
    out = {}
    for role in ("introduced", "inherited", "more_accurate", "unverified"):
        for name in summary.get(role) or []:
            out.setdefault(name, role.replace("_", " "))
    return out


def _badge(verdict: str | None) -> str:
    return f'<span class="badge {_e(verdict or "none")}">{_e(verdict or "not compared")}</span>'


def histogram_svg(counts: list[int], labels: list[str], width: int = 360, height: int = 120) -> str:
    """Bars of ``counts`` (log scale, so a few outliers stay visible) with ``labels`` under them."""
    if not counts or not any(counts):
        return '<p class="muted">no finite elements compared</p>'
    n = len(counts)
    bar = min(40, max(4, (width - 10) // n))
    top = math.log10(max(counts) + 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{bar * n + 10}" height="{height + 30}" role="img">'
    ]
    for i, c in enumerate(counts):
        h = 0 if c == 0 else max(1.0, (height - 10) * math.log10(c + 1) / top)
        x, y = 5 + i * bar, height - h
        parts.append(
            f'<rect x="{x}" y="{y:.1f}" width="{bar - 2}" height="{h:.1f}" fill="#5c6bc0"><title>{_e(labels[i])}: {c}</title></rect>'
        )
        if n <= 12 or i % max(1, n // 8) == 0:
            parts.append(f'<text x="{x}" y="{height + 14}" font-size="10">{_e(labels[i])}</text>')
    parts.append(
        f'<text x="5" y="{height + 28}" font-size="10" fill="#666">ULP error (counts on a log scale)</text></svg>'
    )
    return "".join(parts)


def _bin_labels(lower: list[float], integer: bool) -> list[str]:
    labels = []
    for i, lo in enumerate(lower):
        hi = lower[i + 1] if i + 1 < len(lower) else None
        if lo == 0 and i == 0:
            labels.append("0")
        elif integer:
            labels.append(f"{lo:g}" if hi is None or hi - lo <= 1 else f"{lo:g}-{hi - 1:g}")
        else:
            labels.append(f"<{hi:g}" if lo == 0 else f"{lo:g}+")
    return labels


def _histogram(record: dict, bins: Bins | None) -> str:
    key = (record["fused_op"], record["kind"], record["fused_index"])
    if bins and key in bins:
        counts, lower, integer = bins[key]
        return histogram_svg(list(counts), _bin_labels(list(lower), integer))
    share = (record.get("metrics") or {}).get("ulp", {}).get("share")
    count = (record.get("metrics") or {}).get("finite")
    if not share or not count:
        return ""
    labels = list(share)
    return histogram_svg([round(share[k] * count) for k in labels], labels)


def _kv(rows: list[tuple[str, str]]) -> str:
    return (
        '<table class="kv">' + "".join(f"<tr><td>{_e(k)}</td><td>{v}</td></tr>" for k, v in rows) + "</table>"
    )


def _replay(replay: dict | None) -> str:
    if not replay:
        return '<p class="muted">not replayed</p>'
    if replay.get("status") != "ok":
        return f"<p>replay <b>{_e(replay.get('status'))}</b>: {_e(replay.get('reason'))}</p>"
    rows = []
    for name, label in (
        ("fidelity", "eager replay vs fusion-off dump (fidelity)"),
        ("fused_vs_replay", "fused vs its own eager replay"),
        ("fused_vs_fp64", "fused vs float64"),
        ("eager_vs_fp64", "eager vs float64"),
    ):
        part = replay.get(name) or {}
        value = f"{_num(part.get('red'))} eps"
        if part.get("max_ulp") is not None:
            value += f", max {_num(part.get('max_ulp'))} ULP"
        if part.get("verdict"):
            value += f" {_badge(part['verdict'])}"
        rows.append((label, value))
    rows.append(("closer to float64", _e(replay.get("closer_to_truth"))))
    standard = replay.get("standard")
    if isinstance(standard, dict):
        rows.append(
            ("benchmark standard", _e(standard.get("verdict")) + f" ({_e(standard.get('op_class') or '')})")
        )
    return _kv(rows)


def _worst(metrics: dict) -> str:
    worst = metrics.get("worst") or []
    if not worst:
        return ""
    head = "<tr><th>index</th><th>fused</th><th>original</th><th>abs</th><th>ULP</th><th>bits</th></tr>"
    rows = "".join(
        f"<tr><td>{_e(w.get('index'))}</td><td class=n>{_num(w.get('a'), 6)}</td><td class=n>{_num(w.get('b'), 6)}</td>"
        f"<td class=n>{_num(w.get('abs'))}</td><td class=n>{_num(w.get('ulp'))}</td>"
        f"<td><code>{_e(w.get('a_bits'))} / {_e(w.get('b_bits'))}</code></td></tr>"
        for w in worst
    )
    return f"<table>{head}{rows}</table>"


def _output_block(record: dict, bins: Bins | None) -> str:
    m = record.get("metrics") or {}
    u = m.get("ulp") or {}
    origin = f"{record.get('origin_op')}:{record.get('origin_index')}" if record.get("origin_op") else "-"
    if record.get("verdict") is None:
        why = ", ".join(record.get("status") or []) + (
            f": {record['message']}" if record.get("message") else ""
        )
        return f"<h3>{_e(record['kind'])} {_e(record['fused_index'])} vs {_e(origin)}</h3><p>not compared ({_e(why)})</p>"
    metrics = _kv(
        [
            ("verdict", _badge(record.get("verdict")) + " " + _e("; ".join(record.get("reasons") or []))),
            ("status", _e(", ".join(record.get("status") or []))),
            ("relative L2 error", f"{_num(m.get('red_eps'))} eps"),
            (
                "cosine / max abs / max rel",
                f"{_num(record.get('cosine'), 8)} / {_num(record.get('max_abs'))} / {_num(record.get('max_rel'))}",
            ),
            ("ULP p50 / p99 / max", f"{_num(u.get('p50'))} / {_num(u.get('p99'))} / {_num(u.get('max'))}"),
            ("NaN / inf on one side", f"{_num(m.get('nan_mismatch'))} / {_num(m.get('inf_mismatch'))}"),
            (
                "files",
                f"<code>{_e(record.get('fused_file'))}</code><br><code>{_e(record.get('origin_file'))}</code>",
            ),
        ]
    )
    return (
        f"<h3>{_e(record['kind'])} {_e(record['fused_index'])} vs {_e(origin)}</h3>"
        f"<div style='display:flex;gap:2em;flex-wrap:wrap'><div>{metrics}</div><div>{_histogram(record, bins)}</div></div>"
        f"{_replay(record.get('replay')) if record['kind'] == 'output' else ''}{_worst(m)}"
    )


def render(report: dict, bins: Bins | None = None, title: str = "fpinspect comparison") -> str:
    """The HTML page of ``report`` (``compare --format json``'s object)."""
    records, summary = report.get("records") or [], report.get("summary") or {}
    cause = _cause(summary)
    verdicts = summary.get("verdicts") or {}
    counts = ", ".join(f"{n} {'not compared' if v == 'none' else v}" for v, n in verdicts.items() if n)
    counts = counts or "nothing compared"
    lists = "".join(
        f"<tr><td>{_e(role.replace('_', ' '))}</td><td>{_e(', '.join(summary.get(role) or []) or '-')}</td></tr>"
        for role in ("introduced", "inherited", "more_accurate", "unverified")
    )
    warnings = summary.get("warnings") or []
    head_cells = [
        "fused op",
        "kind",
        "#",
        "original",
        "verdict",
        "cause",
        "red eps",
        "ULP max",
        "ULP p99",
        "cosine",
        "status",
    ]
    rows = []
    for r in records:
        m = r.get("metrics") or {}
        u = m.get("ulp") or {}
        values = [
            (r.get("fused_op"), None),
            (r.get("kind"), None),
            (r.get("fused_index"), r.get("fused_index")),
            (r.get("origin_op") or "-", None),
            (r.get("verdict") or "-", None),
            (cause.get(r.get("fused_op"), "") if r.get("kind") == "output" else "", None),
            (_num(m.get("red_eps")), m.get("red_eps")),
            (_num(u.get("max")), u.get("max")),
            (_num(u.get("p99")), u.get("p99")),
            (_num(r.get("cosine"), 8), r.get("cosine")),
            (", ".join(r.get("status") or []), None),
        ]
        cells = "".join(
            f'<td class="{"n" if sort is not None else ""}" data-v="{_e(sort)}">{_e(text)}</td>'
            if sort is not None
            else f"<td>{_e(text)}</td>"
            for text, sort in values
        )
        rows.append(f'<tr class="{_e(r.get("verdict") or "none")}">{cells}</tr>')
    cards = []
    by_op: dict[str, list[dict]] = {}
    for r in records:
        by_op.setdefault(r.get("fused_op"), []).append(r)
    for op, recs in by_op.items():
        outputs = [r for r in recs if r.get("kind") == "output"]
        worst = max(
            (r.get("verdict") for r in outputs if r.get("verdict")),
            key=("pass", "warn", "fail").index,
            default=None,
        )
        blocks = "".join(_output_block(r, bins) for r in recs)
        cards.append(
            f'<div class="card" id="op-{_e(op)}"><h2>{_e(op)} <span class="muted">{_e(recs[0].get("fused_type"))}</span> '
            f"{_badge(worst)} <i>{_e(cause.get(op, ''))}</i></h2>{blocks}</div>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f'<p class="lead">{_e(summary.get("look_first") or "No fused op introduced an error.")}</p>'
        f"<p>{_num(summary.get('fused_ops'))} fused ops, {_num(len(records))} records: {_e(counts)}.</p>"
        f'<table class="kv">{lists}</table>'
        + (f"<h2>Warnings</h2><ul>{''.join(f'<li>{_e(w)}</li>' for w in warnings)}</ul>" if warnings else "")
        + f'<h2>Records (<span id="count">{len(rows)}</span>)</h2>'
        '<input id="filter" type="search" placeholder="filter: op, verdict, cause, status ..." aria-label="filter">'
        f'<table id="records"><thead><tr>{"".join(f"<th>{_e(h)}</th>" for h in head_cells)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"<h2>Fused ops</h2>{''.join(cards)}"
        f"<script>{_JS}</script></body></html>\n"
    )
