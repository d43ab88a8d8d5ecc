"""The code is formatted by ``ruff format`` and passes ``ruff check`` (what ``make lint`` runs)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
@pytest.mark.parametrize("args", [["format", "--check"], ["check"]], ids=["format", "check"])
def test_ruff(args):
    out = subprocess.run([RUFF, *args, "--quiet", "."], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
