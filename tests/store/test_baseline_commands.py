"""``fpinspect baseline`` and the recording of ``run`` and ``compare``, as a user calls them."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.experiments.registry import get_task
from fpinspect.store import ResultsDB

ROOT = Path(__file__).resolve().parents[2]
B_SMALL = [
    "--device", "cpu",
    "--set", "chains=layernorm",
    "--set", "dtypes=float16",
    "--set", "distributions=normal",
    "--set", "inputs=2",
    "--set", "rows=4",
    "--set", "hidden=64",
]  # fmt: skip


def _cli(*args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_a_worse_fused_path_fails_the_check_and_the_same_settings_pass(tmp_path):
    """The issue's check: a quick B run tagged, then the fused path rounded through bfloat16."""
    db = tmp_path / "r.sqlite"
    assert _cli("run", "B", *B_SMALL, "--db", db, "--out", tmp_path / "base").exit_code == 0
    assert _cli("baseline", "tag", "v1", tmp_path / "base", "--db", db).exit_code == 0

    worse = _cli(
        "run", "B", *B_SMALL, "--set", "fused_rounding=bfloat16", "--db", db, "--out", tmp_path / "worse"
    )
    assert worse.exit_code == 0
    check = _cli("baseline", "check", tmp_path / "worse", "--against", "v1", "--db", db)
    assert check.exit_code == 1
    for figure in ("fused.p99_ulp", "fused.max_ulp", "fused_no_worse"):
        assert f"| layernorm/float16/normal/{figure} |" in check.output
    assert '| setting fused_rounding | "" | "bfloat16" |' in check.output
    assert "| torch |" in check.output

    assert _cli("run", "B", *B_SMALL, "--db", db, "--out", tmp_path / "same").exit_code == 0
    same = _cli("baseline", "check", "--against", "v1", "--db", db, "--format", "json")
    assert same.exit_code == 0
    report = json.loads(same.stdout)
    assert report["regressed"] == [] and report["run"]["artefacts"] == str((tmp_path / "same").resolve())


@pytest.mark.needs("torch")
def test_an_unusable_database_is_one_sentence_and_the_artefacts_are_still_written(tmp_path):
    db = tmp_path / "bad.sqlite"
    db.write_bytes(b"not a database " * 100)
    out = _cli("run", "S", "--device", "cpu", "--db", db, "--out", tmp_path / "s")
    assert out.exit_code == 2
    assert out.stderr.strip().splitlines()[-1] == (
        f"fpinspect: the results database {db} is not an SQLite database or is damaged."
    )
    assert (tmp_path / "s" / "result.json").is_file()


def test_compare_records_its_figures_when_asked(tmp_path):
    db = tmp_path / "r.sqlite"
    d = ROOT / "fpinspect" / "sample_dumps" / "regression"
    args = [
        "compare",
        "--af-open-graph", d / "dumpgraph_af_open" / "Build.json",
        "--af-close-graph", d / "dumpgraph_af_close" / "Build.json",
        "--af-open-data", d / "datadump_af_open",
        "--af-close-data", d / "datadump_af_close",
        "--format", "json",
        "--db", db,
    ]  # fmt: skip
    assert _cli(*args).exit_code == 0
    assert not db.exists()  # compare records only with --record
    recorded = _cli(*args, "--record")
    assert recorded.exit_code == 0
    with ResultsDB(db) as store:
        (run,) = store.runs(task="compare")
        names = {f.name: f.value for f in store.figures(run.id)}
        summary = store.row_table(run.id, "summary")
    assert names["summary.verdicts.fail"] >= 1
    assert summary == [json.loads(recorded.stdout)["summary"]]  # kept whole: verdicts, localisation, sources
    assert any(n.startswith("autofuse_2_Add_LayerNorm") and n.endswith("/cosine") for n in names)
    # the relative L2 error that decides the verdicts, and the ULP figures
    op = "autofuse_2_Add_LayerNorm/output/0/metrics"
    assert round(names[f"{op}.red_eps"], 2) == 2.33
    assert (names[f"{op}.ulp.p50"], names[f"{op}.ulp.p99"], names[f"{op}.ulp.max"]) == (2, 16, 1024)


def test_a_compare_baseline_check_names_its_runs_and_device_class_and_renders(tmp_path):
    db = tmp_path / "r.sqlite"
    d = ROOT / "fpinspect" / "sample_dumps" / "regression"
    for _ in range(2):
        assert _cli("compare", d, "--format", "json", "--record", "--db", db).exit_code == 0
    assert _cli("baseline", "tag", "v1", "1", "--db", db).exit_code == 0
    raw = _cli("baseline", "check", "2", "--against", "v1", "--db", db, "--format", "markdown")
    assert raw.exit_code == 0, raw.output
    assert "device class dumps; baseline run #1.\n" in raw.stdout
    assert raw.stdout.startswith("# Run 2 against baseline v1\n")
    drawn = _cli("baseline", "check", "2", "--against", "v1", "--db", db, "--format", "text")
    assert drawn.exit_code == 0
    assert "Run 2 against baseline v1" in drawn.stdout and "# Run" not in drawn.stdout
    assert "|---|" not in drawn.stdout and "**" not in drawn.stdout


HISTORY = ("baseline", "history", "B", "--figure", "gelu/float16/normal/fused.p99_ulp")


def _history_db(path):
    figures = get_task("B").figures
    with ResultsDB(path) as store:
        for torch, p99 in (("2.4", 1.0), ("2.5", 1.0), ("2.6", 3.0)):
            result = {
                "chains": [
                    {"chain": "gelu", "dtype": "float16", "distribution": "normal", "fused": {"p99_ulp": p99}}
                ]
            }
            env = {"device": "cpu", "device_name": "cpu0", "torch": torch}
            store.record("B", result, task="B", settings={}, environment=env, device="cpu", figures=figures)
    return path


