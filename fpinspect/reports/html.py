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

from collections.abc import Mapping
from datetime import datetime, timezone

from .. import __version__
from .format import REL_REFERENCE
from .markup import CSS, escape, histogram_svg, kv_table, number

#: Record key -> (counts, lower edges, integer distances): a histogram of ULP errors in log2 bins.
Bins = Mapping[tuple[str, str, int], tuple[list[int], list[float], bool]]

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


def _cause(summary: dict) -> dict[str, str]:
    out = {}
    for role in ("introduced", "inherited", "more_accurate", "unverified"):
        for name in summary.get(role) or []:
            out.setdefault(name, role.replace("_", " "))
    return out


def _badge(verdict: str | None) -> str:
    return f'<span class="badge {escape(verdict or "none")}">{escape(verdict or "not compared")}</span>'


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


def _replay(replay: dict | None) -> str:
    if not replay:
        return '<p class="muted">not replayed</p>'
    if replay.get("status") != "ok":
        return f"<p>replay <b>{escape(replay.get('status'))}</b>: {escape(replay.get('reason'))}</p>"
    rows = []
    for name, label in (
        ("fidelity", "eager replay vs fusion-off dump (fidelity)"),
        ("fused_vs_replay", "fused vs its own eager replay"),
        ("fused_vs_fp64", "fused vs float64"),
        ("eager_vs_fp64", "eager vs float64"),
    ):
        part = replay.get(name) or {}
        value = f"{number(part.get('red'))} eps"
        if part.get("max_ulp") is not None:
            value += f", max {number(part.get('max_ulp'))} ULP"
        if part.get("verdict"):
            value += f" {_badge(part['verdict'])}"
        rows.append((label, value))
    rows.append(("closer to float64", escape(replay.get("closer_to_truth"))))
    standard = replay.get("standard")
    if isinstance(standard, dict):
        rows.append(
            (
                "benchmark standard",
                escape(standard.get("verdict")) + f" ({escape(standard.get('op_class') or '')})",
            )
        )
    return kv_table(rows)


