"""Verdicts in the format the values carry: an output computed through a narrower intermediate is
judged in that format's eps, and the localisation reads inputs and outputs in one unit."""

import ml_dtypes
import numpy as np

from fpinspect.dumps.engine.localise import OpRecords, localise
from fpinspect.dumps.engine.pair import compare_arrays
from fpinspect.dumps.engine.plan import PairPlan
from fpinspect.dumps.engine.records import Record
from fpinspect.dumps.engine.verdict import ThresholdTable, judge
from fpinspect.dumps.formats.fusion import FusedOp
from fpinspect.replay.evidence import decisive

TABLE = ThresholdTable()


def _through_bf16(x: np.ndarray) -> np.ndarray:
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


def _values(n=4096, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_a_float32_output_through_bfloat16_is_judged_in_bfloat16_eps():
    exact = _values()  # the fused kernel: the residual add kept in float32
    eager = _through_bf16(exact)  # eager: the add rounded to bfloat16, then cast up
    res = compare_arrays(exact, eager, worst=0, kl=False)
    held_to_fp32 = judge(res, TABLE)
    assert held_to_fp32.verdict == "fail" and held_to_fp32.score > 1000  # ~1e4 eps of float32
    fair = judge(res, TABLE, "bfloat16")
    assert fair.verdict == "pass" and fair.score < 0.75 and fair.budget == "bfloat16"


def test_the_budget_still_fails_a_real_error():
    eager = _through_bf16(_values())
    wrong = eager * np.float32(1.03)  # a wrong constant: 7.7 eps of bfloat16
    j = judge(compare_arrays(wrong, eager, worst=0, kl=False), TABLE, "bfloat16")
    assert j.verdict == "fail"
    assert "eps bfloat16 (float32 values through bfloat16) > 1" in j.reasons[0]


def test_a_budget_wider_than_the_measured_format_changes_nothing():
    a, b = _values().astype(np.float16), _values(seed=1).astype(np.float16)
    res = compare_arrays(a, b, worst=0, kl=False)
    assert judge(res, TABLE, "float32") == judge(res, TABLE)


def test_equal_zero_tensors_do_not_fail_on_the_reference_cosine():
    zeros = np.zeros((1, 1, 16, 16), np.float32)  # an attention mask: the reference's cosine is 0
    res = compare_arrays(zeros, zeros.copy(), worst=0, kl=False)
    assert res.cosine == 0.0
    assert judge(res, TABLE).verdict == "pass"
    assert judge(compare_arrays(zeros + 1, zeros, worst=0, kl=False), TABLE).verdict == "fail"


def _record(kind, index, a, b, budget=None, src="producer"):
    plan = PairPlan(kind, "fused", "AscBackend", index, "orig", 0, src_op=src)
    res = compare_arrays(a, b, worst=0, kl=False)
    j = judge(res, TABLE, budget)
    return Record(plan, res, j.verdict, j.reasons, j.score, None, j.budget)


def _op():
    return FusedOp("fused", "AscBackend", "g", [], ["orig"], ["Add"], [])


def test_an_input_within_its_thresholds_explains_a_float32_output():
    # a bfloat16 input 0.4 eps off (passes), a float32 output computed from it purely in float32:
    # thousands of float32 eps, yet no more than the input carried -> inherited, not introduced
    x = _values()
    noise = _through_bf16(x + x * np.float32(0.4 * 2.0**-8) * np.sign(_values(seed=2)))
    inp = _record("input", 0, noise.astype(ml_dtypes.bfloat16), x.astype(ml_dtypes.bfloat16))
    assert inp.verdict == "pass"
    out = _record("output", 0, noise * np.float32(2), x.astype(ml_dtypes.bfloat16).astype(np.float32) * 2)
    assert out.verdict == "fail"
    (finding,) = localise([OpRecords(_op(), [out], [inp])], thresholds=TABLE).ops
    assert finding.role == "inherited", finding.reason
    assert "bfloat16" not in finding.reason or "float32" in finding.reason


def test_an_output_far_beyond_its_inputs_is_still_introduced():
    x = _values()
    inp = _record("input", 0, x.astype(ml_dtypes.bfloat16), x.astype(ml_dtypes.bfloat16))
    out = _record("output", 0, x * np.float32(1.03), x)
    (finding,) = localise([OpRecords(_op(), [out], [inp])], thresholds=TABLE).ops
    assert finding.role == "introduced"


def test_a_replay_is_decisive_about_a_deviation_far_larger_than_its_own_error():
    device = _values()
    replay = device.copy()
    replay[::10] = np.nextafter(np.nextafter(replay[::10], np.inf), np.inf)  # 2 ULP on 10%: unfaithful
    fidelity = compare_arrays(replay, device, worst=0, kl=False)
    far = compare_arrays(device * np.float32(1.001), device, worst=0, kl=False)  # ~8 000 eps of float32
    near = compare_arrays(replay, device, worst=0, kl=False)
    assert decisive(fidelity, far) > 1000
    assert decisive(fidelity, near) is None  # no better than the replay's own error
    nan = replay.copy()
    nan[0] = np.nan
    assert decisive(compare_arrays(nan, device, worst=0, kl=False), far) is None


def test_the_amplification_ratio_reads_the_failing_output_in_its_own_unit():
    # output 0 (judged in bfloat16 eps) fails 3x its bfloat16 input's error: inherited; output 1,
    # a float32 output 15 float32 eps off, passes and must not stand in for it in the ratio
    x = _through_bf16(_values())
    noisy_in = _through_bf16(x * np.float32(1 + 2.5 * 2.0**-8))
    inp = _record("input", 0, noisy_in.astype(ml_dtypes.bfloat16), x.astype(ml_dtypes.bfloat16))
    assert inp.verdict == "fail"
    failing = _record("output", 0, x * np.float32(1.03), x, budget="bfloat16")
    y = _values(seed=3)
    passing = _record("output", 1, y * np.float32(1 + 15 * 2.0**-23), y)
    assert failing.verdict == "fail" and passing.verdict == "pass" and passing.score > failing.score
    (finding,) = localise([OpRecords(_op(), [failing, passing], [inp])], thresholds=TABLE).ops
    assert finding.role == "inherited", finding.reason
