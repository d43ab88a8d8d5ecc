"""The results database: one SQLite file of recorded runs, their figures and baselines.

Where: ``--db PATH``, else ``$FPINSPECT_DB``, else ``$XDG_DATA_HOME/fpinspect/results.sqlite``
(``~/.local/share`` without it). The schema's version is ``PRAGMA user_version``; opening an
older file applies the missing steps of :data:`MIGRATIONS` in one transaction. The file is in
WAL mode and every write is one ``BEGIN IMMEDIATE`` transaction that waits for another
writer (up to :data:`BUSY_SECONDS`), so processes recording at once lose nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .figures import Figure, Figures, Rule

DB_ENV = "FPINSPECT_DB"
BUSY_SECONDS = 10.0

#: Step ``i`` takes a file from version ``i`` to ``i + 1``.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        recorded TEXT NOT NULL,
        kind TEXT NOT NULL,
        task TEXT NOT NULL,
        profile TEXT,
        settings TEXT NOT NULL,
        settings_hash TEXT NOT NULL,
        device TEXT,
        environment TEXT NOT NULL,
        artefacts TEXT
    );
    CREATE TABLE figures (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value REAL,
        direction TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    """,
    # Device classes, stated tolerances, per-row tables and baselines.
    """
    ALTER TABLE runs ADD COLUMN device_class TEXT NOT NULL DEFAULT '';
    UPDATE runs SET device_class =
        coalesce(device, '') || ' | ' || coalesce(json_extract(environment, '$.device_name'), '');
    ALTER TABLE figures ADD COLUMN rel_tolerance REAL NOT NULL DEFAULT 0;
    ALTER TABLE figures ADD COLUMN abs_tolerance REAL NOT NULL DEFAULT 0;
    CREATE TABLE row_tables (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        rows TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE baselines (
        name TEXT NOT NULL,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        tagged TEXT NOT NULL,
        PRIMARY KEY (name, run_id)
    );
    CREATE INDEX runs_by_task ON runs (task, id);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(RuntimeError):
    """The database cannot be used; ``str()`` is one sentence naming the file."""


def default_path() -> Path:
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env)
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "fpinspect" / "results.sqlite"


def settings_hash(settings: dict[str, Any]) -> str:
    """The first 16 hex digits of the SHA-256 of ``settings`` as sorted, compact JSON."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def device_class(device: str | None, environment: dict[str, Any]) -> str:
    """Runs are compared only within a device class: the backend and the device's name."""
    return f"{device or ''} | {environment.get('device_name') or ''}"


@dataclass(frozen=True)
class StoredRun:
    id: int
    recorded: str
    kind: str
    task: str
    profile: str | None
    settings: dict[str, Any]
    settings_hash: str
    device: str | None
    device_class: str
    environment: dict[str, Any]
    artefacts: str | None


@dataclass(frozen=True)
class StoredFigure:
    name: str
    value: float | None
    rule: Rule


_RUN_COLUMNS = (
    "id, recorded, kind, task, profile, settings, settings_hash, device, device_class, environment, artefacts"
)
#: The same, of the table aliased ``r`` in a join.
_R_COLUMNS = ", ".join(f"r.{c.strip()}" for c in _RUN_COLUMNS.split(","))


