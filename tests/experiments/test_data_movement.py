"""Task D: a tiny real run on the CPU, and its verdict logic fed data that must fail."""

import pytest

from fpinspect.experiments.engine import run_experiment
from fpinspect.experiments.events import HistogramEvent
from fpinspect.experiments.registry import get_task
from fpinspect.experiments.tasks.data_movement import Cell, DataMovementResult, DataMovementSettings

TINY = DataMovementSettings(
    dtypes=("float16",),
    shapes=((5, 7),),
    chains=("transpose_concat", "reshape_squeeze_expand", "broadcast_add_promote"),
)


def verdict(result, topic):
    return next(v for v in result.verdicts() if v.topic == topic)


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_tiny_run_fills_the_table_and_explains_counter_examples(inductor_cache):
    events = []
    report = run_experiment("D", TINY, device="cpu", on_event=events.append)
    d = report.data
    rows = {r["chain"]: r for r in d["table"]}
    assert set(rows) == set(TINY.chains)
    assert all(
        set(r) == {"chain", "dtype", "shape", "bit_equal", "kernel_generated", "max_ulp"} for r in d["table"]
    )
    assert all(r["shape"] == [5, 7] and r["dtype"] == "float16" for r in d["table"])
    # a concat needs a kernel; reshape/squeeze/expand is a view of the input
    assert rows["transpose_concat"]["kernel_generated"] is True
    assert rows["reshape_squeeze_expand"]["kernel_generated"] is False
    for r in d["table"]:
        assert (r["max_ulp"] == 0) == r["bit_equal"]
    assert d["all_pure_movement_bit_equal"] == all(
        r["bit_equal"] for r in d["table"] if r["chain"] != "broadcast_add_promote"
    )
    assert [(e["chain"], e["shape"]) for e in d["counter_examples"]] == [
        (r["chain"], r["shape"]) for r in d["table"] if not r["bit_equal"]
    ]
    assert all(e["cause"] for e in d["counter_examples"])
    promote = rows["broadcast_add_promote"]
    if not promote["bit_equal"]:
        (example,) = [e for e in d["counter_examples"] if e["chain"] == "broadcast_add_promote"]
        assert "hidden computation" in example["cause"] and "confirmed" in example["cause"]
    charts = [e.histogram for e in events if isinstance(e, HistogramEvent)]
    assert [len(h.bins) for h in charts] == [1, 2, 3]
    # every figure the task declares for baseline checks is a field of its result
    assert get_task("D").figures.unmatched(report.to_dict()) == []


def _cell(chain, bit_equal, **kw):
    return Cell(
        chain, "float16", (5, 7), bit_equal, True, 0 if bit_equal else 3, 0 if bit_equal else 2, 35, **kw
    )


def test_a_pure_chain_that_changes_bits_fails_the_verdict():
    good = DataMovementResult(TINY, [_cell("transpose_concat", True), _cell("reshape_squeeze_expand", True)])
    assert good.all_pure_movement_bit_equal() and verdict(good, "pure data movement is bit-identical").agrees
    bad = DataMovementResult(TINY, [_cell("transpose_concat", True), _cell("reshape_squeeze_expand", False)])
    assert bad.data()["all_pure_movement_bit_equal"] is False
    v = verdict(bad, "pure data movement is bit-identical")
    assert v.agrees is False and "reshape_squeeze_expand float16 5×7" in v.measured
    (example,) = bad.counter_examples()
    assert example["cause"].startswith("unexpected: a chain that only moves data changed bits (2 of 35")


def test_an_unconfirmed_cause_is_said_and_a_silent_counter_example_cannot_agree():
    unexplained = DataMovementResult(TINY, [_cell("broadcast_add_promote", False, cause_confirmed=False)])
    assert "not confirmed" in unexplained.counter_examples()[0]["cause"]
    assert "NOT confirmed" in verdict(unexplained, "a broadcast hiding a type promotion may differ").measured
    silent = DataMovementResult(TINY, [_cell("broadcast_add_promote", True)])
    assert verdict(silent, "a broadcast hiding a type promotion may differ").agrees is None
