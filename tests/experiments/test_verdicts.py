"""The verdict logic of tasks A, C1, C2 and C3, fed synthetic results that must fail
(and, for contrast, ones that must pass). No torch, no compiler: results are built from
plain arrays."""

import numpy as np

from fpinspect.experiments.tasks.determinism import DeterminismResult, DeterminismSettings, Round
from fpinspect.experiments.tasks.reduction_order import (
    Observation,
    ReductionOrderResult,
    ReductionOrderSettings,
    StorageVersion,
    Trials,
    Version,
)
from fpinspect.experiments.tasks.rsqrt_newton import RsqrtResult, RsqrtSettings, Variant
from fpinspect.experiments.tasks.scalar_mul import PathRecord, ScalarMulResult, ScalarMulSettings
from fpinspect.numerics import ulp_nan


def topics(result):
    return {v.topic: v for v in result.verdicts()}


def _round(label, hashes, kernel="k" * 64, misses=1, hits=0):
    return Round(
        label,
        sum(hashes.values()),
        kernel,
        ["kernel"],
        ["mm"],
        hashes,
        1.0,
        "/c",
        0,
        3,
        {"fx_graph_cache_hits": hits, "fx_graph_cache_misses": misses},
    )


def test_a_fails_on_two_outputs_a_warm_cold_start_and_a_new_kernel():
    s = DeterminismSettings(runs=10)
    nan = ulp_nan(np.float16)
    good = DeterminismResult(s, {}, [_round("round 1", {"h": 10}), _round("round 2", {"h": 10})], 0, nan)
    assert all(v.agrees for v in good.verdicts())
    assert "mm" in topics(good)["same kernel after a cold start"].measured
    bad = DeterminismResult(
        s, {}, [_round("round 1", {"h": 6, "g": 4}), _round("round 2", {"h": 10}, "j" * 64, 0, 1)], 2, nan
    )
    v = topics(bad)
    assert not any(x.agrees for x in v.values())
    plan = bad.tables()[0]
    assert plan.rows[1] == ("measured", 10, 2, 2)  # numbers stay numbers


def _c1(control_shift: int):
    """Path B's fused output is ``control`` shifted by ``control_shift`` ULP in half of the elements."""
    x = np.linspace(0.1, 1.0, 64, dtype=np.float16)
    ref = x.astype(np.float64) * 0.7
    control = (x.astype(np.float32) * np.float32(np.float16(0.7))).astype(np.float16)
    b = control.view(np.uint16).copy()
    b[::2] += control_shift
    b = b.view(np.float16)
    a = (x.astype(np.float32) * np.float32(0.7)).astype(np.float16)
    line = ["auto tmp1 = tmp0 * tmp2;"]
    paths = {
        "A": PathRecord("x * 0.7", a, a, {"ops": ["aten::mul"], "device_kernels": []}, ["k"], "h", 1, line),
        "B": PathRecord(
            "x * s.expand_as(x)", b, b, {"ops": ["aten::mul"], "device_kernels": []}, ["k"], "h", 2, line
        ),
    }
    return ScalarMulResult(ScalarMulSettings(shape=(64,)), float(np.float16(0.7)), paths, control, ref, line)


def test_c1_headline_is_the_value_equalised_comparison_and_can_fail():
    same = _c1(0)
    assert same.data()["bit_equal"] and same.data()["lowered_the_same"]
    first = topics(same)["paths differ in the last bit"]
    assert first.agrees is None and "lowers both paths the same way" in first.measured
    far = _c1(3)  # half the elements 3 ULP apart: differ, but not mostly within 1 ULP
    assert far.data()["ulp_share"][">=2"] == 0.5
    assert topics(far)["paths differ in the last bit"].agrees is False
    assert topics(far)["the cause is instruction choice"].agrees is True


def _c2(distinct=1, chunk_results=(1.0, 1.0009765625)):
    s = ReductionOrderSettings(n=8, chunk_sizes=(2, 4), runs=3, trials=1)
    one = np.array([1.0])
    versions = [
        Version(
            str(c),
            c,
            np.array([r], np.float16),
            np.array([r], np.float32),
            np.array([r], np.float16),
            np.array([r], np.float32),
            distinct,
            None,
            1,
        )
        for c, r in zip(s.chunk_sizes, chunk_results)
    ] + [
        Version(
            "sum",
            None,
            np.array([1.0], np.float16),
            np.array([1.0], np.float32),
            np.array([1.0], np.float16),
            np.array([1.0], np.float32),
            1,
            None,
            1,
        )
    ]
    storage = [StorageVersion(c, np.array([r], np.float16), 1) for c, r in zip(s.chunk_sizes, chunk_results)]
    trials = Trials(1, {2: [0.5], 4: [0.25]}, [[0, 1], [1, 0]])
    obs = [
        Observation(
            "shape [1, 8]",
            "shape",
            np.array([1.0], np.float32),
            np.array([1.0], np.float16),
            np.array([1.0], np.float32),
            1,
        )
    ]
    return ReductionOrderResult(s, versions, one, 8.0, storage, trials, obs)


def test_c2_fails_on_a_non_deterministic_version_and_on_equal_chunk_sums():
    assert topics(_c2())["each version is self-consistent"].agrees is True
    assert topics(_c2(distinct=2))["each version is self-consistent"].agrees is False
    assert topics(_c2())["chunk sizes differ in the last bit"].agrees is True
    assert topics(_c2(chunk_results=(1.0, 1.0)))["chunk sizes differ in the last bit"].agrees is False
    assert "own code" in topics(_c2())["chunk sizes differ in the last bit"].expectation
    # one observation of the framework's own order cannot show a change
    assert topics(_c2())["the framework's own order changes"].agrees is None


def _c3(newton_errors, identical_to_framework=False):
    ref = np.linspace(0.5, 2.0, 32)
    exact = ref.astype(np.float16)
    fw = Variant("framework rsqrt", None, exact, exact, [], 1)
    variants = [fw]
    for k, shift in enumerate(newton_errors, start=1):
        y = exact.view(np.uint16).copy()
        if not (identical_to_framework and k == len(newton_errors)):
            y[: shift * 4] += 1
        y = y.view(np.float16)
        variants.append(Variant(f"Newton–Raphson, {k} iteration(s)", k, y, y, [], 1))
    s = RsqrtSettings(shape=(32,), iterations=tuple(range(1, len(newton_errors) + 1)))
    return RsqrtResult(s, variants, ref, exact, {})


def test_c3_fails_when_error_grows_or_one_variant_matches_the_framework():
    good = topics(_c3([4, 2, 1]))
    assert good["more iterations, smaller error"].agrees is True
    assert good["iteration variants differ from the framework"].agrees is True
    assert topics(_c3([1, 2, 4]))["more iterations, smaller error"].agrees is False
    # "any variant differs" would pass here; the verdict needs every variant to differ
    assert (
        topics(_c3([4, 2, 1], identical_to_framework=True))[
            "iteration variants differ from the framework"
        ].agrees
        is False
    )
    # numpy float32 equal to the framework: the fallback cannot show a difference
    fallback = topics(_c3([4, 2, 1]))["fallback: the framework's rsqrt against numpy float32"]
    assert fallback.agrees is None and "cannot show" in fallback.measured
