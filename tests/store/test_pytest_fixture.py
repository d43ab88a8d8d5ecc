"""The ``precision_baseline`` fixture, in a pytest run of a user's test file."""

import os
import subprocess
import sys

TEST_FILE = """
import os

def test_kernel(precision_baseline):
    precision_baseline({"p99_ulp": float(os.environ["P99"]), "bit_equal": 1.0}, against="rel-1")
"""


def _pytest(tmp_path, p99, *options):
    (tmp_path / "test_user.py").write_text(TEST_FILE)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py", "-rs",
         "--precision-db", str(tmp_path / "r.sqlite"), *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "P99": str(p99)},
    )  # fmt: skip


def test_a_test_checks_its_own_figures_against_a_named_baseline(tmp_path):
    first = _pytest(tmp_path, 1.0)
    assert first.returncode == 0 and "there is no baseline 'rel-1'" in first.stdout  # skipped
    assert _pytest(tmp_path, 1.0, "--precision-tag", "rel-1").returncode == 0
    assert _pytest(tmp_path, 1.2).returncode == 0  # within 5 % + 0.5 ULP
    worse = _pytest(tmp_path, 3.0)
    assert worse.returncode == 1
    assert "1 figure(s) regressed against baseline 'rel-1':" in worse.stdout
    assert "p99_ulp: 1.0 -> 3.0" in worse.stdout
