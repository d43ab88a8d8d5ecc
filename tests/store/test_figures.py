"""Every task's result is recorded with figures, by its declared mapping."""

from fpinspect.experiments.registry import all_tasks
from fpinspect.store import TASK_FIGURES, ResultsDB


def test_every_task_of_the_plan_declares_its_figures():
    assert {t.id for t in all_tasks()} <= set(TASK_FIGURES)


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
        runs = {k: db.record(k, r, task=k, settings={}, environment=env) for k, r in (("S", s), ("D", d))}
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
