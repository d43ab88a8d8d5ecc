"""Task B: a tiny real run on the CPU (checked against a direct recomputation), and its
verdict logic fed data that must fail."""

import numpy as np
import pytest

from fpinspect.experiments.bootstrap import InputTops, compare
from fpinspect.experiments.engine import run_experiment
from fpinspect.experiments.events import CurveEvent, HistogramEvent, Progress
from fpinspect.experiments.registry import get_task
from fpinspect.experiments.tasks.accumulated_error import (
    CHAINS,
    AccumulatedErrorResult,
    AccumulatedErrorSettings,
    Row,
    draw,
    no_worse,
)
from fpinspect.numerics import fp64_reference, ulp_error

TINY = AccumulatedErrorSettings(
    dtypes=("bfloat16",),
    distributions=("normal", "heavy_tails"),
    chains=("softmax", "mul_add_gelu_mul"),
    inputs=6,
    rows=4,
    hidden=64,
    partial_every=4,
)


@pytest.fixture(scope="module")
def tiny(inductor_cache):
    events = []
    report = run_experiment("B", TINY, device="cpu", on_event=events.append)
    return report, events


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_rows_follow_the_contract_and_the_rule(tiny):
    report, _ = tiny
    d = report.data
    assert [(r["chain"], r["distribution"]) for r in d["chains"]] == [
        (c, dist) for c in TINY.chains for dist in TINY.distributions
    ]
    for r in d["chains"]:
        assert r["dtype"] == "bfloat16" and r["inputs"] == TINY.inputs
        for path in ("eager", "fused"):
            e = r[path]
            assert {"p50_ulp", "p99_ulp", "max_ulp", "p99_rel", "max_rel"} <= set(e)
            assert 0 <= e["p50_ulp"] <= e["p99_ulp"] <= e["max_ulp"] and e["p99_rel"] <= e["max_rel"]
            assert len(r["per_input_max_ulp"][path]) == TINY.inputs
            assert max(r["per_input_max_ulp"][path]) == pytest.approx(e["max_ulp"])
        assert r["fused_no_worse"] == (
            r["fused"]["p99_ulp"] <= r["eager"]["p99_ulp"] and r["fused"]["max_ulp"] <= r["eager"]["max_ulp"]
        )
    v = d["verdict"]
    assert v["fused_no_worse"] == all(r["fused_no_worse"] for r in d["chains"])
    assert v["rows_worse"] == len(d["counter_examples"]) + len(d["worse_within_noise"])
    assert v["rows_worse"] == sum(not r["fused_no_worse"] for r in d["chains"])
    assert v["rows_worse_beyond_noise"] == len(d["counter_examples"])
    for r in d["chains"]:
        assert r["noise"]["resamples"] == 1000 and r["noise"]["class"] in (
            "worse beyond noise",
            "within noise",
            "better beyond noise",
        )
        for path in ("eager", "fused"):
            lo, hi = r["noise"]["max_ulp"][path]
            assert lo <= r[path]["max_ulp"] <= hi
    for e in d["counter_examples"]:
        assert 0 <= e["input_index"] < TINY.inputs and e["seed"] == TINY.seed + e["input_index"]
        assert e["fused_ulp_error"] == pytest.approx(e["fused"]["max_ulp"])
    # every chain really ran through a fused kernel
    assert all(n >= 1 for per_dtype in d["fused_kernels"].values() for n in per_dtype.values())
    assert {c.name for c in report.curves} == {f"b_{c}_cdf" for c in TINY.chains}
    assert len(report.histograms) == 2 * len(TINY.chains)
    # every figure the task declares for baseline checks is a field of its result
    assert get_task("B").figures.unmatched(report.to_dict()) == []


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_streamed_eager_error_matches_a_direct_recomputation(tiny):
    report, _ = tiny
    row = next(
        r for r in report.data["chains"] if r["chain"] == "softmax" and r["distribution"] == "heavy_tails"
    )
    from fpinspect.experiments.tensors import to_numpy

    chain = CHAINS["softmax"]
    errs = []
    for i in range(TINY.inputs):
        host = draw(chain, "heavy_tails", TINY, "bfloat16", i)
        errs.append(
            ulp_error(to_numpy(chain.fn(*host)), np.asarray(fp64_reference(chain.fn, host))).reshape(-1)
        )
    errs = np.concatenate(errs)
    assert row["eager"]["max_ulp"] == pytest.approx(errs.max())
    assert row["eager"]["p99_ulp"] == pytest.approx(np.percentile(errs, 99, method="inverted_cdf"))


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_partial_histograms_and_cdfs_stream_while_running(tiny):
    _, events = tiny
    hist = [e.histogram for e in events if isinstance(e, HistogramEvent)]
    fused = [sum(h.counts) for h in hist if h.name == "b_softmax_bfloat16_fused"]
    per_input = TINY.rows * TINY.hidden
    # after every 4 inputs of the chain and dtype (6 per distribution, 12 in all)
    assert fused == [4 * per_input, 8 * per_input, 12 * per_input]
    curves = [e.curve for e in events if isinstance(e, CurveEvent) and e.curve.name == "b_softmax_cdf"]
    assert len(curves) == len(fused) and curves[-1].series[0].y[-1] == 1.0
    assert any(isinstance(e, Progress) and e.stage == "B softmax bfloat16" for e in events)


