"""The drill-down numbers: ULP histogram bins and where errors concentrate."""

from __future__ import annotations

import numpy as np
import pytest
from network import build_cast_and_flatten

from fpinspect.dumps.engine.compare import DumpComparison
from fpinspect.dumps.engine.drilldown import OFF_ULP, axis_names, error_profile, ulp_bins
from fpinspect.dumps.engine.pair import compare_arrays
from fpinspect.dumps.formats.npyio import open_npy
from fpinspect.numerics import ulp_diff, ulp_error
from fpinspect.numerics.chunks import NpyFile


@pytest.fixture
def pair():
    """float16 reference, a copy with row 17 scaled by 1.03 and one NaN at [3, 5]."""
    rng = np.random.default_rng(0)
    b = rng.standard_normal((64, 256)).astype(np.float16)
    a = b.copy()
    a[17] = (a[17].astype(np.float32) * 1.03).astype(np.float16)
    a[3, 5] = np.nan
    return a, b


def test_integer_bins_count_every_finite_element_in_log2_bins(pair):
    a, b = pair
    stats = compare_arrays(a, b).stats
    bins = ulp_bins(stats)
    d = ulp_diff(a, b)[np.isfinite(a) & np.isfinite(b)].astype(np.int64)
    assert bins.integer and bins.exact and bins.total == d.size
    assert bins.lower[:4] == (0.0, 1.0, 2.0, 4.0)
    for i, lo in enumerate(bins.lower):
        hi = 1 if i == 0 else 2 * lo
        assert bins.counts[i] == np.count_nonzero((d >= lo) & (d < hi)), i
    assert bins.counts[-1] > 0  # trailing empty bins are dropped


def test_large_integer_distances_land_in_the_log_bins():
    b = np.ones(8, np.float32)
    a = b.copy()
    a[0] = np.float32(3.0)  # about 2**23 ULP away
    bins = ulp_bins(compare_arrays(a, b).stats)
    k = int(ulp_diff(a[:1], b[:1])[0]).bit_length()
    assert bins.counts[0] == 7 and bins.counts[k] == 1 and bins.counts.size == k + 1


def test_real_valued_errors_bin_below_one_and_by_power_of_two(pair):
    a, b = pair
    ref = b.astype(np.float32)
    bins = ulp_bins(compare_arrays(a, ref).stats)
    e = ulp_error(a, ref, dtype=np.float16)
    e = e[np.isfinite(e)]
    assert not bins.integer and bins.total == e.size
    assert bins.counts[0] == np.count_nonzero(e == 0)
    assert bins.counts[1] == np.count_nonzero((e > 0) & (e < 1))
    assert bins.counts[2] == np.count_nonzero((e >= 1) & (e < 2))


def test_profile_finds_the_scaled_row(pair):
    a, b = pair
    stats = compare_arrays(a, b).stats
    prof = error_profile(a, b, stats)
    off = (ulp_diff(a, b) > OFF_ULP).sum()  # the NaN mismatch has the huge NaN distance: counted off too
    assert prof.off == off and prof.elements == a.size
    rows, cols = prof.axes
    assert (rows.name, rows.size, cols.name, cols.size) == ("row", 64, "column", 256)
    top = rows.hotspots(1)[0]
    assert (top.start, top.stop) == (17, 18) and top.share > 0.95
    assert rows.off.sum() == cols.off.sum() == prof.off
    assert np.isclose(rows.error_sum.sum(), cols.error_sum.sum())


def test_profile_reads_files_in_chunks_and_groups_long_axes(tmp_path):
    b = np.arange(5000, dtype=np.float32)
    a = b.copy()
    a[4000:4100] += 1.0
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    fa, fb = open_npy(tmp_path / "a.npy"), open_npy(tmp_path / "b.npy")
    assert isinstance(fa, NpyFile)
    prof = error_profile(fa, fb, compare_arrays(fa, fb).stats, max_bins=50)
    (ax,) = prof.axes
    assert ax.name == "element" and ax.group == 100 and ax.off.size == 50
    assert ax.hotspots(1)[0].start == 4000 and ax.spread() == 1 / 50


def test_profile_stops_when_asked(pair):
    a, b = pair
    assert error_profile(a, b, compare_arrays(a, b).stats, stop=lambda: True) is None


def test_axis_names_follow_the_layout():
    assert axis_names(4, "NCHW") == ["batch", "channel", "row", "column"]
    assert axis_names(4, "NHWC")[3] == "channel"
    assert axis_names(2, "ND") == ["row", "column"]
    assert axis_names(3, None) == ["axis 0", "row", "column"]
    assert axis_names(1) == ["element"]


def test_a_pair_needing_a_cast_and_a_flattening_is_profiled_as_compared(tmp_path):
    """Declared float16 but dumped as float32 (8, 16), against a float16 (128,): compare casts
    and flattens; the profile must read the same two tensors (it used to fail to reshape)."""
    paths = build_cast_and_flatten(tmp_path)
    cmp = DumpComparison(
        *(str(paths[k]) for k in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data"))
    )
    rec, sides = cmp.record_and_sides(cmp.outputs["F"][0])
    assert "SHAPE_FLATTENED" in rec.status and "compared as declared float16" in rec.conversion
    prof = error_profile(sides.fused, sides.original, rec.result.stats)
    (axis,) = prof.axes
    assert axis.name == "element" and axis.size == 128
    assert prof.off == 16 and axis.off[80:96].sum() == 16
