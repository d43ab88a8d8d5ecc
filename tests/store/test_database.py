"""The results database: migrations, concurrent writers, unusable files."""

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from fpinspect.experiments.registry import get_task
from fpinspect.store import SCHEMA_VERSION, ResultsDB, StoreError
from fpinspect.store.database import MIGRATIONS

B_RESULT = {
    "chains": [
        {
            "chain": "layernorm",
            "dtype": "float16",
            "distribution": "normal",
            "eager": {"p50_ulp": 0.5, "p99_ulp": 2.0, "max_ulp": 4.0, "p99_rel": 1e-3, "max_rel": 2e-3},
            "fused": {"p50_ulp": 0.25, "p99_ulp": 1.0, "max_ulp": "NaN", "p99_rel": 5e-4, "max_rel": 1e-3},
            "fused_no_worse": True,
            "per_input_max_ulp": {"eager": [4.0], "fused": [2.0]},
        }
    ],
    "verdict": {"rows_worse": 0},
}


def _record(db, result=B_RESULT, **kw):
    args = dict(
        task="B",
        settings={"seed": 1},
        environment={"device": "cpu", "device_name": "cpu0"},
        device="cpu",
        figures=get_task("B").figures,
    )
    return db.record("B", result, **{**args, **kw})


def test_a_run_is_stored_with_its_figures_and_rows(tmp_path):
    with ResultsDB(tmp_path / "r.sqlite") as db:
        run_id = _record(db, artefacts="/runs/1")
        figures = {f.name: f for f in db.figures(run_id)}
        assert figures["layernorm/float16/normal/fused.p99_ulp"].value == 1.0
        assert figures["layernorm/float16/normal/fused.max_ulp"].value is None  # NaN is no number
        assert figures["layernorm/float16/normal/fused_no_worse"].value == 1.0
        assert figures["verdict.rows_worse"].rule.direction == "lower"
        (row,) = db.row_table(run_id, "chains")
        assert "per_input_max_ulp" not in row and row["eager"]["max_ulp"] == 4.0
        assert db.runs(artefacts="/runs/1")[0].device_class == "cpu | cpu0"
        assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_version_1_file_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript(MIGRATIONS[0])
    old.execute(
        "INSERT INTO runs (recorded, kind, task, profile, settings, settings_hash, device, environment) "
        "VALUES ('2026-01-01', 'B', 'B', 'quick', '{}', 'h', 'cpu', ?)",
        (json.dumps({"device_name": "old cpu"}),),
    )
    old.execute("INSERT INTO figures VALUES (1, 'x/fused.max_ulp', 3.0, 'lower')")
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    with ResultsDB(path) as db:
        assert db.schema_version == SCHEMA_VERSION
        (run,) = db.runs()
        assert run.device_class == "cpu | old cpu"
        assert [(f.name, f.value) for f in db.figures(run.id)] == [("x/fused.max_ulp", 3.0)]
        db.tag("v1", [run.id])
        assert [r.id for r in db.baseline("v1")] == [run.id]


def test_a_file_that_is_no_database_is_one_sentence(tmp_path):
    path = tmp_path / "r.sqlite"
    path.write_bytes(b"this is not sqlite at all, " * 100)
    with pytest.raises(StoreError, match=r"r\.sqlite is not an SQLite database or is damaged\.$"):
        ResultsDB(path)


def test_a_locked_file_is_one_sentence(tmp_path, monkeypatch):
    path = tmp_path / "r.sqlite"
    ResultsDB(path).conn.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr("fpinspect.store.database.BUSY_SECONDS", 0.2)
    with pytest.raises(StoreError, match="is locked by another process"):
        with ResultsDB(path) as db:
            _record(db)
    holder.execute("ROLLBACK")


WRITER = textwrap.dedent(
    """
    import sys
    from fpinspect.store import ResultsDB
    with ResultsDB(sys.argv[1]) as db:
        for i in range(int(sys.argv[2])):
            db.record("B", {}, task="B", settings={"i": i}, environment={}, device=sys.argv[3], figures=[])
    """
)


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "r.sqlite"
    ResultsDB(path).conn.close()
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), "100", name]) for name in ("one", "two")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    with ResultsDB(path) as db:
        runs = db.runs()
    assert len(runs) == 200
    assert {r.device: sum(x.device == r.device for x in runs) for r in runs} == {"one": 100, "two": 100}
