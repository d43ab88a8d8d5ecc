"""error_stats and the named metrics: exact definitions, streaming, special values."""

import json
import math
import pickle

import ml_dtypes
import numpy as np
import pytest
from refscript import reference_trio

from fpinspect.numerics import accumulate, error_stats, pair_metrics, ulp_diff, ulp_error
from fpinspect.numerics.quantiles import RealQuantiles

rng = np.random.default_rng(1234)


def noisy_pair(n=50_000, dtype=np.float16):
    ref = rng.standard_normal(n).astype(dtype)
    x = (ref.astype(np.float32) * (1 + rng.uniform(-2e-3, 2e-3, n))).astype(dtype)
    return x, ref


def inverted_cdf(v, q):
    return float(np.percentile(v, q, method="inverted_cdf"))


def test_same_dtype_stats_match_direct_numpy():
    x, ref = noisy_pair()
    s = error_stats(x, ref)
    ad = np.abs(x.astype(np.float64) - ref.astype(np.float64))
    d = ulp_diff(x, ref).astype(np.int64)
    assert s.count == s.finite == x.size
    assert s.abs.max == ad.max() and s.abs.mean == pytest.approx(ad.mean(), rel=1e-12)
    assert s.abs.p50 == inverted_cdf(ad, 50) and s.abs.p99 == inverted_cdf(ad, 99)
    assert s.ulp.kind == "diff"
    assert (s.ulp.max, s.ulp.p50, s.ulp.p99) == (
        d.max(),
        inverted_cdf(d, 50),
        inverted_cdf(d, 99),
    )
    assert s.ulp.exact and s.abs.exact
    share = s.ulp.share
    assert share.zero == pytest.approx(np.mean(d == 0)) and share.two_or_more == pytest.approx(
        np.mean(d >= 2)
    )
    assert share.zero + share.one + share.two_or_more == pytest.approx(1.0)
    assert s.bit_equal == int(np.sum(x.view(np.uint16) == ref.view(np.uint16)))
    assert s.ulp.argmax == [int(np.argmax(d))]
    tiny = np.finfo(np.float16).smallest_normal
    ok = np.abs(ref.astype(np.float64)) >= tiny
    rel = ad[ok] / np.abs(ref.astype(np.float64))[ok]
    assert s.rel.max == rel.max() and s.rel.excluded == int((~ok).sum())


def test_against_fp64_reference_uses_real_valued_ulp_error():
    ref = rng.uniform(-4, 4, 10_000)
    x = ref.astype(np.float16)
    s = error_stats(x, ref)
    assert s.ulp.kind == "error" and s.ulp.dtype == "float16"
    assert s.ulp.max == pytest.approx(ulp_error(x, ref).max()) and s.ulp.max <= 0.5
    assert s.bit_equal is None


def test_special_values_are_counted_and_kept_out():
    x = np.array([1, np.nan, np.nan, np.inf, np.inf, 2, 0.0, 5], dtype=np.float16)
    r = np.array([1, np.nan, 3, np.inf, 4, -np.inf, -0.0, 5.01], dtype=np.float16)
    s = error_stats(x, r)
    assert (s.both_nan, s.nan_mismatch, s.both_inf, s.inf_mismatch) == (1, 1, 1, 2)
    assert s.finite == 3 and s.signed_zero == 1
    assert s.ulp.max == int(ulp_diff(x[7:], r[7:])[0])
    assert math.isfinite(s.abs.max)


def test_error_stats_is_a_frozen_value_that_pickles_and_writes_the_report_keys():
    """Readers use attributes; pools pickle it; ``to_json`` is the JSON reports' shape."""
    x, ref = noisy_pair(2000)
    s = error_stats(x, ref)
    assert pickle.loads(pickle.dumps(s)) == s
    with pytest.raises(AttributeError):
        s.count = 0
    j = json.loads(json.dumps(s.to_json()))
    assert list(j) == [
        *("count", "dtype", "ref_dtype", "finite", "bit_equal", "abs", "rel", "ulp"),
        *("nan_mismatch", "inf_mismatch", "both_nan", "both_inf", "signed_zero", "normwise"),
    ]
    assert list(j["ulp"]) == ["kind", "dtype", "max", "argmax", "mean", "p50", "p99", "exact", "share"]
    assert j["ulp"]["share"] == {"0": s.ulp.share.zero, "1": s.ulp.share.one, ">=2": s.ulp.share.two_or_more}
    assert list(j["rel"])[-2:] == ["count", "excluded"] and j["abs"]["argmax"] == s.abs.argmax


