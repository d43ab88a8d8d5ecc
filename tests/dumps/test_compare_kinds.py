"""compare over every fusion kind: --fused-types narrows, --compare-unfused follows a divergence
through the ops fusion left alone; the real GE graphs compare without a traceback."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from gefixtures import fusion_kinds_run, write_dump
from protofixtures import real_ge

from fpinspect.cli import main
from fpinspect.dumps.engine.compare import DumpComparison


def _run(tmp_path, *, shift_matmul=False):
    paths = fusion_kinds_run(tmp_path, shift_matmul=shift_matmul)
    return [str(paths[k]) for k in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data")]


def test_fused_types_narrow_and_are_reported(tmp_path):
    args = _run(tmp_path)
    everything = DumpComparison(*args).run()
    assert [r.plan.fused_op for r in everything.records] == ["conv1", "autofuse_0"]
    s = everything.summary()
    assert s.fused_types == {"AscBackend": 1, "Conv2D": 1} and s.unfused_ops == 0
    narrowed = DumpComparison(*args, fused_types=["Conv2D"]).run()
    assert [r.plan.fused_op for r in narrowed.records] == ["conv1"]
    assert narrowed.summary().compared_types == {"Conv2D": 1}
    assert narrowed.records[0].status == ["OK"] and narrowed.records[0].plan.origin_op == "bn1"


def test_compare_unfused_shows_where_a_divergence_starts(tmp_path):
    args = _run(tmp_path, shift_matmul=True)
    fused_only = DumpComparison(*args).run()
    # without the MatMul in view the fused op inherits an error nobody introduced
    assert fused_only.summary().introduced == [] and fused_only.summary().inherited == ["autofuse_0"]
    report = DumpComparison(*args, compare_unfused=True).run(compare_input=True)
    rows = [(r.plan.fused_op, r.plan.kind, r.verdict) for r in report.records]
    assert ("mm", "output", "fail") in rows and ("autofuse_0", "input", "fail") in rows
    s = report.summary()
    assert s.introduced == ["mm"] and s.inherited == ["autofuse_0"] and s.unfused_ops == 1


def test_cli_flags(tmp_path):
    on_graph, off_graph, on, off = _run(tmp_path, shift_matmul=True)
    base = [
        "compare",
        "--af-open-graph",
        on_graph,
        "--af-close-graph",
        off_graph,
        "--af-open-data",
        on,
        "--af-close-data",
        off,
        "--format",
        "json",
    ]
    result = CliRunner().invoke(main, [*base, "--compare-unfused", "--fused-types", "AscBackend,Nope"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [r["fused_op"] for r in out["records"]] == ["mm", "autofuse_0"]
    assert "--fused-types Nope: no fused op of that type" in result.stderr


@pytest.mark.parametrize(
    "name", ["ge_proto_00046_afterUBMatch.txt", "ge_proto_origin.txt", "atc_om_model.json"]
)
def test_real_graphs_compare_against_themselves_without_their_dumps(tmp_path, name):
    graph = str(real_ge(name))
    write_dump(tmp_path / "dumps", "Add", "unrelated", "output", 0, np.zeros(3, np.float16))
    result = CliRunner().invoke(
        main,
        [
            "compare",
            "--af-open-graph",
            graph,
            "--af-close-graph",
            graph,
            "--af-open-data",
            str(tmp_path / "dumps"),
            "--af-close-data",
            str(tmp_path / "dumps"),
            "--compare-unfused",
            "--compare-input",
            "--format",
            "json",
        ],
    )
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    out = json.loads(result.stdout)
    assert out["records"] and "FILE_NOT_FOUND" in out["summary"]["statuses"]
    assert all(r["verdict"] is None for r in out["records"])
