"""What the History screen lists: the runs of the results database (:mod:`fpinspect.store`),
newest first, each with the baselines that hold it, a headline and its artefacts folder.

Read on a worker thread (a database another process writes may keep it waiting); no widget here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import msgspec

from ..dumps.engine.report_types import Summary
from ..store import CheckResult, ResultsDB, StoredRun, StoreError
from ..store.check import newest_check

#: How many regressed figures the detail line names before "and n more".
NAMED_FIGURES = 3


@dataclass(frozen=True)
class RecordedRun:
    run: StoredRun
    baselines: list[str]
    figures: int
    #: the run against the most recently tagged baseline that can judge it
    check: CheckResult | None
    #: ``compare``'s summary as it was recorded (None for task runs, and for a summary the
    #: report's types cannot read)
    summary: Summary | None
    #: whether the artefacts folder was there when the history was read
    folder_exists: bool

    @property
    def folder(self) -> Path | None:
        return Path(self.run.artefacts) if self.run.artefacts else None

    @property
    def recorded(self) -> str:
        """The recording time in the local time zone."""
        try:
            return datetime.fromisoformat(self.run.recorded).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            return self.run.recorded

    @property
    def headline(self) -> str:
        """A comparison's verdict counts and the first op that introduced an error; the run's check against the
        newest baseline that can judge it (with the first regressed figure); else how many
        figures the run has."""
        parts = []
        if self.summary is not None:
            verdicts = self.summary.verdicts
            parts.append(
                ", ".join(f"{n} {v}" for v, n in verdicts.items() if n and v != "none") or "no verdict"
            )
            introduced = self.summary.introduced
            if introduced:
                more = f" and {len(introduced) - 1} more" if len(introduced) > 1 else ""
                parts.append(f"introduced by {introduced[0]}{more}")
        if self.check is not None:
            regressed, name = self.check.regressed, self.check.baseline_name
            if regressed:
                parts.append(f"vs {name}: {len(regressed)} regressed, first {regressed[0].name}")
            else:
                parts.append(f"vs {name}: none of {len(self.check.figures)} regressed")
        return " · ".join(parts) or f"{self.figures} figure{'' if self.figures == 1 else 's'}"

    @property
    def detail(self) -> str:
        """The highlighted run in full: what it ran on, where its artefacts are, and what the
        comparison located or which figures regressed."""
        r, env = self.run, self.run.environment
        facts = ", ".join(f"{k} {env[k]}" for k in ("torch", "device_name", "fpinspect") if env.get(k))
        lines = [f"run {r.id} ({r.kind}) · settings {r.settings_hash} · {facts or 'no environment'}"]
        inputs = env.get("inputs") or {}
        if self.folder is None and inputs:
            lines.append(
                f"fusion on {inputs.get('af_open_graph')} {inputs.get('af_open_data')}; "
                f"fusion off {inputs.get('af_close_graph')} {inputs.get('af_close_data')}"
            )
        elif self.folder is None:
            lines.append("no artefacts folder")
        else:
            lines.append(f"artefacts {self.folder}" + ("" if self.folder_exists else " (gone)"))
        if self.summary is not None and self.summary.look_first:
            lines.append(self.summary.look_first)
        elif self.check is not None and self.check.regressed:
            names = [f.name for f in self.check.regressed]
            more = len(names) - NAMED_FIGURES
            lines.append(
                f"regressed vs {self.check.baseline_name}: {', '.join(names[:NAMED_FIGURES])}"
                + (f" and {more} more" if more > 0 else "")
            )
        return "\n".join(lines)


def read_recorded_runs(path: Path, stop: Callable[[], bool] = lambda: False) -> list[RecordedRun]:
    """Every run recorded in the database at ``path``, newest first (those read until ``stop()``
    says so); a :class:`StoreError` (one sentence) when there is no such file, or it cannot be
    read. Reading creates no database."""
    if not path.is_file():
        raise StoreError(f"there is no results database at {path} yet.")
    with ResultsDB(path) as db:
        out = []
        for run in db.runs():
            if stop():
                break
            summary = db.row_table(run.id, "summary") if run.kind == "compare" else []
            out.append(
                RecordedRun(
                    run,
                    db.baseline_names(run.id),
                    len(db.figures(run.id)),
                    newest_check(db, run),
                    _summary(summary[0]) if summary else None,
                    bool(run.artefacts) and Path(run.artefacts).is_dir(),
                )
            )
    return out


def _summary(row) -> Summary | None:
    """A recorded ``compare`` summary as its type; None where it is not one (a hand-made row)."""
    try:
        return msgspec.convert(row, Summary)
    except msgspec.ValidationError:
        return None
