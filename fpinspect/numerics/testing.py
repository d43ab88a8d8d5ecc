"""Assertions for test suites: ULP bounds and bit equality with readable failure reports."""

from __future__ import annotations

import numpy as np

from .ulp import NAN_MISMATCH, STATUS_NAMES, _uint_view, bit_mismatch, ulp_diff


def _bits(v: np.ndarray) -> str:
    u = _uint_view(np.ascontiguousarray(v.reshape(1)))[0]
    return f"0x{int(u):0{2 * v.dtype.itemsize}x}"


def _report(
    title: str, actual: np.ndarray, expected: np.ndarray, bad_flat: np.ndarray, score, limit: int
) -> str:
    order = bad_flat[np.argsort(-np.asarray(score, dtype=np.float64)[bad_flat], kind="stable")][:limit]
    fa, fe = actual.reshape(-1), expected.reshape(-1)
    lines = [
        title,
        f"  {'index':<16} {'actual':>14} {'expected':>14} {'ULP':>8} {'actual bits':>20} {'expected bits':>20}",
    ]
    for flat in order.tolist():
        idx = tuple(int(i) for i in np.unravel_index(flat, actual.shape)) if actual.shape else ()
        s = score[flat]
        s_txt = "NaN" if not np.isfinite(s) else f"{s:g}"  # inf marks a NaN mismatch
        lines.append(
            f"  {str(list(idx)):<16} {float(fa[flat]):>14.7g} {float(fe[flat]):>14.7g} {s_txt:>8} "
            f"{_bits(fa[flat : flat + 1]):>20} {_bits(fe[flat : flat + 1]):>20}"
        )
    return "\n".join(lines)


def assert_ulp(actual, expected, max_ulp: int = 1, *, show: int = 10) -> None:
    """Fail unless every element of ``actual`` is within ``max_ulp`` ULPs of ``expected``.

    Distances are :func:`ulp_diff` in the common format; a NaN against a number always
    fails, two NaNs pass, ``+0`` and ``-0`` are 0 ULP apart. Shapes must match.
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"shapes differ: actual {actual.shape}, expected {expected.shape}")
    dist, status = ulp_diff(actual, expected, return_status=True)
    bad = np.flatnonzero((dist > max_ulp).reshape(-1))
    if bad.size == 0:
        return
    st = status.reshape(-1)
    score = dist.reshape(-1).astype(np.float64)
    score[st == NAN_MISMATCH] = np.inf  # NaN mismatches sort first: the worst kind of difference
    n_nan = int(np.count_nonzero(st[bad] == NAN_MISMATCH))
    finite_bad = score[bad][np.isfinite(score[bad])]
    worst = int(finite_bad.max()) if finite_bad.size else None
    title = (
        f"{bad.size} of {actual.size} elements differ by more than {max_ulp} ULP "
        f"(max {worst} ULP, {n_nan} {STATUS_NAMES[NAN_MISMATCH]}); worst elements:"
    )
    raise AssertionError(_report(title, actual, expected, bad, score, show))


def assert_bit_equal(actual, expected, *, show: int = 10) -> None:
    """Fail unless ``actual`` and ``expected`` have the same shape, dtype and bits."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"shapes differ: actual {actual.shape}, expected {expected.shape}")
    if actual.dtype != expected.dtype:
        raise AssertionError(f"dtypes differ: actual {actual.dtype}, expected {expected.dtype}")
    bad = np.flatnonzero(bit_mismatch(actual, expected).reshape(-1))
    if bad.size == 0:
        return
    if actual.dtype.kind == "f" or "float" in actual.dtype.name:
        d, st = ulp_diff(actual, expected, return_status=True)
        dist = d.reshape(-1).astype(np.float64)
        dist[st.reshape(-1) == NAN_MISMATCH] = np.inf
    else:
        dist = np.abs(actual.reshape(-1).astype(np.float64) - expected.reshape(-1).astype(np.float64))
    title = f"{bad.size} of {actual.size} elements are not bit-identical; first differences:"
    raise AssertionError(_report(title, actual, expected, bad, dist, show))