def _json_object(text: Any) -> dict[str, Any] | None:
    """A stored JSON object; None when the column holds anything else (a damaged row)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _value(value: Any) -> float | None:
    """A stored figure's value; a row damaged by hand holds text or a blob, read as no number."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class ResultsDB:
    """An open results database (a context manager; closes on exit)."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else default_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"the results database {self.path} cannot be opened: {exc}.") from None
        try:
            with self._errors():
                self.conn.execute("PRAGMA foreign_keys = ON")
                if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    self.conn.execute("PRAGMA journal_mode = WAL")
                self._migrate()
        except StoreError:
            self.conn.close()
            raise

    def _run(self, row: tuple) -> StoredRun:
        """A run's row; :class:`StoreError` naming the run when the row is damaged."""
        i, recorded, kind, task, profile, settings, shash, device, dclass, env, artefacts = row
        settings, env = _json_object(settings), _json_object(env)
        texts = (recorded, kind, task, shash, dclass)
        if settings is None or env is None or not all(isinstance(t, str) for t in texts):
            raise StoreError(
                f"the results database {self.path} has a damaged run {i}: its row holds a value of the "
                "wrong kind (settings and environment must be JSON objects)."
            )
        return StoredRun(i, recorded, kind, task, profile, settings, shash, device, dclass, env, artefacts)

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(self, *exc) -> None:
        self.conn.close()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                why = f"is locked by another process (waited {BUSY_SECONDS:g} s)"
            elif "not a database" in text or "malformed" in text:
                why = "is not an SQLite database or is damaged"
            else:
                why = f"cannot be used ({text})"
            raise StoreError(f"the results database {self.path} {why}.") from None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken before reading so that two writers queue."""
        with self._errors():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def _migrate(self) -> None:
        if self.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        with self._write() as c:
            version = c.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"the results database {self.path} has schema version {version}, newer than this "
                    f"fpinspect's {SCHEMA_VERSION}; upgrade fpinspect."
                )
            for step in MIGRATIONS[version:]:
                for statement in (s for s in step.split(";") if s.strip()):
                    c.execute(statement)
            c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def record(
        self,
        kind: str,
        result: dict[str, Any],
        *,
        task: str,
        settings: dict[str, Any],
        environment: dict[str, Any],
        profile: str | None = None,
        device: str | None = None,
        artefacts: str | None = None,
        compared_settings: dict[str, Any] | None = None,
        figures: Figures | list[Figure] | None = None,
    ) -> int:
        """Store one run and its figures; returns its id. ``figures``: the declaration to read
        them (and the per-row tables) from ``result`` — a task's ``Task.figures`` — or the
        figures themselves; a ``compare`` report's are :data:`.comparison.COMPARE_FIGURES`.
        ``compared_settings`` (default: ``settings``) is what its hash covers: runs are checked
        against baselines with the same hash."""
        if figures is None:
            raise ValueError(f"a {kind!r} run needs its figures: the declaration of its result type")
        declared = figures if isinstance(figures, Figures) else Figures()
        measured = declared.extract(result) if isinstance(figures, Figures) else figures
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._write() as c:
            run_id = c.execute(
                "INSERT INTO runs (recorded, kind, task, profile, settings, settings_hash, device, "
                "device_class, environment, artefacts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    now,
                    kind,
                    task,
                    profile,
                    json.dumps(settings, sort_keys=True),
                    settings_hash(settings if compared_settings is None else compared_settings),
                    device,
                    device_class(device, environment),
                    json.dumps(environment, sort_keys=True),
                    artefacts,
                ),
            ).lastrowid
            c.executemany(
                "INSERT OR REPLACE INTO figures (run_id, name, value, direction, rel_tolerance, abs_tolerance) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, f.name, f.value, f.rule.direction, f.rule.rel, f.rule.abs) for f in measured],
            )
            c.executemany(
                "INSERT INTO row_tables (run_id, name, rows) VALUES (?, ?, ?)",
                [(run_id, name, json.dumps(rows)) for name, rows in declared.tables(result).items()],
            )
        return run_id

    def record_result(
        self,
        result: dict[str, Any],
        artefacts: str | None,
        workload: dict[str, Any] | None = None,
        *,
        figures: Figures,
    ) -> int:
        """Store an experiment's ``result.json`` object (its folder: ``artefacts``) with the
        figures its task declares (``Task.figures``); ``workload``: the settings a baseline
        must share with it (default: all of them)."""
        return self.record(
            result["task"],
            result,
            figures=figures,
            task=result["task"],
            settings=result["settings"],
            environment=result["environment"],
            profile=result["profile"],
            device=result["device"],
            artefacts=artefacts,
            compared_settings=workload,
        )

    def tag(self, name: str, run_ids: list[int]) -> None:
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._write() as c:
            c.executemany(
                "INSERT OR IGNORE INTO baselines (name, run_id, tagged) VALUES (?, ?, ?)",
                [(name, i, now) for i in run_ids],
            )

    def run(self, run_id: int) -> StoredRun | None:
        with self._errors():
            row = self.conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._run(row) if row else None

    def runs(self, task: str | None = None, artefacts: str | None = None) -> list[StoredRun]:
        """Recorded runs, newest first, of ``task`` and with ``artefacts`` when given."""
        where, args = [], []
        if task is not None:
            where.append("task = ?")
            args.append(task)
        if artefacts is not None:
            where.append("artefacts = ?")
            args.append(artefacts)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        with self._errors():
            rows = self.conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs{clause} ORDER BY id DESC", args)
            return [self._run(r) for r in rows]

    def baseline(self, name: str) -> list[StoredRun]:
        """The runs tagged ``name``, oldest first."""
        with self._errors():
            rows = self.conn.execute(
                f"SELECT {_R_COLUMNS} FROM runs r "
                "JOIN baselines b ON b.run_id = r.id WHERE b.name = ? ORDER BY r.id",
                (name,),
            )
            return [self._run(r) for r in rows]

    def baseline_names(self, run_id: int | None = None) -> list[str]:
        """The baselines (holding ``run_id`` when given), the most recently tagged first."""
        with self._errors():
            if run_id is None:
                rows = self.conn.execute("SELECT name FROM baselines GROUP BY name ORDER BY max(rowid) DESC")
            else:
                rows = self.conn.execute(
                    "SELECT name FROM baselines WHERE run_id = ? ORDER BY name", (run_id,)
                )
            return [r[0] for r in rows]

    def figures(self, run_id: int) -> list[StoredFigure]:
        with self._errors():
            rows = self.conn.execute(
                "SELECT name, value, direction, rel_tolerance, abs_tolerance FROM figures "
                "WHERE run_id = ? ORDER BY rowid",
                (run_id,),
            )
            return [
                StoredFigure(str(n), _value(v), Rule(str(d), _value(rel) or 0.0, _value(ab) or 0.0))
                for n, v, d, rel, ab in rows
            ]

    def figure_history(self, task: str, name: str) -> list[tuple[StoredRun, float | None]]:
        """``name``'s value in every run of ``task`` that has it, oldest first."""
        with self._errors():
            rows = self.conn.execute(
                f"SELECT {_R_COLUMNS}, f.value FROM runs r "
                "JOIN figures f ON f.run_id = r.id WHERE r.task = ? AND f.name = ? ORDER BY r.id",
                (task, name),
            )
            return [(self._run(r[:-1]), _value(r[-1])) for r in rows]

    def row_table(self, run_id: int, name: str) -> list[dict[str, Any]]:
        with self._errors():
            row = self.conn.execute(
                "SELECT rows FROM row_tables WHERE run_id = ? AND name = ?", (run_id, name)
            ).fetchone()
        if not row:
            return []
        try:
            rows = json.loads(row[0])
        except (TypeError, ValueError, RecursionError):
            rows = None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise StoreError(
                f"the results database {self.path} has a damaged table {name!r} of run {run_id}."
            )
        return rows
