"""A run against a baseline, on synthetic stored runs: what regresses and what does not."""

import pytest

from fpinspect.experiments.registry import get_task
from fpinspect.store import REGRESSED, ResultsDB, Rule, StoreError, check_run, judge
from fpinspect.store.check import IMPROVED, UNCHANGED, WITHIN_NOISE


def _b(fused_p99=1.0, fused_max=2.0, no_worse=True):
    row = {"chain": "gelu", "dtype": "float16", "distribution": "normal"}
    return {
        "chains": [
            {
                **row,
                "eager": {"p50_ulp": 0.5, "p99_ulp": 2.0, "max_ulp": 4.0, "p99_rel": 1e-3, "max_rel": 2e-3},
                "fused": {
                    "p50_ulp": 0.25,
                    "p99_ulp": fused_p99,
                    "max_ulp": fused_max,
                    "p99_rel": 5e-4,
                    "max_rel": 1e-3,
                },
                "fused_no_worse": no_worse,
            }
        ],
        "verdict": {"rows_worse": 0 if no_worse else 1},
    }


@pytest.fixture
def db(tmp_path):
    with ResultsDB(tmp_path / "r.sqlite") as db:
        yield db


def _record(db, result, settings=None, device_name="cpu0", torch="2.5"):
    env = {"device": "cpu", "device_name": device_name, "torch": torch}
    settings = settings or {"seed": 1}
    figures = get_task("B").figures
    return db.record("B", result, task="B", settings=settings, environment=env, device="cpu", figures=figures)


def test_a_worse_fused_path_regresses_and_names_the_figures(db):
    db.tag("v1", [_record(db, _b())])
    run = db.run(_record(db, _b(fused_p99=3.0, fused_max=8.0, no_worse=False), torch="2.6"))
    result = check_run(db, run, "v1")
    assert {f.name for f in result.regressed} == {
        "gelu/float16/normal/fused.p99_ulp",
        "gelu/float16/normal/fused.max_ulp",
        "gelu/float16/normal/fused_no_worse",
        "verdict.rows_worse",
    }
    p99 = next(f for f in result.figures if f.name == "gelu/float16/normal/fused.p99_ulp")
    assert (p99.baseline, p99.current, p99.change) == (1.0, 3.0, 2.0)
    assert "stated tolerance" in p99.noise


def test_the_same_figures_pass(db):
    db.tag("v1", [_record(db, _b())])
    result = check_run(db, db.run(_record(db, _b())), "v1")
    assert not result.regressed
    assert {f.status for f in result.figures} == {UNCHANGED}


def test_a_change_within_the_stated_tolerance_is_noise_and_a_fall_is_an_improvement(db):
    db.tag("v1", [_record(db, _b(fused_p99=1.0, fused_max=4.0))])
    result = check_run(db, db.run(_record(db, _b(fused_p99=1.4, fused_max=2.0))), "v1")
    status = {f.name: f.status for f in result.figures}
    assert status["gelu/float16/normal/fused.p99_ulp"] == WITHIN_NOISE  # 0.4 <= 0.05 * 1 + 0.5
    assert status["gelu/float16/normal/fused.max_ulp"] == IMPROVED
    assert not result.regressed


def test_noise_comes_from_the_spread_of_several_baseline_runs(db):
    db.tag("v1", [_record(db, _b(fused_p99=p)) for p in (1.0, 2.0, 3.0)])  # mean 2, sd 1: noise 3
    inside = check_run(db, db.run(_record(db, _b(fused_p99=4.9))), "v1")
    outside = check_run(db, db.run(_record(db, _b(fused_p99=5.1))), "v1")
    name = "gelu/float16/normal/fused.p99_ulp"
    assert [f.status for f in inside.figures if f.name == name] == [WITHIN_NOISE]
    assert [f.name for f in outside.regressed] == [name]
    assert "3 standard deviations of 3 baseline runs" in outside.regressed[0].noise


def test_exact_figures_have_no_noise():
    assert judge("bit_equal", Rule("exact"), [1.0], 0.0).status == REGRESSED
    assert judge("unique_output_hashes", Rule("exact"), [1.0], 2.0).status == REGRESSED
    assert judge("unique_output_hashes", Rule("exact"), [1.0, 1.0], 1.0).status == UNCHANGED
    assert judge("loss", Rule("either", rel=0.01), [2.0], 1.5).status == REGRESSED
    assert judge("max_ulp", Rule("lower"), [2.0], None).status == REGRESSED


def test_only_runs_of_the_same_settings_and_device_class_are_compared(db):
    db.tag("v1", [_record(db, _b())])
    other_settings = db.run(_record(db, _b(), settings={"seed": 2}))
    with pytest.raises(StoreError, match="holds no run of task B with settings"):
        check_run(db, other_settings, "v1")
    other_device = db.run(_record(db, _b(), device_name="another cpu"))
    with pytest.raises(StoreError, match="on cpu | another cpu"):
        check_run(db, other_device, "v1")
    with pytest.raises(StoreError, match="there is no baseline 'v2'.*baselines: v1"):
        check_run(db, other_device, "v2")
