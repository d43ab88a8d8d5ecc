"""Fortran-ordered dumps: compared as C-ordered ones are, without gathering each chunk."""

import tracemalloc

import numpy as np
import pytest

from fpinspect.dumps.engine.pair import compare_npy


def _pair(tmp_path, order):
    rng = np.random.default_rng(7)
    b = rng.standard_normal((512, 768)).astype(np.float32)
    a = (b * np.float32(1.0003)).astype(np.float32)
    a[300, 5] = b[300, 5] * 2  # one element far off: the worst, unambiguously
    for name, x in (("a", a), ("b", b)):
        np.save(tmp_path / f"{order}{name}.npy", np.asfortranarray(x) if order == "f" else x)
    return tmp_path / f"{order}a.npy", tmp_path / f"{order}b.npy"


def _peak(paths):
    tracemalloc.start()
    try:
        res = compare_npy(*paths)
        return res, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_fortran_pair_gives_the_numbers_and_indices_of_the_c_pair(tmp_path):
    c, _ = _peak(_pair(tmp_path, "c"))
    f, _ = _peak(_pair(tmp_path, "f"))
    assert f.status == c.status == ["OK"] and f.shape_a == c.shape_a == (512, 768)
    assert f.max_abs == c.max_abs and f.cosine == pytest.approx(c.cosine, rel=1e-12)  # sums in another order
    for block in ("ulp", "abs", "rel"):
        fb, cb = getattr(f.metrics.errors, block), getattr(c.metrics.errors, block)
        assert fb.argmax == cb.argmax == [300, 5]
        assert fb.max == cb.max
    assert f.metrics.errors.ulp.share == c.metrics.errors.ulp.share
    assert f.worst[0] == c.worst[0] and f.worst[0]["index"] == [300, 5]


def test_a_fortran_pair_costs_no_more_memory_than_a_c_pair(tmp_path):
    _peak(_pair(tmp_path, "c"))  # compiled once, outside the measure
    _, c_peak = _peak(_pair(tmp_path, "c"))
    _, f_peak = _peak(_pair(tmp_path, "f"))
    assert f_peak <= 1.2 * c_peak + (1 << 20), (f_peak, c_peak)