def _summary(p99, mx, nan=0):
    return {
        "p50_ulp": 0.2,
        "p99_ulp": p99,
        "max_ulp": mx,
        "mean_ulp": 0.3,
        "p50_rel": 0,
        "p99_rel": 0,
        "max_rel": 0,
        "p50_abs": 0,
        "p99_abs": 0,
        "max_abs": 0,
        "worst": [0, 1],
        "nan_mismatch": nan,
        "inf_mismatch": 0,
    }


def _row(chain, eager, fused):
    return Row(chain, "float16", "normal", 2, eager, fused, {"eager": [1.0, 2.0], "fused": [3.0, 1.0]}, {})


def test_the_rule_fails_on_a_worse_p99_max_or_extra_nan():
    base = _summary(1.0, 4.0)
    assert no_worse(base, _summary(1.0, 4.0)) and no_worse(base, _summary(0.5, 2.0))
    assert not no_worse(base, _summary(1.1, 2.0))
    assert not no_worse(base, _summary(0.5, 4.5))
    assert not no_worse(base, _summary(0.5, 2.0, nan=1))


def test_a_worse_chain_fails_its_verdict_and_is_a_counter_example():
    s = AccumulatedErrorSettings(chains=("softmax", "layernorm"))
    result = AccumulatedErrorResult(
        s,
        [_row("softmax", _summary(1, 4), _summary(1, 3)), _row("layernorm", _summary(1, 4), _summary(2, 3))],
    )
    v = {x.topic: x for x in result.verdicts()}
    assert v["softmax: fused no worse than eager"].agrees is True
    assert v["layernorm: fused no worse than eager"].agrees is False
    assert result.verdict()["fused_no_worse"] is False and result.verdict()["by_chain"]["softmax"] is True
    (example,) = result.counter_examples()
    assert (example["chain"], example["distribution"], example["worse_in"]) == (
        "layernorm",
        "normal",
        ["P99"],
    )
    assert example["inputs_fused_worse"] == 1


def _paths(errors_of_input, inputs=60, seed=0):
    """Both paths' kept errors and summaries from ``errors_of_input(rng) -> (eager, fused)``."""
    rng = np.random.default_rng(seed)
    tops = {"eager": InputTops(), "fused": InputTops()}
    pooled = {"eager": [], "fused": []}
    for _ in range(inputs):
        for path, e in zip(("eager", "fused"), errors_of_input(rng)):
            tops[path].add(e)
            pooled[path].append(e)
    summary = {
        p: _summary(np.percentile(np.concatenate(v), 99, method="inverted_cdf"), np.concatenate(v).max())
        for p, v in pooled.items()
    }
    return tops, summary


def _noisy_row(chain, errors_of_input, seed=0):
    tops, summary = _paths(errors_of_input, seed=seed)
    row = _row(chain, summary["eager"], summary["fused"])
    row.noise = compare(tops["eager"], tops["fused"], seed=1)
    return row


def test_a_p99_gap_within_the_inputs_noise_is_no_counter_example():
    # both paths correctly rounded: errors in [0, 0.5], drawn alike; which P99 is larger is luck
    def alike(rng):
        return rng.uniform(0, 0.5, 1024), rng.uniform(0, 0.5, 1024)

    seed = next(k for k in range(50) if not no_worse(*_paths(alike, seed=k)[1].values()))
    noisy = _noisy_row("softmax", alike, seed=seed)

    def scaled(rng):  # fused's error is 1.5 times eager's on every element
        e = rng.uniform(0, 0.5, 1024)
        return e, e * 1.5

    worse = _noisy_row("layernorm", scaled)
    assert not noisy.fused_no_worse and noisy.noise["class"] == "within noise"
    lo, hi = noisy.noise["p99_ulp"]["difference"]
    assert lo < 0 < hi
    assert worse.noise["class"] == "worse beyond noise" and worse.noise["p99_ulp"]["difference"][0] > 0

    result = AccumulatedErrorResult(AccumulatedErrorSettings(chains=("softmax", "layernorm")), [noisy, worse])
    v = {x.topic: x for x in result.verdicts()}
    assert v["softmax: fused no worse than eager"].agrees is None  # the rule fails, the evidence cannot tell
    assert "within noise" in v["softmax: fused no worse than eager"].measured
    assert v["layernorm: fused no worse than eager"].agrees is False
    assert [e["chain"] for e in result.counter_examples()] == ["layernorm"]
    assert [e["chain"] for e in result.data()["worse_within_noise"]] == ["softmax"]
    assert result.verdict()["by_chain_noise"] == {
        "softmax": "within noise",
        "layernorm": "worse beyond noise",
    }
