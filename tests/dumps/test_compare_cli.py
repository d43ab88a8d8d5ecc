"""`fpinspect compare` and `fusion-precision-analyzer` mode 1, as users run them."""

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from network import build_network, fused_name

from fpinspect.cli import main
from fpinspect.legacy import main as legacy_main


def flags(paths):
    out = []
    for key in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data"):
        out += ["--" + key.replace("_", "-"), str(paths[key])]
    return out


@pytest.fixture(scope="module")
def injected(tmp_path_factory):
    return build_network(tmp_path_factory.mktemp("net"), inject="R2=scale")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_json_report_contract(injected):
    r = run("compare", *flags(injected), "--format", "json", "--compare-input")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    rec = out["records"][0]
    for key in (
        "kind",
        "fused_op",
        "fused_index",
        "origin_op",
        "origin_index",
        "status",
        "cosine",
        "max_abs",
        "max_rel",
        "metrics",
        "verdict",
        "fused_file",
        "origin_file",
    ):
        assert key in rec, key
    assert out["summary"]["introduced"] == [fused_name("R2")]
    assert out["summary"]["first_introduced"]["op"] == fused_name("R2")
    assert {r["kind"] for r in out["records"]} == {"output", "input"}
    assert out["records"][0]["metrics"]["ulp"]["kind"] == "diff"


def test_table_names_the_op_to_look_at_first(injected):
    r = run("compare", *flags(injected))
    assert r.exit_code == 0
    assert "introduced" in r.output and "inherited" in r.output
    assert f"Look first at {fused_name('R2')}" in r.output.replace("\n", " ")
    assert max(len(line) for line in r.output.splitlines()) <= 120


def test_csv_and_output_file(injected, tmp_path):
    target = tmp_path / "report.csv"
    r = run("compare", *flags(injected), "--format", "csv", "--output", target)
    assert r.exit_code == 0 and r.output == ""
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert len(rows) == 4 and rows[1]["role"] == "introduced" and rows[1]["verdict"] == "fail"


def test_fail_on_gates_the_exit_status(injected, tmp_path):
    assert run("compare", *flags(injected), "--fail-on", "fail").exit_code == 1
    clean = build_network(tmp_path)
    assert run("compare", *flags(clean), "--fail-on", "fail").exit_code == 0


def test_bad_inputs_exit_2_with_one_sentence(injected, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"graph": "nope"}')
    cases = [
        {**injected, "af_open_graph": tmp_path / "missing.json"},
        {**injected, "af_close_graph": bad},
        {**injected, "af_open_data": tmp_path / "nodata"},
    ]
    for paths in cases:
        proc = subprocess.run(
            [sys.executable, "-m", "fpinspect", "compare", *flags(paths)], capture_output=True, text=True
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    r = run("compare", *flags(injected), "--threshold", "bogus=1")
    assert r.exit_code == 2 and "unknown threshold" in r.output


def test_threshold_flag_changes_verdicts(injected):
    out = json.loads(
        run(
            "compare",
            *flags(injected),
            "--format",
            "json",
            "-t",
            "red_fail=100",
            "-t",
            "red_warn=99",
            "-t",
            "ulp2_share_fail=1",
            "-t",
            "ulp2_share_warn=1",
        ).output
    )
    assert out["summary"]["verdicts"]["fail"] == 0


def test_jobs_give_the_same_report(injected):
    one = json.loads(run("compare", *flags(injected), "--format", "json").output)
    two = json.loads(run("compare", *flags(injected), "--format", "json", "--jobs", "2").output)
    assert one == two


def test_legacy_mode1_prints_the_reference_table(injected, capsys):
    assert legacy_main(flags(injected) + ["--compare-input"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"解析开启融合 dump 图: {injected['af_open_graph']}"
    assert lines[2:4] == ["找到 4 个融合算子输出映射, 5 个融合算子输入映射", ""]
    assert lines[4].startswith("类型 | 融合算子名")
    rows = [[c.strip() for c in ln.split(" | ")] for ln in lines[6:]]
    assert [r[0] for r in rows] == ["输出"] * 4 + ["输入"] * 5
    assert rows[4][-1] == "SKIPPED_CONST_DATA" and rows[4][5] == "-"
    first = rows[0]
    a = np.load(next(injected["af_open_data"].glob(f"*{fused_name('R1')}*output.0.npy"))).astype(np.float64)
    b = np.load(next(injected["af_close_data"].glob("Adds.Add_2.*output.0.npy"))).astype(np.float64)
    cos = np.dot(a.ravel(), b.ravel()) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-8)
    assert first[5] == f"{cos:.10f}" and first[6] == f"{np.abs(a - b).max():.6e}"


def test_legacy_mode1_bad_input(tmp_path, capsys):
    args = [
        "--af-open-graph",
        str(tmp_path / "x.json"),
        "--af-close-graph",
        str(tmp_path / "y.json"),
        "--af-open-data",
        str(tmp_path),
        "--af-close-data",
        str(tmp_path),
    ]
    assert legacy_main(args) == 2
    assert "x.json" in capsys.readouterr().err
