"""The panels of the actions on a fused op, pinned as SVG snapshots at 160x48 and 80x24: the
culprit with its keys in the footer, its switches, and the question before its repro bundle.
A copy of the bundled capture is opened from its parent folder, so every path shown is short
and the same on every machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import app_for, settle

SAMPLE = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps" / "regression"
SIZES = {"wide": (160, 48), "small": (80, 24)}


@pytest.fixture
def run(tmp_path, monkeypatch) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "regression")
    monkeypatch.chdir(tmp_path)
    return Path("regression")


def _pressing(*keys: str):
    async def before(pilot):
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return before


@pytest.mark.parametrize("size", SIZES)
def test_culprit_with_its_action_keys(snap_compare, run, size):
    assert snap_compare(app_for(run), terminal_size=SIZES[size], run_before=_pressing("i"))


@pytest.mark.parametrize("size", SIZES)
def test_switches_panel(snap_compare, run, size):
    assert snap_compare(app_for(run), terminal_size=SIZES[size], run_before=_pressing("i", "f"))


@pytest.mark.parametrize("size", SIZES)
def test_repro_question(snap_compare, run, size):
    assert snap_compare(app_for(run), terminal_size=SIZES[size], run_before=_pressing("i", "R"))