def test_chunked_and_threaded_passes_agree_with_one_pass():
    x, ref = noisy_pair(300_000)
    one = accumulate(x, ref)
    many = accumulate(x, ref, chunk=4096, jobs=2)
    a, b = one.error_stats().to_json(), many.error_stats().to_json()
    for key in ("abs", "rel", "ulp"):
        for stat in ("max", "p50", "p99", "argmax"):
            assert a[key][stat] == b[key][stat], (key, stat)
        assert a[key]["mean"] == pytest.approx(b[key]["mean"], rel=1e-10)
    w1, w2 = accumulate(x, ref, worst=10), accumulate(x, ref, chunk=4096, jobs=2, worst=10)
    assert (
        w1.worst_index.tolist() == w2.worst_index.tolist()
        and w1.worst_score.tolist() == w2.worst_score.tolist()
    )
    ma, mb = pair_metrics(x, ref), pair_metrics(x, ref, jobs=2)
    for k in ma:
        assert ma[k] == pytest.approx(mb[k], rel=1e-9, abs=1e-15), k


def test_memmap_input_larger_than_a_chunk(tmp_path):
    x, ref = noisy_pair(2_500_000)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "r.npy", ref)
    mx = np.load(tmp_path / "x.npy", mmap_mode="r")
    mr = np.load(tmp_path / "r.npy", mmap_mode="r")
    assert error_stats(mx, mr) == error_stats(x, ref)


def _flat(d, prefix=""):
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k: v})
    return out


def _npy_file(path):
    from fpinspect.numerics.chunks import NpyFile

    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        return NpyFile(path, shape, dtype, fortran, f.tell())


def test_file_readers_reuse_their_buffers_and_agree_with_arrays(tmp_path):
    """Chunks read from files into one buffer per thread, refilled chunk after chunk: the
    statistics, worst elements and KL (a second read) equal those of the arrays in memory."""
    x, ref = noisy_pair(300_000)
    x[[5, 70_001]] = np.nan
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "r.npy", ref)
    fx, fr = _npy_file(tmp_path / "x.npy"), _npy_file(tmp_path / "r.npy")
    want = accumulate(x, ref, chunk=40_000, worst=5, kl=True)
    for jobs in (1, 2):
        got = accumulate(fx, fr, chunk=40_000, worst=5, kl=True, jobs=jobs)
        g, w = _flat(got.error_stats().to_json()), _flat(want.error_stats().to_json())
        assert g.keys() == w.keys()
        for k in w:  # sums in another order on two threads
            assert g[k] == (pytest.approx(w[k], rel=1e-12) if k.endswith("mean") else w[k]), k
        assert got.worst_index.tolist() == want.worst_index.tolist()
        assert got.kl == pytest.approx(want.kl, rel=1e-9)


def test_percentiles_beyond_the_exact_cap_stay_within_the_sketch_bound():
    v = rng.lognormal(0, 3, 200_000)
    q = RealQuantiles(cap=10_000)
    for part in np.array_split(v, 20):
        q.add(part)
    assert not q.exact
    for got, p in zip(q.percentiles([50, 99]), (50, 99)):
        assert got == pytest.approx(inverted_cdf(v, p), rel=0.005)


def _apart(ref: np.ndarray, steps) -> np.ndarray:
    """``ref`` (positive float64) moved up by ``steps`` representable values each."""
    return (ref.view(np.uint64) + np.asarray(steps, dtype=np.uint64)).view(np.float64)


def test_integer_ulp_percentiles_are_exact_in_range_and_a_bin_edge_beyond():
    ref = np.linspace(1.0, 2.0, 7)
    u = error_stats(_apart(ref, [0, 0, 0, 1, 1, 2, 5]), ref).ulp
    assert (u.kind, u.p50, u.p99, u.exact) == ("diff", 1, 5, True)
    ref = np.full(3, 1.0)
    u = error_stats(_apart(ref, [1, 2**40, 2**40 + 5]), ref).ulp
    assert (u.p99, u.exact, u.max) == (2**40, False, 2**40 + 5)


