"""Every task's result is recorded with figures, by the declaration beside its result type;
a declaration that names a field its result lacks is caught."""

import json
from pathlib import Path

from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.experiments.registry import all_tasks, get_task
from fpinspect.store import ResultsDB
from fpinspect.store.comparison import COMPARE_FIGURES

ROOT = Path(__file__).resolve().parents[2]


def test_every_task_of_the_plan_declares_its_figures():
    assert all(t.figures.parts for t in all_tasks())


def test_a_self_check_result_records_its_checks_and_bit_equal_tables_record_each_row(tmp_path):
    s = {
        "all_passed": True,
        "error_stats": {"float16": {"agrees": True, "rounded_max_ulp": 0.5}},
        "device_rounding": {"bfloat16": {"values": 10, "differing": 0}},
    }
    d = {
        "table": [
            {"chain": "slice_concat", "dtype": "float16", "shape": [4, 6], "bit_equal": False, "max_ulp": 2}
        ],
        "all_pure_movement_bit_equal": False,
    }
    with ResultsDB(tmp_path / "r.sqlite") as db:
        env = {"device": "cpu"}
        runs = {
            k: db.record(k, r, task=k, settings={}, environment=env, figures=get_task(k).figures)
            for k, r in (("S", s), ("D", d))
        }
        figures = {k: {f.name: (f.value, f.rule.direction) for f in db.figures(i)} for k, i in runs.items()}
    assert figures["S"] == {
        "all_passed": (1.0, "exact"),
        "error_stats.float16.agrees": (1.0, "exact"),
        "error_stats.float16.rounded_max_ulp": (0.5, "lower"),
        "device_rounding.bfloat16.differing": (0.0, "lower"),
    }
    assert figures["D"] == {
        "slice_concat/float16/4x6/bit_equal": (0.0, "exact"),
        "slice_concat/float16/4x6/max_ulp": (2.0, "lower"),
        "all_pure_movement_bit_equal": (0.0, "exact"),
    }


def _b_row(**fused):
    stats = {"p50_ulp": 0.5, "p99_ulp": 2.0, "max_ulp": 4.0, "p99_rel": 1e-3, "max_rel": 2e-3}
    return {
        "chain": "gelu",
        "dtype": "float16",
        "distribution": "normal",
        "eager": stats,
        "fused": {**stats, **fused},
        "fused_no_worse": True,
        "per_input_max_ulp": {"eager": [4.0], "fused": [4.0]},
    }


def test_a_renamed_field_is_named_and_a_null_is_not():
    b = get_task("B").figures
    assert b.unmatched({"chains": [_b_row()], "verdict": {"rows_worse": 0}}) == []
    assert b.unmatched({"chains": [_b_row(max_ulp=None)], "verdict": {"rows_worse": None}}) == []
    renamed = _b_row()
    renamed["fused"]["p99_ulp_error"] = renamed["fused"].pop("p99_ulp")
    renamed["per_input_max"] = renamed.pop("per_input_max_ulp")
    assert b.unmatched({"chains": [renamed], "verdict": {"worse_rows": 0}}) == [
        "chains[].per_input_max_ulp",
        "chains[].fused.p99_ulp",
        "verdict.rows_worse",
    ]
    # a path that ends at an object, not at a number, records nothing either
    assert b.unmatched({"chains": [_b_row(p99_ulp={"value": 2.0})], "verdict": {"rows_worse": 0}}) == [
        "chains[].fused.p99_ulp"
    ]
    assert b.unmatched({"verdict": {"rows_worse": 0}}) == ["chains[]"]


def test_every_figure_of_a_comparison_is_a_field_of_compares_json():
    out = CliRunner().invoke(
        main, ["compare", str(ROOT / "fpinspect" / "sample_dumps" / "regression"), "--format", "json"]
    )
    report = json.loads(out.stdout)
    assert report["records"] and COMPARE_FIGURES.unmatched(report) == []
