"""Where the tests find the team's real GE graphs, and how they write text graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpinspect.dumps.formats.ge_text import format_text_graph

#: The ``ModelDef`` text of an atc-JSON model dict (``GraphBuilder.to_json()``, a ``Build.json``).
text_graph = format_text_graph


def real_ge(name: str) -> Path:
    """A file of the team's ``shared/data/real-ge/`` (beside the checkout, or above a worktree);
    the test is skipped where it is absent."""
    for folder in Path(__file__).resolve().parents[3:]:
        path = folder / "shared" / "data" / "real-ge" / name
        if path.exists():
            return path
    pytest.skip(f"{name} is not here (shared/data/real-ge/ beside the checkout holds the real GE graphs)")