@pytest.mark.parametrize("n", [1, 2, 5, 33, 64, 65, 700])
def test_percentiles_of_few_and_many_values_are_the_inverted_cdf(n):
    """Exact percentiles, found in Python lists for a few values and bins (a small pair) and by
    numpy and the compiled selection for more: both the ``inverted_cdf`` one, with elements
    that did not count (NaN on a side) among the kept values, and ULP distances past the bins
    a list is used for."""
    x, ref = noisy_pair(n)
    x[: n // 3] = ref[: n // 3]  # ties at 0
    if n > 4:
        x[1], ref[3] = np.nan, np.inf  # not counted: NaN among the kept values
        x[2] = ref[2] + np.float16(0.25) * (n > 64)  # far apart: distances past 64 bins
    s = accumulate(x, ref)
    fin = np.isfinite(x) & np.isfinite(ref)
    xf, rf = x[fin].astype(np.float64), ref[fin].astype(np.float64)
    dist = ulp_diff(x[fin], ref[fin]).astype(np.float64)
    qs = (0, 1, 50, 99, 100, 50)  # unordered and repeated too
    got = {
        "abs": s.abs_quantiles.percentiles(qs),
        "ulp": [v for v, _ in s.ulp_hist.percentiles(qs)],
        "rel": s.rel_quantiles.percentiles(qs),
    }
    rel_ok = np.abs(rf) >= float(np.finfo(np.float16).tiny)
    rel = np.abs(xf - rf)[rel_ok] / np.abs(rf[rel_ok])
    for block, values in (("abs", np.abs(xf - rf)), ("ulp", dist), ("rel", rel)):
        assert got[block] == [inverted_cdf(values, q) for q in qs], block
    assert (s.ulp_hist.max >= 64) == (n > 64)


def test_bfloat16_and_fp8_inputs():
    ref = rng.standard_normal(1000).astype(ml_dtypes.bfloat16)
    x = (ref.astype(np.float32) * 1.01).astype(ml_dtypes.bfloat16)
    s = error_stats(x, ref)
    assert s.ulp.dtype == "bfloat16" and s.ulp.max >= 1
    e = rng.uniform(-400, 400, 1000).astype(ml_dtypes.float8_e4m3fn)
    assert error_stats(e, e).ulp.max == 0


# -- named metrics against their definitions -------------------------------------------------


def kl_divergence(x, y) -> float | None:
    return pair_metrics(x, y)["kl"]


def test_reference_trio_parity():
    x, ref = noisy_pair(100_000)
    cos, mabs, mrel = reference_trio(x, ref)
    m = pair_metrics(x, ref, kl=False)
    assert m["cosine"] == pytest.approx(cos, rel=1e-13)
    assert (m["max_abs"], m["max_rel"]) == (mabs, mrel)


def test_reference_trio_propagates_nan_like_the_script():
    x = np.array([1.0, np.nan], np.float32)
    m = pair_metrics(x, x)
    assert math.isnan(m["cosine"]) and math.isnan(m["max_abs"]) and math.isnan(m["max_rel"])


def test_msaccucmp_definitions():
    x = np.array([1.0, 2.0, 0.5, -3.0, 0.0])
    y = np.array([1.1, 0.0, 0.5, -2.0, 1e-20])
    eps = np.finfo(np.float64).eps
    big = np.abs(y) > eps
    r = np.where(big, np.abs(x / np.where(big, y, 1) - 1), 0)
    m = pair_metrics(x, y)
    assert m["accumulated_rel"] == pytest.approx(r.sum())
    assert m["mean_rel"] == pytest.approx(r.mean())
    assert m["max_rel_msaccucmp"] == pytest.approx(r.max())
    assert m["rmse"] == pytest.approx(np.sqrt(np.mean((x - y) ** 2)))
    assert m["mean_abs"] == pytest.approx(np.mean(np.abs(x - y)))
    assert m["red"] == pytest.approx(np.sqrt(np.sum((x - y) ** 2) / np.sum(y**2)))
    assert m["std_x"] == pytest.approx(np.std(x)) and m["mean_y"] == pytest.approx(np.mean(y))
    assert m["mean_x"] == pytest.approx(np.mean(x)) and m["std_y"] == pytest.approx(np.std(y))
    # msprobe's ratios: |x - y| / |y| (eps32 for y = 0) below 0.001: only 0.5 vs 0.5; below
    # 0.005 also none more (the others differ by 10% or more)
    assert (m["one_thousandth"], m["five_thousandth"]) == (1 / 5, 1 / 5)


def test_kl_matches_its_definition():
    x = rng.uniform(0, 1, 5000)
    y = x + rng.normal(0, 0.01, 5000)
    eps32 = np.finfo(np.float32).eps

    def dist(v):
        c = np.maximum((v - v.min()) / (v.max() - v.min()), eps32)
        return c / c.sum()

    p, q = dist(x), dist(y)
    assert kl_divergence(x, y) == pytest.approx(np.sum(p * np.log(p / q)), rel=1e-7)
    assert kl_divergence(x, x) == 0.0


def test_kl_of_a_constant_side_and_of_a_range_too_small_to_invert():
    """A constant side is uniform (p = 1, as msaccucmp's); a range of a few subnormals has no
    finite inverse, and its p is scaled instead of multiplied by 1 / range (inf): the same KL."""
    eps32 = np.finfo(np.float32).eps
    y = rng.uniform(0, 1, 5000)
    q = np.maximum((y - y.min()) / (y.max() - y.min()), eps32)
    q = q / q.sum()
    assert kl_divergence(np.full(5000, 3.0), y) == pytest.approx(
        np.sum(np.log((1 / 5000) / q)) / 5000, rel=1e-12
    )
    tiny = rng.integers(0, 4, 5000) * 5e-324  # 0 .. 3 * 2**-1074: the range is 1.5e-323
    p = np.maximum(tiny / tiny.max(), eps32)
    p = p / p.sum()
    assert kl_divergence(tiny, y) == pytest.approx(np.sum(p * np.log(p / q)), rel=1e-9)


def test_error_kind_share_tolerates_the_references_own_rounding():
    # x * fp16(0.7) is often exactly 1 ULP from x * 0.7, but float64 says 1.0000000000002
    x = np.random.default_rng(5).uniform(-1, 1, 100_000).astype(np.float16)
    s = error_stats(x * np.float16(0.7), x.astype(np.float64) * 0.7)
    assert s.ulp.share.two_or_more == 0.0
    assert s.ulp.max > 1.0  # the raw value is still reported


def test_compact_keeps_results_and_drops_the_bulk():
    x, ref = noisy_pair(3_000_000)
    st = accumulate(x, ref)
    before = st.error_stats()
    st.compact()
    assert st.error_stats() == before
    assert st.abs_quantiles is None and st.rel_quantiles is None
    assert st.ulp_hist.exact.nbytes <= 64 * 8 and st.ulp_hist.percentiles([99]) == [(before.ulp.p99, True)]


def _check_against_definitions(x, ref, st):
    """Every count, maximum, percentile and the worst elements of ``st`` by their definitions."""
    x64, y64 = x.astype(np.float64), ref.astype(np.float64)
    fin = np.isfinite(x64) & np.isfinite(y64)
    ad = np.abs(x64 - y64)[fin]
    es = st.error_stats().to_json()
    assert (es["count"], es["finite"]) == (x.size, int(fin.sum()))
    assert es["nan_mismatch"] == int((np.isnan(x64) ^ np.isnan(y64)).sum())
    assert es["abs"]["max"] == ad.max() and es["abs"]["mean"] == pytest.approx(ad.mean(), rel=1e-12)
    assert es["abs"]["p50"] == inverted_cdf(ad, 50) and es["abs"]["p99"] == inverted_cdf(ad, 99)
    for got, p in zip(st.abs_quantiles.percentiles((50, 90, 99, 100)), (50, 90, 99, 100)):
        assert got == inverted_cdf(ad, p)
    if st.same:
        d = ulp_diff(x, ref)[fin].astype(np.int64)
        assert (
            np.pad(st.ulp_hist.exact, (0, (1 << 16) - st.ulp_hist.exact.size)).tolist()
            == np.bincount(d, minlength=1 << 16).tolist()
            and st.ulp_hist.n == d.size
        )
        assert es["ulp"]["max"] == d.max() and es["ulp"]["p99"] == inverted_cdf(d, 99)
        score = np.where(fin, ulp_diff(x, ref).astype(np.float64), np.inf)
        score[np.isnan(x64) & np.isnan(y64)] = -1
        order = np.lexsort((np.arange(x.size), -score))[: st.worst_index.size]
        assert st.worst_index.tolist() == order.tolist()
    else:
        assert es["ulp"]["p50"] == inverted_cdf(ulp_error(x, ref)[fin], 50)


def _pairs_of_every_kind():
    """Pairs that differ in size, format and error (ULP distances up to ~2**10, NaN, worst
    elements)."""
    for n, dtype, ref_dtype, spread in (
        (40_000, np.float16, np.float16, 0.3),
        (3_001, np.float16, np.float16, 1e-3),
        (70_000, np.float32, np.float32, 1e-5),
        (512, ml_dtypes.bfloat16, ml_dtypes.bfloat16, 0.0),
        (20_000, np.float16, np.float64, 1e-2),
        (9_000, np.float16, np.float16, 0.05),
    ):
        ref = rng.standard_normal(n).astype(ref_dtype)
        x = (ref.astype(np.float64) * (1 + rng.uniform(-spread, spread, n))).astype(dtype)
        x[rng.integers(0, n, 3)] = np.nan
        yield x, ref


def test_pairs_of_every_kind_equal_their_definitions_on_one_thread_and_four():
    """Pairs of different sizes and formats in turn, in one thread and in four at once (the
    statistics keep no state between pairs): each equals its definitions."""
    from concurrent.futures import ThreadPoolExecutor

    pairs = list(_pairs_of_every_kind())

    def run(pair):
        x, ref = pair
        st = accumulate(x, ref, worst=6)
        _check_against_definitions(x, ref, st)
        st.compact()
        return True

    for _ in range(2):
        assert all(run(p) for p in pairs)
    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(run, pairs * 4))


@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 1, 4), (2, 3, 4, 5)])
def test_unravel_is_numpys_unravel_index(shape):
    from fpinspect.numerics.chunks import unravel

    for flat in range(math.prod(shape)):
        assert unravel(flat, shape) == [int(i) for i in np.unravel_index(flat, shape)]
