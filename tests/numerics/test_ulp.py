"""ulp_diff, ulp_error, ulp_of and bit_equal: exact definitions, special values, exhaustive checks."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing._private.utils import nulp_diff

from fpinspect.numerics import (
    BOTH_NAN,
    FINITE,
    FORMATS,
    INF_MATCH,
    INF_MISMATCH,
    NAN_MISMATCH,
    bit_equal,
    bit_mismatch,
    float_format,
    ulp_diff,
    ulp_error,
    ulp_nan,
    ulp_of,
)

F16, BF16 = np.float16, ml_dtypes.bfloat16
E4M3, E5M2 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2


def bits(dtype, pattern):
    fmt = float_format(dtype)
    return np.array([pattern], dtype=fmt.uint).view(fmt.dtype)


def d1(dtype, a, b):
    return int(ulp_diff(np.array([a], dtype=dtype), np.array([b], dtype=dtype))[0])


@pytest.mark.parametrize("dtype", [F16, BF16, np.float32, np.float64, E4M3, E5M2])
def test_zero_signs_subnormals_and_neighbours(dtype):
    fi = ml_dtypes.finfo(dtype)
    assert d1(dtype, 0.0, -0.0) == 0
    assert d1(dtype, 0.0, float(fi.smallest_subnormal)) == 1
    assert d1(dtype, -float(fi.smallest_subnormal), float(fi.smallest_subnormal)) == 2
    one = np.array([1.0], dtype=dtype)
    up = np.nextafter(one, np.array([2.0], dtype=dtype))
    assert int(ulp_diff(one, up)[0]) == 1
    # largest subnormal to smallest normal is one step
    fmt = float_format(dtype)
    max_sub = bits(dtype, int(np.array([fi.smallest_normal], dtype=dtype).view(fmt.uint)[0]) - 1)
    assert int(ulp_diff(max_sub, np.array([fi.smallest_normal], dtype=dtype))[0]) == 1


@pytest.mark.parametrize("dtype", [F16, BF16, np.float32, np.float64, E5M2])
def test_max_finite_to_inf_is_one_step(dtype):
    fi = ml_dtypes.finfo(dtype)
    d, s = ulp_diff(np.array([fi.max], dtype=dtype), np.array([np.inf], dtype=dtype), return_status=True)
    assert int(d[0]) == 1 and s[0] == INF_MISMATCH


def test_opposite_signs_counted_across_zero_where_numpy_wraps():
    # values from the research note (numpy's nulp_diff gives 2050 / 2048 / 16777218 here)
    assert d1(F16, -65504, 65504) == 63486
    assert d1(F16, -np.inf, np.inf) == 63488
    assert d1(np.float32, -np.finfo(np.float32).max, np.finfo(np.float32).max) == 4278190078
    f64max = np.finfo(np.float64).max
    assert d1(np.float64, -f64max, f64max) == 18437736874454810622
    assert ulp_diff(np.array([-1.0]), np.array([1.0])).dtype == np.uint64


def test_result_types():
    assert ulp_diff(np.zeros(3, F16), np.zeros(3, F16)).dtype == np.uint32
    assert ulp_diff(np.zeros(3, np.float32), np.zeros(3, np.float32)).dtype == np.uint64
    assert ulp_diff(np.zeros((2, 3), BF16), np.zeros((2, 3), BF16)).shape == (2, 3)


@pytest.mark.parametrize("dtype", [F16, BF16, np.float32, np.float64, E4M3, E5M2])
def test_nan_rules(dtype):
    nan = np.array([np.nan], dtype=dtype)
    neg_nan = -nan
    one = np.array([1.0], dtype=dtype)
    d, s = ulp_diff(nan, neg_nan, return_status=True)
    assert int(d[0]) == 0 and s[0] == BOTH_NAN
    d, s = ulp_diff(nan, one, return_status=True)
    assert int(d[0]) == ulp_nan(dtype) and s[0] == NAN_MISMATCH
    # the sentinel is larger than any real distance in the format
    fi = ml_dtypes.finfo(dtype)
    top = np.array([np.inf if float_format(dtype).has_inf else fi.max], dtype=dtype)
    assert ulp_nan(dtype) > int(ulp_diff(-top, top)[0])


def test_fp8_nan_next_to_max_is_not_one_step():
    # e4m3fn: 448 (0x7e) and NaN (0x7f) are adjacent encodings; e5m2: inf (0x7c) and NaN (0x7d)
    assert int(ulp_diff(bits(E4M3, 0x7E), bits(E4M3, 0x7F))[0]) == ulp_nan(E4M3)
    assert int(ulp_diff(bits(E5M2, 0x7C), bits(E5M2, 0x7D))[0]) == ulp_nan(E5M2)


def test_inf_statuses():
    a = np.array([np.inf, np.inf, -np.inf, 1.0, 2.0], dtype=F16)
    b = np.array([np.inf, -np.inf, 1.0, 1.0, np.nan], dtype=F16)
    _, s = ulp_diff(a, b, return_status=True)
    assert s.tolist() == [INF_MATCH, INF_MISMATCH, INF_MISMATCH, FINITE, NAN_MISMATCH]


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_exhaustive_16bit_keys_are_monotone_and_dense(dtype):
    fmt = float_format(dtype)
    allbits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    vals = allbits.view(fmt.dtype)
    with np.errstate(invalid="ignore"):  # casting bfloat16 NaN encodings warns
        v64 = vals.astype(np.float64)
    ok = ~np.isnan(v64)
    vals, v64 = vals[ok], v64[ok]
    order = np.argsort(v64, kind="stable")
    vals, v64 = vals[order], v64[order]
    lowest = np.full(vals.shape, vals[0], dtype=fmt.dtype)
    d = ulp_diff(lowest, vals).astype(np.int64)
    # distance from the lowest value grows by exactly one per distinct value (zeros count once)
    distinct = np.concatenate([[0], np.cumsum(np.diff(v64) != 0)])
    assert np.array_equal(d, distinct)


def test_exhaustive_fp16_matches_numpy_nulp_where_numpy_is_valid():
    allbits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    x = allbits.view(F16)
    x = x[np.isfinite(x) & (x > 0)]
    rng = np.random.default_rng(3)
    y = x[rng.permutation(x.size)]
    ours = ulp_diff(x, y).astype(np.int64)
    theirs = nulp_diff(x, y).astype(np.float64).reshape(-1)
    ok = theirs < 2048  # numpy returns the distance in float16: exact only below 2048
    assert np.array_equal(ours[ok], theirs[ok].astype(np.int64))


finite_f32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=300, deadline=None)
@given(finite_f32, finite_f32, finite_f32)
def test_distance_is_a_metric_along_the_line(a, b, c):
    a, b, c = sorted([a, b, c])
    A, B, C = (np.array([v], dtype=np.float32) for v in (a, b, c))
    ab, bc, ac = (int(ulp_diff(p, q)[0]) for p, q in ((A, B), (B, C), (A, C)))
    assert ab == int(ulp_diff(B, A)[0])
    assert ac == ab + bc
    assert (ab == 0) == (a == b)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(min_value=0, max_value=float(np.finfo(np.float32).max), width=32),
    st.floats(min_value=0, max_value=float(np.finfo(np.float32).max), width=32),
)
def test_same_sign_float32_matches_numpy(a, b):
    A, B = np.array([a], np.float32), np.array([b], np.float32)
    theirs = int(nulp_diff(A, B).reshape(-1)[0])
    if theirs < 2**24:  # numpy returns the distance as float32: exact only below 2**24
        assert int(ulp_diff(A, B)[0]) == theirs


def test_mixed_dtypes_use_the_common_format():
    a = np.array([1.0], dtype=F16)
    b = np.array([1.0 + 2**-23], dtype=np.float32)
    d = ulp_diff(a, b)
    assert d.dtype == np.uint64 and int(d[0]) == 1


# -- ulp_of / ulp_error ---------------------------------------------------------------------


def test_ulp_of_facts():
    assert ulp_of(1.0, F16) == 2**-10
    assert ulp_of(0.0, F16) == 2**-24
    assert ulp_of(65504.0, F16) == 32
    assert ulp_of(448.0, E4M3) == 32
    assert ulp_of(1e30, F16) == 32  # beyond max: the ulp of max (Kahan's clamp)
    assert ulp_of(np.nextafter(2.0**40, 0), np.float32) == 2.0 ** (39 - 23)  # frexp, not floor(log2)
    assert ulp_of(-3.0, BF16) == 2**-6


def test_correctly_rounded_scores_at_most_half():
    rng = np.random.default_rng(7)
    ref = rng.uniform(-70000, 70000, 200_000) * rng.choice([1, 1e-3, 1e-6], 200_000)
    for dtype in (F16, BF16, np.float32):
        # ml_dtypes converts float64 to bfloat16 through float32 (rounding twice): give it
        # float32 references so the cast is one correct rounding
        r = ref.astype(np.float32).astype(np.float64) if dtype is BF16 else ref
        with np.errstate(over="ignore"):
            x = r.astype(dtype)
        fin = np.isfinite(x)
        assert ulp_error(x[fin], r[fin]).max() <= 0.5


def test_exhaustive_fp16_scaling_by_point_seven():
    # research note §5c: fp16(x) * fp16(0.7) is off by one ULP in ~38.6% of cases; fp32 math is exact-rounded
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(F16)
    x = x[np.isfinite(x)]
    ref = x.astype(np.float64) * 0.7
    path_a = x * F16(0.7)
    path_b = (x.astype(np.float32) * np.float32(0.7)).astype(F16)
    ok = np.isfinite(path_a) & np.isfinite(path_b)
    e_a = ulp_error(path_a[ok], ref[ok])
    e_b = ulp_error(path_b[ok], ref[ok])
    assert e_b.max() <= 0.5 + 1e-9  # fp32(0.7) is not 0.7: a hair above one half at worst
    assert 0.5 < e_a.max() <= 1.0 + 1e-9
    share = np.mean(ulp_diff(path_a[ok], ref[ok].astype(F16)) == 1)
    assert 0.37 < share < 0.40


def test_ulp_error_special_values():
    x = np.array([np.nan, np.nan, np.inf, np.inf, 1.0], dtype=F16)
    ref = np.array([np.nan, 1.0, np.inf, 1.0, 1.0 + 2**-11])
    e = ulp_error(x, ref)
    assert e[0] == 0 and np.isnan(e[1]) and e[2] == 0 and np.isinf(e[3]) and e[4] == 0.5


def test_power_of_two_asymmetry_is_documented_behaviour():
    below = np.nextafter(F16(1.0), F16(0.0))
    assert ulp_error(np.array([below]), np.array([1.0]))[0] == 0.5
    assert int(ulp_diff(np.array([below]), np.array([1.0], dtype=F16))[0]) == 1


# -- bit_equal ------------------------------------------------------------------------------


def test_bit_equal_rules():
    z = np.array([0.0], F16)
    assert not bit_equal(z, -z)
    nan = np.array([np.nan], F16)
    assert bit_equal(nan, nan.copy())
    assert not bit_equal(nan, bits(F16, 0x7E01))
    assert not bit_equal(np.zeros(2, F16), np.zeros(2, np.float32))
    assert not bit_equal(np.zeros(2, F16), np.zeros(3, F16))
    assert bit_equal(np.arange(5, dtype=np.int32), np.arange(5, dtype=np.int32))
    assert bit_mismatch(np.array([0.0, 1.0], F16), np.array([-0.0, 1.0], F16)).tolist() == [True, False]


def test_bit_equal_on_memmaps(tmp_path):
    a = np.random.default_rng(0).standard_normal(3_000_000).astype(BF16).view(np.uint16)
    np.save(tmp_path / "a.npy", a)
    b = a.copy()
    b[-1] ^= 1
    np.save(tmp_path / "b.npy", b)
    ma = np.load(tmp_path / "a.npy", mmap_mode="r")
    assert bit_equal(ma, np.load(tmp_path / "a.npy", mmap_mode="r"))
    assert not bit_equal(ma, np.load(tmp_path / "b.npy", mmap_mode="r"))


def test_registry_facts():
    f16 = FORMATS["float16"]
    assert (f16.p, f16.emin, f16.emax, f16.max_key) == (11, -14, 15, 0x7C00)
    e4 = FORMATS["float8_e4m3fn"]
    assert (e4.p, e4.emin, e4.emax, e4.max_key, e4.has_inf) == (4, -6, 8, 0x7E, False)
    assert FORMATS["bfloat16"].max_key == 0x7F80
    with pytest.raises(TypeError):
        float_format(np.int32)


@pytest.mark.parametrize("dtype", [F16, np.float32, np.float64])
def test_ulp_diff_of_large_broadcast_and_strided_inputs_is_that_of_their_elements(dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((600, 1000)).astype(dtype)
    a[::97, ::89] = np.nan
    b = np.nextafter(a, dtype(np.inf))[:, ::-1]  # a reversed (strided) view
    row = rng.standard_normal(1000).astype(dtype)  # broadcast against every row
    d, s = ulp_diff(a, b, return_status=True)
    assert d.shape == s.shape == a.shape
    for i in (0, 97, 599):
        di, si = ulp_diff(a[i].copy(), b[i].copy(), return_status=True)
        assert np.array_equal(d[i], di) and np.array_equal(s[i], si)
    assert np.array_equal(ulp_diff(a, row)[5], ulp_diff(a[5], row))