@pytest.mark.needs("matplotlib")
def test_history_shows_a_table_bars_and_a_png(tmp_path):
    db = _history_db(tmp_path / "r.sqlite")
    out = _cli(*HISTORY, "--db", db, "--png", tmp_path / "h.png")
    assert out.exit_code == 0, out.output
    plot = [ln.split() for ln in out.stdout.splitlines() if ln.startswith("run ")]
    assert plot == [["run", "1", "1", "█"], ["run", "2", "1", "█"], ["run", "3", "3", "█" * 40]]
    assert "2.6" in out.stdout
    assert (tmp_path / "h.png").read_bytes()[:4] == b"\x89PNG"


def test_history_without_matplotlib_says_so(tmp_path, monkeypatch):
    db = _history_db(tmp_path / "r.sqlite")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = _cli(*HISTORY, "--db", db, "--png", tmp_path / "h.png")
    assert out.exit_code == 0
    assert "matplotlib is not installed" in out.stderr and not (tmp_path / "h.png").exists()


@pytest.mark.parametrize(
    "args, sentence",
    [
        (
            ["history", "B", "--figure", "nope"],
            "no run of task B has a figure 'nope'; its newest run has: gelu/",
        ),
        (["history", "Z", "--figure", "x"], "holds no run of task Z."),
        (["check", "--against", "v9"], "there is no baseline 'v9'"),
        (["tag", "v1", "99"], "holds no run 99."),
        (["tag", "v1", "/no/such/folder"], "no run recorded in"),
        (["check", "99999999999999999999", "--against", "v1"], "holds no run 99999999999999999999."),
        (["tag", "x", "²"], "no run recorded in"),
        (["history", "B", "--figure", "gelu", "--png", "f.xyz"], "--png f.xyz does not end in .png"),
    ],
)
def test_bad_usage_is_one_sentence(tmp_path, args, sentence):
    db = _history_db(tmp_path / "r.sqlite")
    out = _cli("baseline", *args, "--db", db)
    assert out.exit_code == 2
    assert sentence in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_history_lists_the_figures_and_takes_a_unique_start_of_a_name(tmp_path):
    db = _history_db(tmp_path / "r.sqlite")
    out = _cli("baseline", "history", "B", "--db", db)
    assert out.exit_code == 0
    assert out.stdout.splitlines() == [
        "The figures of task B (newest run 3), for --figure:",
        "  gelu/float16/normal/fused.p99_ulp",
    ]
    out = _cli("baseline", "history", "B", "--figure", "gelu/float16", "--db", db)
    assert out.exit_code == 0, out.output
    assert [ln.split()[:3] for ln in out.stdout.splitlines() if ln.startswith("run ")][-1] == [
        "run",
        "3",
        "3",
    ]


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE runs SET settings = '{' WHERE id = 2",
        "UPDATE runs SET environment = '[1]' WHERE id = 2",
        "UPDATE figures SET value = 'abc' WHERE run_id = 2",
        "UPDATE row_tables SET rows = 'x' WHERE run_id = 2",
    ],
)
@pytest.mark.parametrize(
    "args",
    [
        ["check", "--against", "v1"],
        ["history", "compare", "--figure", "summary.verdicts.fail"],
        ["tag", "v2", "2"],
    ],
)
def test_damaged_database_rows_are_one_sentence(tmp_path, damage, args):
    import sqlite3

    db = tmp_path / "r.sqlite"
    d = ROOT / "fpinspect" / "sample_dumps" / "regression"
    for _ in range(2):
        assert _cli("compare", d, "--format", "json", "--record", "--db", db).exit_code == 0
    assert _cli("baseline", "tag", "v1", "1", "--db", db).exit_code == 0
    with sqlite3.connect(db) as conn:
        conn.execute(damage)
    out = CliRunner().invoke(main, ["baseline", *args, "--db", str(db)])
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert "Traceback" not in out.output
    if out.exit_code == 2:
        assert (
            out.stderr
            == f"fpinspect: the results database {db} has a damaged run 2: its row holds a value of the "
            "wrong kind (settings and environment must be JSON objects).\n"
        )


def test_an_unknown_fused_rounding_is_refused_before_anything_runs(tmp_path):
    out = _cli("run", "B", "--set", "fused_rounding=float64", "--db", tmp_path / "r.sqlite")
    assert out.exit_code == 2
    assert "fused_rounding must be empty or one of float16, bfloat16, float32" in out.stderr
    assert not (tmp_path / "r.sqlite").exists()


def test_compare_record_refuses_a_dump_tree(tmp_path):
    d = ROOT / "fpinspect" / "sample_dumps" / "regression"
    for side, src in (("on", "datadump_af_open"), ("off", "datadump_af_close")):
        for rank in (0, 1):
            shutil.copytree(
                d / src, tmp_path / side / "20261203101010" / str(rank) / "ge_default_1" / "1" / "0"
            )
    out = _cli(
        "compare",
        "--af-open-graph", d / "dumpgraph_af_open" / "Build.json",
        "--af-close-graph", d / "dumpgraph_af_close" / "Build.json",
        "--af-open-data", tmp_path / "on",
        "--af-close-data", tmp_path / "off",
        "--record", "--db", tmp_path / "r.sqlite",
    )  # fmt: skip
    assert out.exit_code == 2
    assert out.stderr == "fpinspect: --record stores the comparison of one graph pair, not of a dump tree.\n"
