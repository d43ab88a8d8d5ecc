"""`fpinspect report`: one self-contained HTML page per comparison, checked in a real browser."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

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
        (lambda p: (p / "d").mkdir() or p / "d", "is not a run folder"),
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
