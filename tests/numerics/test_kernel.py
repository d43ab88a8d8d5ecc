"""The compiled pass against direct numpy definitions, on the paths the plain parity tests
do not reach: blocks holding special values, the sketch (more than 2**21 elements), every
storage width, distances of 4 and more, worst elements across threads, a read-only install."""

import math
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from refscript import reference_trio

from fpinspect.numerics import accumulate, error_stats, pair_metrics, ulp_diff, ulp_error
from fpinspect.numerics.kernels import BLOCK

rng = np.random.default_rng(7)


def definitions(x, y):
    """The statistics by their definitions, in float64 over the elements finite on both sides."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    fin = np.isfinite(x64) & np.isfinite(y64)
    xf, yf = x64[fin], y64[fin]
    ad = np.abs(xf - yf)
    return fin, xf, yf, ad


def with_specials(x, y, every=997):
    """NaN / inf sprinkled on both sides, some matching, some not, across many blocks."""
    x, y = x.copy(), y.copy()
    idx = np.arange(3, x.size, every)
    kinds = idx % 5
    x[idx[kinds == 0]] = np.nan
    x[idx[kinds == 1]] = np.nan
    y[idx[kinds == 1]] = np.nan
    y[idx[kinds == 2]] = np.inf
    x[idx[kinds == 3]] = -np.inf
    y[idx[kinds == 3]] = -np.inf
    x[idx[kinds == 4]] = np.inf
    y[idx[kinds == 4]] = -np.inf
    return x, y


@pytest.mark.parametrize(
    "dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, ml_dtypes.float8_e5m2]
)
def test_every_width_matches_the_definitions_with_special_values(dtype):
    n = 20 * BLOCK + 77
    ref = rng.standard_normal(n).astype(dtype)
    spread = rng.choice([1.0, 1.003, 1.02, 0.9], n)  # distances of 0, 1, a few and many ULPs
    x = (ref.astype(np.float64) * spread).astype(dtype)
    x, ref = with_specials(x, ref)
    s = error_stats(x, ref)
    fin, xf, yf, ad = definitions(x, ref)
    d = ulp_diff(x, ref).astype(np.float64)[fin]
    assert s.finite == int(fin.sum())
    nx, ny = np.isnan(x.astype(np.float64)), np.isnan(ref.astype(np.float64))
    assert (s.both_nan, s.nan_mismatch) == (int((nx & ny).sum()), int((nx ^ ny).sum()))
    assert s.both_inf + s.inf_mismatch + s.both_nan + s.nan_mismatch == n - s.finite
    assert s.abs.max == ad.max() and s.abs.argmax == [int(np.flatnonzero(fin)[np.argmax(ad)])]
    assert s.abs.mean == pytest.approx(ad.mean(), rel=1e-12)
    assert s.ulp.max == d.max() and s.ulp.mean == pytest.approx(d.mean(), rel=1e-12)
    p99 = float(np.percentile(d, 99, method="inverted_cdf"))
    if s.ulp.exact:
        assert s.ulp.p99 == p99
    else:  # beyond 2**16 ULP: the lower edge of the log2 bin holding it
        assert s.ulp.p99 <= p99 < 2 * s.ulp.p99
    ok = np.abs(yf) >= float(ml_dtypes.finfo(dtype).smallest_normal)
    assert s.rel.max == (ad[ok] / np.abs(yf[ok])).max() and s.rel.excluded == int((~ok).sum())
    assert s.bit_equal == int((x.view(f"u{x.itemsize}") == ref.view(f"u{x.itemsize}")).sum())


def test_the_script_trio_propagates_nan_and_the_moments_stay_exact_far_from_zero():
    ref = 1000.0 + rng.standard_normal(50_000) * 1e-3
    x = ref + rng.standard_normal(50_000) * 1e-6
    m = pair_metrics(x, ref)
    assert m["std_y"] == pytest.approx(np.std(ref), rel=1e-9) and m["mean_x"] == pytest.approx(
        np.mean(x), rel=1e-12
    )
    assert m["max_abs"] == np.abs(x - ref).max()
    x[1234] = np.nan
    m = pair_metrics(x, ref)
    assert math.isnan(m["max_abs"]) and math.isnan(m["max_rel"]) and math.isnan(m["cosine"])
    assert m["std_x"] == pytest.approx(np.std(np.delete(x, 1234)), rel=1e-9)


def test_sketch_path_beyond_the_exact_cap_stays_within_its_bound():
    n = (1 << 21) + 5000
    ref = rng.standard_normal(n).astype(np.float32)
    x = (ref.astype(np.float64) * (1 + rng.uniform(-1e-3, 1e-3, n))).astype(np.float32)
    s = error_stats(x, ref.astype(np.float64))
    assert not s.abs.exact and s.ulp.kind == "error"
    err = ulp_error(x, ref.astype(np.float64))
    ad = np.abs(x.astype(np.float64) - ref)
    for block, values in (("abs", ad), ("ulp", err)):
        for p in (50, 99):
            assert getattr(getattr(s, block), f"p{p}") == pytest.approx(
                float(np.percentile(values, p, method="inverted_cdf")), rel=0.005
            )
    assert s.ulp.max == err.max() and s.abs.max == ad.max()


def test_worst_elements_and_maxima_agree_across_chunks_and_threads():
    n = 300_000
    ref = rng.standard_normal(n).astype(np.float16)
    x = (ref.astype(np.float32) * rng.choice([1.0, 1.002, 1.01], n)).astype(np.float16)
    x, ref = with_specials(x, ref, every=30_011)
    one = accumulate(x, ref, worst=12)
    many = accumulate(x, ref, worst=12, jobs=2, chunk=5000)
    assert one.worst_index.tolist() == many.worst_index.tolist()
    assert one.worst_score.tolist() == many.worst_score.tolist()
    assert np.isinf(one.worst_score[: one.nan_mismatch + one.inf_mismatch]).all()
    d = ulp_diff(x, ref).astype(np.float64)
    fin = np.isfinite(x.astype(np.float64)) & np.isfinite(ref.astype(np.float64))
    finite_scores = one.worst_score[np.isfinite(one.worst_score)]
    assert finite_scores[0] == d[fin].max()
    for name in ("max_abs_index", "max_rel_index", "max_ulp_index", "bit_equal", "below_one_thousandth"):
        assert getattr(one, name) == getattr(many, name), name
    assert one.sum_abs_diff == pytest.approx(many.sum_abs_diff, rel=1e-12)


def test_integer_inputs_are_compared_as_float64():
    a = np.arange(-500, 500, dtype=np.int32)
    b = a + (a % 7 == 0)
    s = error_stats(a, b)
    assert s.abs.max == 1.0 and s.ulp.kind == "error" and s.finite == a.size


def test_compiled_kernels_work_from_a_read_only_install(tmp_path):
    """A copy of the package in a read-only folder: numba caches in the user's cache folder (and
    the next process loads the pass from there), and with no writable cache folder at all it
    compiles in memory; either way the pass runs.

    Read-only by permission bits, and by a file standing where each ``__pycache__`` folder would
    go (root ignores permission bits; nobody can create a folder where a file is)."""
    src = os.path.dirname(os.path.dirname(os.path.abspath(__import__("fpinspect").__file__)))
    site = tmp_path / "site"
    shutil.copytree(
        os.path.join(src, "fpinspect"), site / "fpinspect", ignore=shutil.ignore_patterns("__pycache__")
    )
    for root, _dirs, _ in os.walk(site / "fpinspect"):
        (Path(root) / "__pycache__").write_text("not a folder")
    for root, dirs, files in os.walk(site):
        for name in files:
            os.chmod(os.path.join(root, name), 0o444)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    (tmp_path / "blocked").write_text("a file, so no cache folder can be made below it")
    # The whole pass once (its compile is cached); without any cache folder, a small kernel
    # (compiling the whole pass twice would cost this test a minute on two cores).
    whole = f"""
        import numpy as np
        import fpinspect.numerics.stats as st
        assert st.__file__.startswith({str(site)!r}), st.__file__
        a = np.linspace(-2, 2, 5000).astype(np.float16)
        s = st.error_stats(a, (a.astype(np.float32) * 1.001).astype(np.float16))
        k = st.K.fused_pass.stats
        print(s.ulp.max, s.ulp.p99, sum(k.cache_hits.values()), sum(k.cache_misses.values()))
    """
    small = """
        import numpy as np
        from fpinspect.numerics import kernels, stats
        buckets = np.zeros(kernels.SKETCH_BUCKETS, np.int64)
        kernels.sketch_add(np.array([0.0, 1.0, 1.0]), buckets)
        print(buckets.sum(), buckets[kernels.sketch_key(1.0)])
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    runs = {}
    try:
        for label, code, cache in (
            ("user cache", whole, tmp_path / "cache"),
            ("user cache, again", whole, tmp_path / "cache"),
            ("nothing writable", small, tmp_path / "blocked" / "cache"),
        ):
            env.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(site))
            out = subprocess.run(
                [sys.executable, "-c", textwrap.dedent(code)],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp_path,
            )
            assert out.returncode == 0, (label, out.stderr[-3000:])
            runs[label] = out.stdout.split()
    finally:
        for root, dirs, _ in os.walk(site):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        os.chmod(site, 0o755)
    # compiled and cached by the first run (a miss), loaded from there (a hit) by the second
    assert runs["user cache"] == ["2", "2", "0", "1"], runs
    assert runs["user cache, again"] == ["2", "2", "1", "0"]
    assert runs["nothing writable"] == ["3", "2"]
    assert any(p.endswith(".nbi") for _, _, fs in os.walk(tmp_path / "cache") for p in fs)  # cached there


