"""compare_arrays: status codes for special values and degenerate inputs."""

import pickle

import numpy as np

from fpinspect.dumps.engine.pair import compare_arrays, reference_status


def test_special_value_statuses_and_counts():
    a = np.array([1, np.nan, np.nan, np.inf, 2], np.float16)
    b = np.array([1, np.nan, 3, -np.inf, 2], np.float16)
    res = compare_arrays(a, b)
    assert res.status == ["NAN_MISMATCH", "INF_MISMATCH", "BOTH_NAN"]
    assert (
        res.metrics.errors.nan_mismatch,
        res.metrics.errors.inf_mismatch,
        res.metrics.errors.both_nan,
    ) == (1, 1, 1)
    assert reference_status(res.status) == "OK"  # the reference script has no such codes
    # special-value mismatches head the worst elements
    assert {tuple(w["index"]) for w in res.worst[:2]} == {(2,), (3,)}


def test_empty_tensors():
    res = compare_arrays(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32))
    assert res.status == ["EMPTY"] and not res.compared
    assert reference_status(res.status) == "COMPUTE_ERROR"


def test_identical_tensors_have_no_worst_elements():
    a = np.linspace(-1, 1, 50, dtype=np.float32)
    res = compare_arrays(a, a.copy())
    assert res.worst == [] and res.metrics.errors.bit_equal == 50 and res.metrics.errors.ulp.share.zero == 1.0


def test_bfloat16_saved_by_numpy_gets_a_hint(tmp_path):
    import ml_dtypes

    from fpinspect.dumps.engine.pair import compare_npy

    np.save(tmp_path / "bf.npy", np.ones(4, ml_dtypes.bfloat16))  # numpy writes it as raw |V2
    res = compare_npy(tmp_path / "bf.npy", tmp_path / "bf.npy")
    assert res.status == ["COMPUTE_ERROR"] and "save them as float32" in res.message


def test_worst_elements_ulps_are_ulp_diff_in_every_format():
    # the worst elements' ULPs are read from the pass's scores where those are exact: they must
    # be ulp_diff's, across zero, for subnormals, and with a special-value mismatch among them
    import ml_dtypes

    from fpinspect.numerics import ulp_diff, ulp_nan

    rng = np.random.default_rng(7)
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64, ml_dtypes.float8_e4m3fn):
        fi = ml_dtypes.finfo(dtype)
        base = rng.standard_normal(64)
        a = np.concatenate([base, [float(fi.smallest_subnormal) * 3, 0.0, -0.0, 1.0]]).astype(dtype)
        b = np.concatenate([base * 1.01, [-float(fi.smallest_subnormal), -0.0, 0.0, -1.0]]).astype(dtype)
        for mismatch in (False, True):
            if mismatch:
                a[5] = np.nan
            res = compare_arrays(a, b, worst=12)
            idx = [w["index"][0] for w in res.worst]
            want = ulp_diff(a[idx], b[idx]).tolist()
            nan = ulp_nan(np.dtype(dtype))
            assert [w["ulp"] for w in res.worst] == [None if d == nan else d for d in want], (dtype, mismatch)
            assert (idx[0] == 5) == mismatch  # a NaN against a number heads them


def test_metrics_are_one_flat_json_object_and_survive_a_process_pool():
    a = np.linspace(-1, 1, 64, dtype=np.float16)
    res = compare_arrays(a, (a * np.float16(1.01)).astype(np.float16), kl=False)
    j = res.to_json()["metrics"]
    assert "kl" not in j and "mismatched" not in j  # left out when not asked for / not integers
    assert list(j)[:2] == ["rmse", "mean_abs"] and list(j)[-2:] == ["normwise", "worst"]
    assert j["ulp"]["share"][">=2"] == res.metrics.errors.ulp.share.two_or_more
    back = pickle.loads(pickle.dumps(res.metrics))
    assert back == res.metrics and back.to_json() == res.metrics.to_json()
    ints = compare_arrays(np.arange(4, dtype=np.int32), np.array([0, 1, 2, 5], np.int32))
    assert ints.metrics.mismatched == 1 and ints.to_json()["metrics"]["mismatched"] == 1
