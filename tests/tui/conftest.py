"""Fixtures for the inspector's tests: real-format dump runs and a steady text cursor."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import Input

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dumps"))

from network import build_network  # noqa: E402
from synthetic import write_synthetic  # noqa: E402


@pytest.fixture(autouse=True)
def steady_cursor(monkeypatch):
    """No blinking text cursor: screenshots must not depend on timing."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


@pytest.fixture(scope="session")
def regression(tmp_path_factory) -> Path:
    """The network with a scale regression planted in its second fused op (autofuse_2_Gelu_Mul)."""
    root = tmp_path_factory.mktemp("regression", numbered=False)
    build_network(root, inject="R2=scale")
    return root


@pytest.fixture(scope="session")
def clean(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("clean", numbered=False)
    build_network(root)
    return root


@pytest.fixture(scope="session")
def big(tmp_path_factory) -> Path:
    """10 000 fused ops, a handful with dumps."""
    return write_synthetic(tmp_path_factory.mktemp("synthetic", numbered=False), 10_000)