@pytest.mark.parametrize(
    "dtype",  # each way kl_pass decodes: float16 and bfloat16 bits, a decode table, float views
    [np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e5m2, np.float32, np.float64],
)
def test_kl_is_the_same_from_the_chunk_in_memory_and_from_a_second_read(dtype):
    ref = rng.uniform(-3, 5, 70_000).astype(dtype)
    x = (ref.astype(np.float64) + rng.normal(0, 0.01, ref.size)).astype(dtype)
    x, ref = with_specials(x, ref, every=4999)
    in_memory = accumulate(x, ref, kl=True).kl
    reread = accumulate(x, ref, kl=True, chunk=4096, jobs=2).kl
    fin, xf, yf, _ = definitions(x, ref)
    eps32 = np.finfo(np.float32).eps
    p = np.maximum((xf - xf.min()) / (xf.max() - xf.min()), eps32)
    q = np.maximum((yf - yf.min()) / (yf.max() - yf.min()), eps32)
    p, q = p / p.sum(), q / q.sum()
    assert in_memory == pytest.approx(reread, rel=1e-9) and in_memory == pytest.approx(
        np.sum(p * np.log(p / q)), rel=1e-7
    )


def test_sketches_and_ulp_histogram_count_every_element_exactly_on_the_sketch_path():
    """Beyond the exact cap: the ULP histogram bin by bin (distances at and around the small
    table's edge, far ones, special values in some blocks) and the abs / rel sketches bucket by
    bucket (half the errors exactly zero, the commonest key) equal counting the definitions."""
    from fpinspect.numerics.kernels import SKETCH_BUCKETS, SMALL_DIST, sketch_add
    from fpinspect.numerics.stats import accumulate

    n = (1 << 21) + 3 * BLOCK + 5
    ref = rng.uniform(1, 2, n).astype(np.float16)
    steps = rng.choice([0, 0, 1, 2, SMALL_DIST - 1, SMALL_DIST, SMALL_DIST + 1, 300], n)
    x = (ref.view(np.uint16) + steps.astype(np.uint16)).view(np.float16)
    x[rng.integers(0, n, 50)] = -x[rng.integers(0, n, 50)]  # far apart: opposite signs
    x, ref = with_specials(x, ref, every=40_009)
    s = accumulate(x, ref)
    fin, xf, yf, ad = definitions(x, ref)
    d = ulp_diff(x, ref)[fin].astype(np.int64)
    assert s.ulp_hist.exact.tolist() == np.bincount(d, minlength=1 << 16).tolist()
    for got, values in ((s.abs_quantiles, ad), (s.rel_quantiles, ad / np.abs(yf))):
        want = np.zeros(SKETCH_BUCKETS, np.int64)
        sketch_add(values, want)
        assert got.buckets.tolist() == want.tolist() and got.n == values.size


