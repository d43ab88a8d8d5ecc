"""Where a run set of task E keeps its files (numpy and torch free, so the command line
can find a stopped run without starting torch).

Below ``<run_dir>/checkpoints``: ``run.json`` (the task, the device and the settings the
set was started with), ``initial.pt`` (the initial weights every run loads), and per run
``<run>/latest.pt`` (the newest checkpoint, every ``checkpoint_every`` steps) and
``<run>/done.json`` (its samples and timings, once finished). A stopped set is continued
by the same settings with ``resume`` on: finished runs are taken from ``done.json``, a
started one continues from ``latest.pt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Settings that may differ between a stopped set and its resumption (where and how it
#: runs, not what it computes).
RESUMABLE_CHANGES = ("run_dir", "resume", "nproc", "collective_timeout_s")


def same_computation(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The settings (as dicts) in which ``a`` and ``b`` differ, :data:`RESUMABLE_CHANGES`
    left out; empty when a set started with ``b`` may be resumed with ``a``."""
    keys = (set(a) | set(b)) - set(RESUMABLE_CHANGES)
    return sorted(k for k in keys if a.get(k) != b.get(k))


class Checkpoints:
    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.root = run_dir / "checkpoints"

    @property
    def run_file(self) -> Path:
        return self.root / "run.json"

    @property
    def initial(self) -> Path:
        return self.root / "initial.pt"

    def latest(self, run: str) -> Path:
        return self.root / run / "latest.pt"

    def done(self, run: str) -> Path:
        return self.root / run / "done.json"


def read_run(run_dir: Path) -> dict[str, Any] | None:
    """The ``run.json`` of the set in ``run_dir`` (keys ``task``, ``device``, ``settings``),
    or None when there is none or it cannot be read."""
    from ..runs import ResultError, read_json

    try:
        saved = read_json(Checkpoints(run_dir).run_file)
    except ResultError:
        return None
    return saved if isinstance(saved, dict) and isinstance(saved.get("settings"), dict) else None
