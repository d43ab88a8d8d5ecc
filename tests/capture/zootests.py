"""The zoo's tests, shared by its test files (each names a few architectures, so that the two
workers of ``make test`` share the compiling): a clean capture names no introduced op and the
ablation agrees; a planted ``scale`` fault is the only introduced op, named first, and the only
region the ablation confirms."""

from functools import cache

import pytest
from zoocases import ZooCase, planted_regions, zoo_capture

DTYPE = "bfloat16"  # the suite's; benchmarks/bench_zoo.py runs float16 too


@cache
def captured(model: str):
    """Each architecture traced and compiled once per test process."""
    return zoo_capture(model, DTYPE)


@pytest.mark.slow
def test_a_clean_capture_names_no_culprit(model, tmp_path, inductor_cache):
    cap = captured(model)
    row = ZooCase(cap, tmp_path / "clean").run()
    assert row.introduced == [], row
    assert row.confirmed == [] and row.disagreements == [], row


@pytest.mark.slow
def test_a_planted_fault_is_the_only_culprit_and_confirmed(model, tmp_path, inductor_cache):
    cap = captured(model)
    (planted,) = planted_regions(cap, "reaching")
    case = ZooCase(cap, tmp_path / "planted", planted)
    row = case.run()
    assert row.introduced == [case.planted_name], row
    assert case.report.summary().first_introduced.op == case.planted_name
    assert row.confirmed == [case.planted_name] and row.disagreements == [], row
