"""`fpinspect report`: one self-contained HTML page per comparison, checked in a real browser."""

import html
import json
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import fpinspect
from fpinspect.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("html") / "report.html"
    r = run("report", SAMPLES / "regression", "--out", out)
    assert r.exit_code == 0, r.output
    return out


def test_the_page_is_self_contained_and_has_every_fused_op(page):
    text = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "an external asset"
    for op in (
        "autofuse_0_LayerNorm",
        "autofuse_1_Muls_SoftmaxV2",
        "autofuse_2_Add_LayerNorm",
        "autofuse_3_GeluV2",
        "autofuse_4_Add",
    ):
        assert f'id="op-{op}"' in text
    assert "Look first at autofuse_2_Add_LayerNorm" in text
    assert text.count("<svg") >= 5  # a ULP histogram per compared output
    assert "fused vs its own eager replay" in text


def test_a_saved_report_renders_too(tmp_path):
    root = SAMPLES / "more_accurate"
    saved = tmp_path / "r.json"
    r = run(
        "compare",
        "--af-open-graph", next((root / "dumpgraph_af_open").iterdir()),
        "--af-close-graph", next((root / "dumpgraph_af_close").iterdir()),
        "--af-open-data", root / "datadump_af_open",
        "--af-close-data", root / "datadump_af_close",
        "--format", "json", "-o", saved,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    out = tmp_path / "r.html"
    assert run("report", saved, "--out", out).exit_code == 0
    text = out.read_text()
    for name in json.loads(saved.read_text())["summary"]["more_accurate"]:
        assert f'id="op-{name}"' in text and "more accurate" in text


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda p: p / "missing.json", "does not exist"),
        (lambda p: (p / "x.json").write_text("[1,") and p / "x.json", "not a readable JSON report"),
        (lambda p: (p / "y.json").write_text('{"records": 3}') and p / "y.json", "has no records"),
        (lambda p: (p / "d").mkdir() or p / "d", "is a folder without a graph"),
    ],
)
def test_bad_sources_are_one_sentence(tmp_path, make, needle):
    r = run("report", make(tmp_path), "--out", tmp_path / "o.html")
    assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


def _colours(path: Path) -> int:
    """How many distinct colours the screenshot has (a blank page has one)."""
    image = pytest.importorskip("PIL.Image").open(path).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 20) or [])


def _chromium(*args, url):
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_chromium
def test_chromium_renders_it_without_errors(page, tmp_path):
    shot = tmp_path / "shot.png"
    proc = _chromium("--window-size=1200,1600", f"--screenshot={shot}", url=page.as_uri())
    assert shot.exists(), proc.stderr[-2000:]
    assert _colours(shot) > 10
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console


@needs_chromium
def test_the_filter_works_in_chromium(page):
    proc = _chromium("--dump-dom", url=page.as_uri() + "#q=autofuse_2")
    rows = re.findall(r'<tr class="([a-z ]*)"', proc.stdout)
    shown = [r for r in rows if "hidden" not in r]
    assert rows and len(shown) == 6  # autofuse_2's two outputs and four inputs
    assert 'id="count">6<' in proc.stdout


def test_the_page_says_when_by_what_and_how_it_was_made(tmp_path):
    out = tmp_path / "r.html"
    proc = subprocess.run(
        [sys.executable, "-m", "fpinspect", "report", str(SAMPLES / "regression"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    made = re.search(
        r'<p class="muted" id="made">Made (\S+ \S+) UTC by fpinspect (\S+) with <code>(.*?)</code>', text
    )
    assert made, text[:2000]
    assert made[2] == fpinspect.__version__
    assert html.unescape(made[3]) == f"fpinspect report {SAMPLES / 'regression'} --out {out}"
    assert abs(
        datetime.strptime(made[1], "%Y-%m-%d %H:%M") - datetime.now(timezone.utc).replace(tzinfo=None)
    ) < timedelta(minutes=10)
    thresholds = text.split("id='thresholds'>Thresholds</h2>")[1].split("</table>")[0]
    assert "<td>float16</td>" in thresholds and "<th>red_fail</th>" in thresholds


def test_a_saved_report_without_thresholds_says_so(tmp_path):
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps({"records": [], "summary": {}}))
    assert run("report", saved, "--out", tmp_path / "r.html").exit_code == 0
    assert "This report does not record its thresholds." in (tmp_path / "r.html").read_text()


#: Run in the page: every label of a chart lies inside its chart and touches no other label.
_LAYOUT_CHECK = """<script>
window.addEventListener('load', function () {
  var bad = [];
  document.querySelectorAll('svg').forEach(function (svg, k) {
    var box = svg.getBoundingClientRect(), texts = Array.from(svg.querySelectorAll('text'));
    var rects = texts.map(function (t) { return t.getBoundingClientRect(); });
    rects.forEach(function (r, i) {
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5)
        bad.push('chart ' + k + ': "' + texts[i].textContent + '" is cut off');
      for (var j = i + 1; j < rects.length; j++) {
        var s = rects[j];
        if (r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom)
          bad.push('chart ' + k + ': "' + texts[i].textContent + '" overlaps "' + texts[j].textContent + '"');
      }
    });
  });
  var out = document.createElement('pre'); out.id = 'layout'; out.textContent = 'BAD:' + bad.join(' | ') + ':END';
  document.body.appendChild(out);
});
</script>"""


@needs_chromium
def test_the_histograms_labels_and_captions_are_readable_in_chromium(page, tmp_path):
    """Bins named 16-31, 32-63, ... (the regression sample's outputs reach 1024 ULP) must not
    run together, and no caption may be cut off by its chart."""
    checked = tmp_path / "checked.html"
    checked.write_text(page.read_text().replace("</body>", _LAYOUT_CHECK + "</body>"))
    proc = _chromium("--dump-dom", "--window-size=1200,1600", url=checked.as_uri())
    found = re.search(r'<pre id="layout">BAD:(.*?):END</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    assert found[1] == "", found[1]
    assert "ULP error (counts on a log scale)" in proc.stdout