@pytest.mark.parametrize(
    "put",
    [
        {},  # all finite
        {7: (np.inf, 1.0)},  # one infinity against a number
        {7: (np.inf, np.inf), BLOCK + 3: (-np.inf, -np.inf)},  # equal infinities
        {7: (np.inf, -np.inf)},
        {BLOCK - 1: (np.nan, 2.0), 2 * BLOCK: (1.0, np.inf)},
    ],
)
def test_the_script_trio_takes_the_special_values_of_a_block_as_the_script_does(put):
    """The trio runs over all elements: the finite ones in the vector loops, the others where
    the special values are counted; max |ref| (normwise) stays over the finite ones."""
    ref = rng.standard_normal(3 * BLOCK + 11) * 3
    x = ref * (1 + rng.uniform(-1e-3, 1e-3, ref.size))
    ref[100] = -50.0  # the largest |ref|, at the low end
    for i, (xi, yi) in put.items():
        x[i], ref[i] = xi, yi
    m = pair_metrics(x, ref)
    with np.errstate(invalid="ignore", over="ignore"):
        want = reference_trio(x, ref)
    for got, w in zip((m["cosine"], m["max_abs"], m["max_rel"]), want):
        assert (math.isnan(got) and math.isnan(w)) or got == pytest.approx(w, rel=1e-12), (got, w)
    s = error_stats(x, ref)
    fin = np.isfinite(x) & np.isfinite(ref)
    assert s.normwise == np.abs(x[fin] - ref[fin]).max() / 50.0


