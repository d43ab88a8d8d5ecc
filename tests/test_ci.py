"""The CI entry point installs the Chromium the HTML report tests need (or stops with one sentence),
and `make test` ends by saying how many tests skipped and why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bin(folder: Path, tools: dict[str, str]) -> str:
    """A PATH of ``folder`` alone: the shell tools ``.ci/run`` needs, and ``tools`` (name -> a
    shell script's body) standing in for apt-get, make and the like."""
    folder.mkdir()
    for tool in ("bash", "dirname", "id"):
        (folder / tool).symlink_to(shutil.which(tool))
    for name, body in tools.items():
        (folder / name).write_text(f"#!{shutil.which('sh')}\n{body}\n")
        (folder / name).chmod(0o755)
    return str(folder)


def _ci(path: str) -> subprocess.CompletedProcess:
    env = {"PATH": path, "HOME": os.environ.get("HOME", "/")}
    return subprocess.run([str(ROOT / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60)


def test_ci_installs_chromium_when_missing_and_stops_in_one_sentence_when_it_cannot(tmp_path):
    log = tmp_path / "log"
    installs = f'echo "apt-get $*" >> {log}; case "$*" in *install*) printf "#!/bin/sh\\n" > {tmp_path}/bin/chromium; {shutil.which("chmod")} +x {tmp_path}/bin/chromium;; esac'
    r = _ci(_bin(tmp_path / "bin", {"apt-get": installs, "make": f'echo "make $*" >> {log}'}))
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines() == [
        "apt-get update -qq",
        "apt-get install -y -qq chromium",
        "make test",
    ]
    r = _ci(_bin(tmp_path / "failing", {"apt-get": "exit 100", "make": f"echo make >> {tmp_path}/made"}))
    assert r.returncode == 1 and not (tmp_path / "made").exists()
    assert r.stderr == (
        "ci: chromium is missing and 'apt-get install chromium' failed: install it, or the HTML report "
        "tests are skipped.\n"
    )


def test_the_skipped_tests_are_counted_with_their_reasons(tmp_path):
    (tmp_path / "test_some.py").write_text(
        "import pytest\n"
        "needs = pytest.mark.skipif(True, reason='headless Chromium is not installed')\n"
        "@needs\ndef test_a(): pass\n"
        "@needs\ndef test_b(): pass\n"
        "def test_c(): pytest.skip('no GPU')\n"
        "def test_d(): pass\n"
    )
    xml = tmp_path / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path), f"--junitxml={xml}"],
        capture_output=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    makefile = (ROOT / "Makefile").read_text()
    assert ".ci/skipped.py $(REPORTS)/sole_thread.xml $(REPORTS)/rest.xml" in makefile
    r = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "skipped.py"), str(xml)], capture_output=True, text=True
    )
    assert r.stdout.splitlines() == [
        "make test: 3 tests skipped:",
        "  2 × headless Chromium is not installed  [test_some]",
        "  1 × no GPU  [test_some]",
    ]


def test_make_says_what_it_does_before_each_quiet_step():
    """`make run` on a fresh clone installs for minutes with pip quiet: a line first says what."""
    if shutil.which("make") is None:
        pytest.skip("needs make")
    r = subprocess.run(["make", "-n", "-B", "run"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    lines = r.stdout.splitlines()
    for step in (
        "pip install --quiet --upgrade pip",
        "pip install --quiet -c constraints.txt",
        "fpinspect warm",
        "fpinspect open",
    ):
        (at,) = [i for i, line in enumerate(lines) if step in line and not line.startswith("echo")]
        assert lines[at - 1].startswith('echo "make: '), lines[at - 1]