def _worst(metrics: dict) -> str:
    worst = metrics.get("worst") or []
    if not worst:
        return ""
    head = "<tr><th>index</th><th>fused</th><th>original</th><th>abs</th><th>ULP</th><th>bits</th></tr>"
    rows = "".join(
        f"<tr><td>{escape(w.get('index'))}</td><td class=n>{number(w.get('a'), 6)}</td><td class=n>{number(w.get('b'), 6)}</td>"
        f"<td class=n>{number(w.get('abs'))}</td><td class=n>{number(w.get('ulp'))}</td>"
        f"<td><code>{escape(w.get('a_bits'))} / {escape(w.get('b_bits'))}</code></td></tr>"
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
        return f"<h3>{escape(record['kind'])} {escape(record['fused_index'])} vs {escape(origin)}</h3><p>not compared ({escape(why)})</p>"
    metrics = kv_table(
        [
            ("verdict", _badge(record.get("verdict")) + " " + escape("; ".join(record.get("reasons") or []))),
            ("status", escape(", ".join(record.get("status") or []))),
            ("relative L2 error", f"{number(m.get('red_eps'))} eps"),
            (
                f"cosine / max abs / max relative, {REL_REFERENCE}",
                f"{number(record.get('cosine'), 8)} / {number(record.get('max_abs'))} / {number(record.get('max_rel'))}",
            ),
            (
                "ULP p50 / p99 / max",
                f"{number(u.get('p50'))} / {number(u.get('p99'))} / {number(u.get('max'))}",
            ),
            ("NaN / inf on one side", f"{number(m.get('nan_mismatch'))} / {number(m.get('inf_mismatch'))}"),
            (
                "files",
                f"<code>{escape(record.get('fused_file'))}</code><br><code>{escape(record.get('origin_file'))}</code>",
            ),
        ]
    )
    return (
        f"<h3>{escape(record['kind'])} {escape(record['fused_index'])} vs {escape(origin)}</h3>"
        f"<div style='display:flex;gap:2em;flex-wrap:wrap'><div>{metrics}</div><div>{_histogram(record, bins)}</div></div>"
        f"{_replay(record.get('replay')) if record['kind'] == 'output' else ''}{_worst(m)}"
    )


def _made(command: str | None, when: datetime | None) -> str:
    """Where the page comes from: when it was made, by which fpinspect, with which command."""
    when = when or datetime.now(timezone.utc)
    line = f"Made {when.strftime('%Y-%m-%d %H:%M %Z').strip()} by fpinspect {__version__}"
    return f'<p class="muted" id="made">{escape(line)}' + (
        f" with <code>{escape(command)}</code>.</p>" if command else ".</p>"
    )


def _thresholds(summary: dict) -> str:
    """The thresholds the verdicts were judged by, one row per format (as the report records them)."""
    table = summary.get("thresholds")
    if not isinstance(table, dict) or not table:
        return "<h2 id='thresholds'>Thresholds</h2><p class='muted'>This report does not record its thresholds.</p>"
    keys = list(dict.fromkeys(k for row in table.values() if isinstance(row, dict) for k in row))
    head = "".join(f"<th>{escape(k)}</th>" for k in ["format", *keys])
    rows = "".join(
        f"<tr><td>{escape(name)}</td>"
        + "".join(
            f'<td class="n">{number(row.get(k), 6) if isinstance(row, dict) else "-"}</td>' for k in keys
        )
        + "</tr>"
        for name, row in table.items()
    )
    return f"<h2 id='thresholds'>Thresholds</h2><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def render(
    report: dict,
    bins: Bins | None = None,
    title: str = "fpinspect comparison",
    *,
    command: str | None = None,
    when: datetime | None = None,
) -> str:
    """The HTML page of ``report`` (``compare --format json``'s object), saying when it was made
    (``when``, now by default), by which fpinspect and, given, with which ``command``, and the
    thresholds the report's verdicts were judged by."""
    records, summary = report.get("records") or [], report.get("summary") or {}
    cause = _cause(summary)
    verdicts = summary.get("verdicts") or {}
    counts = ", ".join(f"{n} {'not compared' if v == 'none' else v}" for v, n in verdicts.items() if n)
    counts = counts or "nothing compared"
    lists = "".join(
        f"<tr><td>{escape(role.replace('_', ' '))}</td><td>{escape(', '.join(summary.get(role) or []) or '-')}</td></tr>"
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
            (number(m.get("red_eps")), m.get("red_eps")),
            (number(u.get("max")), u.get("max")),
            (number(u.get("p99")), u.get("p99")),
            (number(r.get("cosine"), 8), r.get("cosine")),
            (", ".join(r.get("status") or []), None),
        ]
        cells = "".join(
            f'<td class="{"n" if sort is not None else ""}" data-v="{escape(sort)}">{escape(text)}</td>'
            if sort is not None
            else f"<td>{escape(text)}</td>"
            for text, sort in values
        )
        rows.append(f'<tr class="{escape(r.get("verdict") or "none")}">{cells}</tr>')
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
            f'<div class="card" id="op-{escape(op)}"><h2>{escape(op)} <span class="muted">{escape(recs[0].get("fused_type"))}</span> '
            f"{_badge(worst)} <i>{escape(cause.get(op, ''))}</i></h2>{blocks}</div>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1>{_made(command, when)}"
        f'<p class="lead">{escape(summary.get("look_first") or "No fused op introduced an error.")}</p>'
        f"<p>{number(summary.get('fused_ops'))} fused ops, {number(len(records))} records: {escape(counts)}.</p>"
        f'<table class="kv">{lists}</table>'
        + (
            f"<h2>Warnings</h2><ul>{''.join(f'<li>{escape(w)}</li>' for w in warnings)}</ul>"
            if warnings
            else ""
        )
        + f'<h2>Records (<span id="count">{len(rows)}</span>)</h2>'
        '<input id="filter" type="search" placeholder="filter: op, verdict, cause, status ..." aria-label="filter">'
        f'<table id="records"><thead><tr>{"".join(f"<th>{escape(h)}</th>" for h in head_cells)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"{_thresholds(summary)}"
        f"<h2>Fused ops</h2>{''.join(cards)}"
        f"<script>{_JS}</script></body></html>\n"
    )


def compared_page(comparison, title: str, command: str | None = None) -> str:
    """The page of ``comparison`` (a :class:`~fpinspect.dumps.compare.DumpComparison`) compared
    now, as ``fpinspect report RUN_DIR`` makes it: every pair, inputs too, the failing ops
    replayed, each output with its ULP histogram. Raises the comparison's ``InputError``."""
    from ..dumps.drilldown import ulp_bins
    from ..replay.run import run_with_replay

    report = run_with_replay(comparison, compare_input=True)
    bins = {}
    for rec in report.records:
        if rec.result is not None and rec.result.compared and rec.result.stats is not None:
            b = ulp_bins(rec.result.stats)
            bins[rec.plan.key] = (b.counts.tolist(), list(b.lower), b.integer)
    return render(report.to_json(), bins, title, command=command)