@pytest.mark.parametrize("n", [20 * BLOCK + 77, (1 << 21) + 3 * BLOCK])  # kept values; the sketch
def test_blocks_equal_bit_for_bit_skip_their_errors_and_count_the_same(n):
    """Blocks whose sides are equal bit for bit (some holding NaN, inf, -0 or subnormals on
    both sides) beside blocks that differ, one by a single +0 / -0: everything equals the
    definitions, the ULP histogram and the sketches bin by bin."""
    from fpinspect.numerics.kernels import SKETCH_BUCKETS, sketch_add

    ref = rng.standard_normal(n).astype(np.float16)
    ref[BLOCK + 5 : BLOCK + 40] = np.float16(3e-6)  # subnormal: excluded from rel
    x = ref.copy()
    x[2 * BLOCK + 3], ref[2 * BLOCK + 3] = np.nan, np.nan
    x[2 * BLOCK + 4] = ref[2 * BLOCK + 4] = np.inf
    x[3 * BLOCK + 9] = ref[3 * BLOCK + 9] = -0.0
    x[4 * BLOCK + 1], ref[4 * BLOCK + 1] = 0.0, -0.0  # equal values, not equal bits
    differ = np.arange(5 * BLOCK, 7 * BLOCK)
    x[differ] = (ref[differ].astype(np.float32) * 1.003).astype(np.float16)
    x[-BLOCK:] = (ref[-BLOCK:].astype(np.float32) * 0.99).astype(np.float16)
    s = accumulate(x, ref, worst=4)
    es = s.error_stats().to_json()
    fin, xf, yf, ad = definitions(x, ref)
    d = ulp_diff(x, ref)[fin].astype(np.int64)
    assert (es["finite"], es["bit_equal"], es["signed_zero"]) == (
        int(fin.sum()),
        int((x.view(np.uint16) == ref.view(np.uint16)).sum()),
        1,
    )
    assert (es["both_nan"], es["both_inf"], es["nan_mismatch"], es["inf_mismatch"]) == (1, 1, 0, 0)
    assert es["abs"]["max"] == ad.max() and es["abs"]["argmax"] == [int(np.flatnonzero(fin)[np.argmax(ad)])]
    assert es["ulp"]["max"] == d.max() and es["ulp"]["argmax"] == [int(np.flatnonzero(fin)[np.argmax(d)])]
    # every distance is below 2**16: the histogram (trimmed on the kept-values path) holds them all
    assert (
        np.pad(s.ulp_hist.exact, (0, (1 << 16) - s.ulp_hist.exact.size)).tolist()
        == np.bincount(d, minlength=1 << 16).tolist()
        and s.ulp_hist.n == d.size
    )
    ok = np.abs(yf) >= float(np.finfo(np.float16).tiny)
    rel = ad[ok] / np.abs(yf[ok])
    assert es["rel"]["count"] == int(ok.sum()) and es["rel"]["max"] == rel.max()
    assert es["rel"]["mean"] == pytest.approx(rel.mean(), rel=1e-12)
    assert (s.min_x, s.max_x, s.min_y, s.max_y) == (xf.min(), xf.max(), yf.min(), yf.max())
    q = np.where(np.abs(yf) > 0, ad / np.where(yf == 0, 1, np.abs(yf)), ad / np.finfo(np.float32).eps)
    assert s.below_one_thousandth == int((q < 0.001).sum())
    assert s.below_five_thousandths == int((q < 0.005).sum())
    big = np.abs(yf) > np.finfo(np.float64).eps
    assert s.msaccucmp_max_rel == (ad[big] / np.abs(yf[big])).max()
    for p in (50, 99):
        assert es["abs"][f"p{p}"] == pytest.approx(
            float(np.percentile(ad, p, method="inverted_cdf")), rel=0.005, abs=1e-300
        )
    if not es["abs"]["exact"]:
        for got, values in ((s.abs_quantiles, ad), (s.rel_quantiles, rel)):
            want = np.zeros(SKETCH_BUCKETS, np.int64)
            sketch_add(values, want)
            assert got.buckets.tolist() == want.tolist()


