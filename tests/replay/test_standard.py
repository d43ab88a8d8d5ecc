"""msprobe's benchmark standard on replayed outputs (``replay.standard``): each of the fused
output's errors against float64 over eager's, judged by the limits of the op class."""

from __future__ import annotations

import numpy as np
import pytest
from chains import F16, F32, build_chain, cancellation_chain, muls
from chains import compare_with_replay as _compare

from fpinspect.replay.standard import benchmark_standard


def _standard(paths, op: str) -> dict:
    records = _compare(paths, replay="all").to_json()["records"]
    return next(r["replay"]["standard"] for r in records if r["fused_op"] == op)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Two Muls regions; the second computes 0.3% too large (a regression eager does not make)."""
    ops = [muls("Muls_1", 0.9), muls("Muls_2", 1.1)]
    regions = [("autofuse_0_Muls", ["Muls_1"]), ("autofuse_1_Muls", ["Muls_2"])]
    return build_chain(
        tmp_path_factory.mktemp("planted"), ops, regions, inject={"autofuse_1_Muls": lambda v: v * F32(1.003)}
    )


def test_a_planted_regression_fails_the_standard(planted):
    s = _standard(planted, "autofuse_1_Muls")
    assert s["verdict"] == "fail"
    assert (s["op_class"], s["op_class_from"], s["dtype"]) == ("L0", None, "float16")
    max_rel = s["metrics"]["MaxRelErr"]
    assert max_rel["limit"] == 10.0 and max_rel["ratio"] > 5
    assert max_rel["ratio"] == pytest.approx(max_rel["fused"] / max(max_rel["eager"], 2.0**-11))
    assert s["metrics"]["MeanRelErr"]["ratio"] > 2.0


def test_a_clean_fusion_passes_the_standard(planted):
    s = _standard(planted, "autofuse_0_Muls")
    assert s["verdict"] == "pass"
    assert all(m["ratio"] <= m["limit"] for m in s["metrics"].values())


def test_a_fusion_closer_to_fp64_passes_the_standard(tmp_path):
    s = _standard(build_chain(tmp_path, *cancellation_chain()), "autofuse_0_Muls_Exp_Adds_Muls")
    assert s["verdict"] == "pass"
    assert s["metrics"]["MeanRelErr"]["ratio"] < 0.5  # fused is the closer side


def test_the_op_class_sets_the_limits():
    """One ULP more on 5% of the elements nearly triples the largest relative error: within
    msprobe's default (L0) limit of 10, over the 2 of L2, where a LayerNorm puts the region. A
    float type outside the standard gets no verdict, and says why."""
    truth = np.random.default_rng(0).uniform(0.5, 2.0, 4096)
    eager = truth.astype(F16)
    away = np.where(eager >= truth, np.inf, -np.inf).astype(F16)
    fused = eager.copy()
    fused[:200] = np.nextafter(eager[:200], away[:200])
    l0 = benchmark_standard(fused, truth, eager, truth, ["Add", "Muls"]).to_json()
    l2 = benchmark_standard(fused, truth, eager, truth, ["Add", "LayerNormV4"]).to_json()
    assert 2.0 < l0["metrics"]["MaxRelErr"]["ratio"] < 10.0
    assert (l0["op_class"], l0["verdict"]) == ("L0", "pass")
    assert (l2["op_class"], l2["op_class_from"], l2["verdict"]) == ("L2", "LayerNormV4", "fail")
    f64 = benchmark_standard(truth, truth, truth, truth, ["Add"]).to_json()
    assert (
        f64["verdict"] is None
        and f64["reason"] == "the standard covers float16, bfloat16, float32, not float64"
    )


def test_small_values_count_in_their_own_ratio():
    """Elements with |truth| at most 2^-10 (float16) leave the relative errors and RMSE and
    make SmallValueErrRatio: a fused op that flushes them to zero fails on it alone."""
    truth = np.concatenate([np.full(64, 2.0**-12), np.linspace(1.0, 2.0, 64)])
    eager = truth.astype(F16)
    fused = np.where(truth < 2.0**-10, 0.0, truth).astype(F16)
    s = benchmark_standard(fused, truth, eager, truth, ["Muls"]).to_json()
    ratios = {m: v["ratio"] for m, v in s["metrics"].items()}
    assert s["metrics"]["SmallValueErrRatio"]["fused"] == 1.0
    assert s["metrics"]["SmallValueErrRatio"]["eager"] == 0.0  # 2^-12 is exact in float16
    assert ratios["SmallValueErrRatio"] == 2.0**11 and s["verdict"] == "fail"
    assert ratios["MaxRelErr"] <= 1 and ratios["RMSE"] <= 1


# -- msprobe's conventions on hand-computed cases ------------------------------------------------


def _errors(x, truth):
    s = benchmark_standard(x, truth, x, truth, ["Muls"])
    return s.fused


def test_bfloat16_relative_errors_use_eps_2_to_the_minus_8():
    """msprobe casts both sides of a bfloat16 output to float32 and adds 2^-8 (not float32's
    eps) to |bench| in the denominator: one ULP above 1.0 is 2^-7 / (1 + 2^-8)."""
    from ml_dtypes import bfloat16

    truth = np.array([1.0, 1.0])
    x = np.array([1.0 + 2.0**-7, 1.0], dtype=bfloat16)
    e = _errors(x, truth)
    assert e.max_rel == pytest.approx(2.0**-7 / (1 + 2.0**-8), rel=1e-6)
    assert e.mean_rel == pytest.approx(2.0**-7 / (1 + 2.0**-8) / 2, rel=1e-6)


def test_a_float16_benchmark_beyond_float16_is_left_out():
    """The benchmark is cast to the output's format before the finite test: 65520 is inf in
    float16, so that element counts in no metric (the other one is exact)."""
    truth = np.array([65520.0, 1.0])
    x = np.array([65504.0, 1.0], dtype=F16)
    e = _errors(x, truth)
    assert (e.max_rel, e.mean_rel, e.rmse) == (0.0, 0.0, 0.0)


def test_rmse_carries_the_masked_count_correction():
    """RMSE = sqrt(mean(e^2 over all N, left-out elements as 0) * (N / (N - m + 1e-4) + 1e-4)):
    with 999 small elements of 1000, 0.005 % below the root mean square of the one error."""
    truth = np.concatenate([np.full(999, 2.0**-12), [2.0]])
    x = np.concatenate([np.full(999, 2.0**-12), [2.0 - 2.0**-9]]).astype(F16)
    e = _errors(x, truth)
    assert e.rmse == pytest.approx(np.sqrt(2.0**-18 / 1000 * (1000 / (1 + 1e-4) + 1e-4)), rel=1e-6)
    assert e.rmse < 2.0**-9 * (1 - 4e-5)
    # float16's benchmark is float32: its eps, 2^-23, is the one in the denominator
    assert e.max_rel == pytest.approx(2.0**-9 / (2.0 + 2.0**-23), rel=1e-6)


def test_msprobes_l1_and_l2_apis_have_ge_types():
    """Every API of msprobe's L1 and L2 lists is reached from some GE type."""
    from fpinspect.replay.standard import OP_CLASSES, op_class

    l1 = {"embedding", "npu_fusion_attention_grad", "npu_fusion_attention", "scatter_", "scatter_add_"}
    l2 = {
        "addmm", "npu_cross_entropy_loss", "npu_cross_entropy_loss_backward", "GELU", "layer_norm", "matmul",
        "index", "one_hot", "sum", "npu_rms_norm", "npu_rms_norm_backward", "nonzero",
    }  # fmt: skip
    mapped = {api: level for level, api in OP_CLASSES.values()}
    assert {a for a in l1 if mapped.get(a) == "L1"} == l1 - {"npu_fusion_attention_grad"}
    assert {a for a in l2 if mapped.get(a) == "L2"} == l2
    assert op_class(["Add", "ScatterAddWithAxis"]) == ("L1", "ScatterAddWithAxis")
    assert op_class(["GatherV2", "RmsNormGrad"]) == ("L2", "RmsNormGrad")
    assert op_class(["CrossEntropyLoss"])[0] == op_class(["CrossEntropyLossGrad"])[0] == "L2"
