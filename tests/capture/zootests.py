"""The zoo's checks, shared by its test files (one file per few architectures, so that the two
workers of ``make test`` share the compiling): a clean capture names no introduced op and the
ablation agrees; a planted ``scale`` fault is the only introduced op, named first, and the only
region the ablation confirms."""

from functools import cache

from zoocases import ZooCase, planted_regions, zoo_capture

DTYPE = "bfloat16"  # the suite's; benchmarks/bench_zoo.py runs float16 too


@cache
def captured(model: str):
    """Each architecture traced and compiled once per test process."""
    return zoo_capture(model, DTYPE)


def check_clean(model: str, tmp_path) -> None:
    cap = captured(model)
    row = ZooCase(cap, tmp_path / "clean").run()
    assert row.introduced == [], row
    assert row.confirmed == [] and row.disagreements == [], row


def check_planted(model: str, tmp_path) -> None:
    cap = captured(model)
    (planted,) = planted_regions(cap, "reaching")
    case = ZooCase(cap, tmp_path / "planted", planted)
    row = case.run()
    assert row.introduced == [case.planted_name], row
    assert case.report.summary()["first_introduced"]["op"] == case.planted_name
    assert row.confirmed == [case.planted_name] and row.disagreements == [], row