@pytest.mark.parametrize(
    "values",
    [
        rng.random(30_001),  # spread out: one narrowing step
        rng.choice(
            rng.random(37), 32_768
        ),  # few distinct values (float16 abs errors): all equal within a bucket
        np.abs(rng.standard_normal(20_000)) * 10.0 ** rng.integers(-300, 300, 20_000),  # every binade
        np.concatenate([np.zeros(9_000), np.full(9_000, 5e-324), [np.inf, 1.0]]),  # ends of the range
        np.arange(100, dtype=np.float64),  # consecutive patterns: narrowed to a sort
        np.zeros(1_000),  # nothing but zeros
        np.r_[np.zeros(30_000), rng.random(3)],  # ranks among the zeros, bucket 0
        # most values in one bucket, not all equal: gathered without a branch, then narrowed
        np.r_[1 + rng.random(40_000) * 1e-9, np.full(20, 1e300), np.zeros(10)],
        np.r_[np.zeros(1_000), np.full(50_000, 0.5), np.full(9_000, np.nextafter(0.5, 1)), [7.0]],  # two ties
        # few values: about as many buckets as values (64 at least), narrowed the same way
        rng.random(5),
        rng.random(33),
        np.r_[1 + rng.random(700) * 1e-9, np.full(3, 1e300), np.zeros(4)],
    ],
)
def test_select_ranks_places_every_rank_as_a_sort(values):
    """The exact percentiles' selection against a full sort, ranks sharing a bucket included, in
    scratch that holds another call's leftovers (the kernel must not count on zeros there)."""
    from fpinspect.numerics.quantiles import select_ranks, select_scratch

    n = values.size
    ranks = np.unique(np.r_[0, 1, n // 2, n // 2 + 1, (99 * n) // 100, n - 2, n - 1]).astype(np.int64)
    out, work = select_scratch(n, ranks.size)
    out[:] = np.nan
    work[:] = 1 << 40
    got = select_ranks(rng.permutation(values).view(np.int64), ranks, out, work)
    assert got is out and got.tolist() == np.sort(values)[ranks].tolist()


def test_the_kl_pass_log_is_within_two_ulp_of_the_exact_log_of_p_over_q():
    """KL's branch-free ``log(p / q)``, compiled as the KL pass compiles it, over the range p and
    q take, [eps32, 1], against the exact value (decimal arithmetic, 40 digits): ratios far
    apart, next to 1 (KL's terms of nearly equal distributions, where rounding p / q first had
    cost ~1e-16 absolute) and at the edges of the range reduction (p / q near 3/2 and 2/3
    times a power of two, where its polynomial is used up to its end)."""
    import decimal

    import numba

    from fpinspect.numerics.kl import _KL_FASTMATH, _log_ratio

    @numba.njit(error_model="numpy", fastmath=_KL_FASTMATH)
    def logs(p, q):
        out = np.empty_like(p)
        for i in range(p.size):
            out[i] = _log_ratio(p[i], q[i])
        return out

    eps = float(np.finfo(np.float32).eps)
    n = 4_000
    p = np.exp(rng.uniform(math.log(eps), 0, 5 * n))
    q = np.concatenate(
        [
            np.exp(rng.uniform(math.log(eps), 0, n)),  # any ratio
            p[n : 2 * n] * (1 + rng.uniform(-1e-3, 1e-3, n)),  # next to 1
            p[2 * n : 3 * n] * (1 + rng.uniform(-1e-12, 1e-12, n)),
            p[3 * n : 4 * n] / (math.sqrt(2) * (1 + rng.uniform(-1e-9, 1e-9, n))),  # edges
            p[4 * n :]
            / (2.0 ** rng.integers(-20, 20, n) * math.sqrt(2) * (1 + rng.uniform(-1e-15, 1e-15, n))),
        ]
    )
    keep = (q >= eps) & (q <= 1)
    p, q = np.r_[p[keep], 1.0, eps, 1.0, 0.5], np.r_[q[keep], eps, 1.0, 1.0, 0.5]
    got = logs(p, q)
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        exact = np.array([float((decimal.Decimal(a) / decimal.Decimal(b)).ln()) for a, b in zip(p, q)])
    assert (p == q).sum() >= 2 and np.all(got[p == q] == 0.0)
    assert np.all(np.abs(got - exact) <= 2 * np.spacing(np.abs(exact)))


def test_kl_decodes_every_float16_and_bfloat16_pattern_exactly():
    """KL's decoding by integer arithmetic against numpy's and ml_dtypes' casts, for all 65 536
    patterns of each: subnormals, zeros of both signs, inf, NaN (as NaN)."""
    import numba

    from fpinspect.numerics.decode import _bfloat_value, _half_value

    @numba.njit(error_model="numpy")
    def decode(u, half):
        out = np.empty(u.size)
        for i in range(u.size):
            out[i] = _half_value(u[i]) if half else _bfloat_value(u[i])
        return out

    u = np.arange(1 << 16, dtype=np.uint64).astype(np.uint16)
    for dtype, half in ((np.float16, True), (ml_dtypes.bfloat16, False)):
        with np.errstate(invalid="ignore"):
            want = u.view(dtype).astype(np.float64)
        got = decode(u, half)
        nan = np.isnan(want)
        assert (np.isnan(got) == nan).all()
        assert got[~nan].view(np.uint64).tolist() == want[~nan].view(np.uint64).tolist()


def test_the_scalar_intrinsics_are_max_min_and_views():
    """``imax`` / ``imin`` take the values Python's ``max`` / ``min`` take (NaN on either side,
    -0 against +0, unsigned and mixed integers) and the bit casts equal numpy's views."""
    import numba

    from fpinspect.numerics.intrinsics import (
        bits_float,
        float_bits,
        float_ubits,
        from_order_key,
        imax,
        imin,
        order_key,
    )

    @numba.njit
    def pick(a, b):
        return imax(a, b), imin(a, b)

    @numba.njit
    def views(v, b):
        return float_bits(v), float_ubits(v), bits_float(b)

    floats = [0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan]
    for a in floats:
        for b in floats:
            got = pick(a, b)
            want = (max(a, b), min(a, b))
            assert [math.copysign(1, g) if g == 0 else g for g in got if g == g] == [
                math.copysign(1, w) if w == 0 else w for w in want if w == w
            ]
            assert [g != g for g in got] == [w != w for w in want]
    for a, b in [(np.uint64(2**63 + 5), np.uint64(7)), (np.int64(-3), np.int64(2)), (np.int64(-1), 2.5)]:
        assert pick(a, b) == (max(a, b), min(a, b))
    for v in [0.0, -0.0, 1e-310, -math.pi, math.inf, math.nan]:
        b = np.float64(v).view(np.int64)
        got = views(v, b)
        assert got[:2] == (int(b), int(np.float64(v).view(np.uint64)))
        assert np.float64(got[2]).view(np.int64) == b

    @numba.njit
    def keys(values):
        out = np.empty(values.size, dtype=np.int64)
        back = np.empty(values.size, dtype=np.float64)
        for i in range(values.size):
            out[i] = order_key(values[i])
            back[i] = from_order_key(out[i])
        return out, back

    ordered = np.array([-math.inf, -1e300, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, 1e300, math.inf])
    k, back = keys(ordered)
    assert (np.diff(k) > 0).all() and back.view(np.int64).tolist() == ordered.view(np.int64).tolist()


def test_kl_of_a_pair_one_ulp_apart_keeps_its_digits():
    """Fused against eager is mostly 0-1 ULP apart: KL ~1e-9, what is left of sums of ~1e6.
    Within 1e-6 of its definition summed exactly (whose own float64 rounding, normalising p and
    q and forming p / q, is ~5e-8 of KL) and within 1e-9 of the same KL with every sum exact
    and each log taken of (p - q) / q (``log(sum p) - log(sum q)`` had put KL 7.5e-6 off, the
    sums' rounding errors; the vectorised pass's reassociated sums do not)."""
    gen = np.random.default_rng(11)
    ref = gen.standard_normal(1 << 20).astype(np.float16)
    x = (ref * np.float16(1.001)).astype(np.float16)  # most elements unchanged, the rest 1 ULP
    xf, yf = x.astype(np.float64), ref.astype(np.float64)
    eps32 = np.finfo(np.float32).eps
    p = np.maximum((xf - xf.min()) / (xf.max() - xf.min()), eps32)
    q = np.maximum((yf - yf.min()) / (yf.max() - yf.min()), eps32)
    sum_p, sum_q = math.fsum(p), math.fsum(q)
    precise = math.fsum(p * np.log1p((p - q) / q)) / sum_p - math.log1p(math.fsum(p - q) / sum_q)
    p, q = p / sum_p, q / sum_q
    truth = math.fsum(p * np.log(p / q))
    assert 1e-10 < truth < 1e-8
    kl = accumulate(x, ref, kl=True).kl
    assert kl == pytest.approx(truth, rel=1e-6, abs=0) and kl == pytest.approx(precise, rel=1e-9, abs=0)
