"""Task S — the precision toolkit checks itself (test plan task S).

Every function the other tasks lean on is measured against an oracle that shares none of
its code:

* **exhaustive float16 and bfloat16** — every one of the 65 536 bit patterns against a set
  of anchors (the special values, then seeded random patterns) and against its neighbour
  in value order. The oracle is the *rank* of each value among the format's distinct
  values, sorted as float64 (``np.unique``: +0 and -0 are one value, NaN has no rank), so
  ``ulp_diff(a, b)`` must equal ``|rank(a) - rank(b)|``; NaN against a number must give
  :func:`~fpinspect.numerics.ulp_nan`, NaN against NaN 0, and the status codes must match
  the float64 classification (NaN, infinity) of both sides.
* **sampled float32** — seeded random bit-pattern pairs, plus pairs a few steps apart (also
  across zero), against an *arithmetic* rank computed from the float64 value:
  ``n(m) = m / min_subnormal`` below the smallest normal ``2**emin``, else
  ``2**(p-1) * (e - emin + 1) + (m / 2**e - 1) * 2**(p-1)`` for ``m`` in ``[2**e, 2**(e+1))``,
  and ``rank(x) = sign(x) * n(|x|)``, with infinity one above the largest finite value.
  The same formula is first checked against the sorted rank on float16.
* **special values** — a table of named cases per format (±0, smallest subnormals, the
  largest finite value against infinity, NaN) with their expected distance and status,
  and :func:`~fpinspect.numerics.bit_equal` on signed zeros and NaN payloads.
* **error_stats against numpy float64** — seeded float64 values perturbed by a few ULPs
  and rounded to float16, bfloat16 and float32; ``error_stats`` (absolute, relative and
  ULP error: max, mean, P50, P99) against the same numbers computed directly in float64,
  the ULP taken as ``np.spacing`` of the format's power of two at the value's exponent;
  and every correctly rounded value ``ref.astype(format)`` must score at most 0.5 ULP.
* **device rounding** — float32 values rounded to float16 and bfloat16 on the chosen
  device (torch ``.to``) must equal numpy's / ml_dtypes' round-to-nearest-even bit for bit.

All numpy, and fast: the quick profile is the launcher pane's own test workload.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import (
    BOTH_NAN,
    FINITE,
    INF_MATCH,
    INF_MISMATCH,
    NAN_MISMATCH,
    STATUS_NAMES,
    bit_equal,
    error_stats,
    float_format,
    ulp_diff,
    ulp_error,
    ulp_nan,
)
from fpinspect.numerics.dtypes import FloatFormat
from fpinspect.store.figures import COUNT, EXACT, ULP, Fields, Figures

from ..backends.base import Backend
from ..backends.device_only import DeviceOnly
from ..events import HistogramEvent, Message, Progress
from ..results import Histogram, Table, Verdict, ulp_diff_histogram, ulp_error_histogram
from ..settings import TaskSettings
from ..task import Emit, Task

EXHAUSTIVE = ("float16", "bfloat16")
STATS_FORMATS = ("float16", "bfloat16", "float32")
#: Relative tolerance between error_stats and the direct float64 computation of a mean
#: (different summation orders); maxima and percentiles are observed values, compared exactly.
MEAN_RTOL = 1e-9


@dataclass(frozen=True)
class SelfCheckSettings(TaskSettings):
    """``anchors`` values each float16 / bfloat16 pattern is paired with (the special values
    first); ``float32_pairs`` random float32 pattern pairs; ``stats_size`` elements per
    format in the error_stats check; ``max_ulps`` the largest perturbation there;
    ``device_size`` values rounded on the device. ``dtype`` is unused: S covers every format."""

    anchors: int = 64
    float32_pairs: int = 1 << 22
    stats_size: int = 1 << 20
    max_ulps: int = 8
    device_size: int = 1 << 20

    QUICK: ClassVar = {"anchors": 12, "float32_pairs": 1 << 18, "stats_size": 1 << 16, "device_size": 1 << 16}

    def work(self) -> float:
        """Values checked: every float16 and bfloat16 pattern against each anchor and its
        neighbour, the float32 pairs, the error_stats values of three formats, and the
        values rounded on the device for two formats."""
        patterns = len(EXHAUSTIVE) * (1 << 16) * (self.anchors + 1)
        return float(
            patterns + self.float32_pairs + len(STATS_FORMATS) * self.stats_size + 2 * self.device_size
        )


# -- oracles ---------------------------------------------------------------------------
def sorted_rank(values: np.ndarray) -> np.ndarray:
    """Rank of each value among the distinct non-NaN values of ``values`` (float64 order,
    +0 and -0 one value); -1 for NaN."""
    v = np.asarray(values, dtype=np.float64)
    nan = np.isnan(v)
    distinct = np.unique(v[~nan])
    rank = np.searchsorted(distinct, np.where(nan, 0.0, v)).astype(np.int64)
    rank[nan] = -1
    return rank


def arithmetic_rank(values: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """``rank(x) = sign(x) * n(|x|)`` of the module docstring, in float64 (exact for formats
    up to float32); NaN stays NaN."""
    v = np.asarray(values, dtype=np.float64)
    m = np.abs(v)
    half = 2.0 ** (fmt.p - 1)
    min_sub = 2.0 ** (fmt.emin - fmt.p + 1)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.frexp(np.where(np.isfinite(m), m, 1.0))[1].astype(np.float64) - 1
        normal = half * (e - fmt.emin + 1) + (m / np.exp2(e) - 1.0) * half
        n = np.where(m < 2.0**fmt.emin, m / min_sub, normal)
        top = half * (fmt.emax - fmt.emin + 1) + (fmt.max / 2.0**fmt.emax - 1.0) * half
        n = np.where(np.isinf(m), top + 1, n)
    return np.where(np.isnan(v), np.nan, np.copysign(n, v))


def expected_status(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The status :func:`~fpinspect.numerics.ulp_diff` must report, from the float64
    classification of both sides."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb, ia, ib = np.isnan(a), np.isnan(b), np.isinf(a), np.isinf(b)
    st = np.full(a.shape, FINITE, dtype=np.uint8)
    st[(ia | ib) & ~(na | nb)] = INF_MISMATCH
    st[ia & ib & (a == b)] = INF_MATCH
    st[na & nb] = BOTH_NAN
    st[na ^ nb] = NAN_MISMATCH
    return st


def expected_distance(rank_a: np.ndarray, rank_b: np.ndarray, nan_a, nan_b, fmt: FloatFormat) -> np.ndarray:
    """``|rank_a - rank_b|``, 0 for NaN against NaN, ``ulp_nan`` for NaN against a number."""
    d = np.abs(np.where(nan_a | nan_b, 0, rank_a - rank_b)).astype(np.uint64)
    d[nan_a ^ nan_b] = ulp_nan(fmt.dtype)
    return d


def all_patterns(fmt: FloatFormat) -> np.ndarray:
    return np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.uint).view(fmt.dtype)


def special_values(fmt: FloatFormat) -> dict[str, float]:
    """Named values every check starts with."""
    min_sub = 2.0 ** (fmt.emin - fmt.p + 1)
    out = {
        "+0": 0.0,
        "-0": -0.0,
        "min subnormal": min_sub,
        "-min subnormal": -min_sub,
        "max subnormal": 2.0**fmt.emin - min_sub,
        "min normal": 2.0**fmt.emin,
        "1": 1.0,
        "-1": -1.0,
        "max": fmt.max,
        "-max": -fmt.max,
        "NaN": np.nan,
    }
    if fmt.has_inf:
        out.update({"+inf": np.inf, "-inf": -np.inf})
    return out


def top_rank(fmt: FloatFormat) -> int:
    """Rank of the largest non-NaN value (infinity where the format has it), exact in
    integers for every format: ``n(max)`` of the module docstring, plus one for infinity."""
    half = 1 << (fmt.p - 1)
    n_max = half * (fmt.emax - fmt.emin + 1) + int((Fraction(fmt.max) / 2**fmt.emax - 1) * half)
    return n_max + (1 if fmt.has_inf else 0)


def max_distance(fmt: FloatFormat) -> int:
    """The largest non-NaN distance in ``fmt``: from the lowest to the highest value."""
    return 2 * top_rank(fmt)


# -- the checks ------------------------------------------------------------------------
class DistanceHistogram:
    """Counts of checked ULP distances over the fixed bins of
    :func:`~..results.ulp_diff_histogram` for one format, summed batch by batch."""

    def __init__(self, name: str, title: str, fmt: FloatFormat):
        self.name, self.title, self.fmt = name, title, fmt
        self.counts: dict[str, int] = {}

    def add(self, dist: np.ndarray) -> None:
        h = ulp_diff_histogram(self.name, self.title, dist, ulp_nan(self.fmt.dtype), max_distance(self.fmt))
        for label, count in zip(h.bins, h.counts):
            self.counts[label] = self.counts.get(label, 0) + int(count)

    def histogram(self) -> Histogram:
        return Histogram(
            self.name,
            self.title,
            "ULP distance",
            tuple(self.counts),
            tuple(self.counts.values()),
            ylabel="pairs",
        )


@dataclass
class DistanceCheck:
    """Pairs checked for one format and how many disagreed with the oracle."""

    fmt: str
    oracle: str
    pairs: int = 0
    distance_mismatches: int = 0
    status_mismatches: int = 0
    #: Up to five disagreeing pairs, as ``(a bits, b bits, got, expected)``.
    examples: list[tuple[str, str, int, int]] = field(default_factory=list)

    def check(self, a: np.ndarray, b: np.ndarray, expected: np.ndarray) -> np.ndarray:
        got, status = ulp_diff(a, b, return_status=True)
        got = got.astype(np.uint64)
        bad = got != expected
        self.pairs += got.size
        self.distance_mismatches += int(bad.sum())
        self.status_mismatches += int((status != expected_status(a, b)).sum())
        fmt = float_format(a.dtype)
        for i in np.flatnonzero(bad)[: max(0, 5 - len(self.examples))]:
            bits = (f"0x{int(x):0{fmt.bits // 4}x}" for x in (a.view(fmt.uint)[i], b.view(fmt.uint)[i]))
            self.examples.append((*bits, int(got[i]), int(expected[i])))
        return got

    @property
    def ok(self) -> bool:
        return self.pairs > 0 and self.distance_mismatches == 0 and self.status_mismatches == 0

    def summary(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle,
            "pairs": self.pairs,
            "distance_mismatches": self.distance_mismatches,
            "status_mismatches": self.status_mismatches,
            "examples": [list(e) for e in self.examples],
        }


def _anchors(fmt: FloatFormat, count: int, rng: np.random.Generator) -> np.ndarray:
    special = np.array(list(special_values(fmt).values()), dtype=np.float64).astype(fmt.dtype)
    extra = max(0, count - special.size)
    random = rng.integers(0, 1 << fmt.bits, size=extra, dtype=np.uint64).astype(fmt.uint).view(fmt.dtype)
    return np.concatenate([special, random])[: max(count, 1)]


def exhaustive(fmt_name: str, s: SelfCheckSettings, emit: Emit) -> tuple[DistanceCheck, Histogram]:
    """Every pattern of a 16-bit format against each anchor and its value-order neighbour."""
    fmt = float_format(fmt_name)
    values = all_patterns(fmt)
    rank = sorted_rank(values)
    nan = rank < 0
    check = DistanceCheck(fmt_name, "rank in sorted float64 order")
    hist = DistanceHistogram(
        f"s_{fmt_name}_ulp_diff", f"{fmt_name}: ULP distances checked against the rank oracle", fmt
    )
    anchors = _anchors(fmt, s.anchors, np.random.default_rng(s.seed))
    stage = f"S exhaustive {fmt_name}"
    steps = anchors.size + 1
    for i, b in enumerate(anchors):
        bv = np.full(values.shape, b, dtype=fmt.dtype)
        rb = rank[int(bv[:1].view(fmt.uint)[0])]  # values[i] has bit pattern i
        hist.add(check.check(values, bv, expected_distance(rank, rb, nan, np.bool_(rb < 0), fmt)))
        emit(Progress(stage, i + 1, steps))
        emit(HistogramEvent(hist.histogram()))
    order = np.argsort(values.astype(np.float64)[~nan], kind="stable")
    ordered = values[~nan][order]
    a, b = ordered[:-1], ordered[1:]
    hist.add(check.check(a, b, np.abs(rank[~nan][order][1:] - rank[~nan][order][:-1]).astype(np.uint64)))
    emit(Progress(stage, steps, steps))
    emit(HistogramEvent(hist.histogram()))
    return check, hist.histogram()


def _float32_pairs(s: SelfCheckSettings, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of float32 pairs: random patterns, then pairs a few steps apart (across zero too)."""
    fmt = float_format("float32")
    batch = 1 << 16
    for lo in range(0, s.float32_pairs, batch):
        n = min(batch, s.float32_pairs - lo)
        bits = rng.integers(0, 1 << 32, size=(2, n), dtype=np.uint64).astype(np.uint32)
        a, b = bits.view(np.float32)
        if (lo // batch) % 2:
            # near pairs: b is a value a few steps from a in value order (through zero from tiny a)
            step = rng.integers(-8, 9, size=n)
            tiny = rng.integers(0, 16, size=n).astype(np.float64) * 2.0 ** (fmt.emin - fmt.p + 1)
            a = np.where(rng.random(n) < 0.25, tiny * np.sign(step + 0.5), a.astype(np.float64)).astype(
                np.float32
            )
            b = a.copy()
            for k in range(8):
                move = np.abs(step) > k
                b[move] = np.nextafter(b[move], np.where(step[move] > 0, np.inf, -np.inf).astype(np.float32))
        yield a, b


def sampled_float32(s: SelfCheckSettings, emit: Emit) -> tuple[DistanceCheck, bool, Histogram]:
    """Random float32 pairs against the arithmetic rank; first the formula against the sorted
    rank on every float16 value (so the float32 oracle is itself checked)."""
    f16 = float_format("float16")
    every = all_patterns(f16)
    sorted_r = sorted_rank(every)
    arith = arithmetic_rank(every, f16)
    ranked = sorted_r >= 0
    formula_ok = bool(np.array_equal(sorted_r[ranked], arith[ranked] - np.nanmin(arith)))
    fmt = float_format("float32")
    check = DistanceCheck("float32", "arithmetic rank from the float64 value")
    hist = DistanceHistogram("s_float32_ulp_diff", "float32: ULP distances of sampled pairs", fmt)
    rng = np.random.default_rng(s.seed + 1)
    total = -(-s.float32_pairs // (1 << 16))
    for i, (a, b) in enumerate(_float32_pairs(s, rng)):
        ra, rb = arithmetic_rank(a, fmt), arithmetic_rank(b, fmt)
        na, nb = np.isnan(ra), np.isnan(rb)
        expected = expected_distance(
            np.nan_to_num(ra).astype(np.int64), np.nan_to_num(rb).astype(np.int64), na, nb, fmt
        )
        hist.add(check.check(a, b, expected))
        emit(Progress("S sampled float32", i + 1, total))
        if i % 8 == 7 or i + 1 == total:
            emit(HistogramEvent(hist.histogram()))
    return check, formula_ok, hist.histogram()


@dataclass(frozen=True)
class SpecialCase:
    fmt: str
    case: str
    expected: int
    status: int
    got: int
    got_status: int

    @property
    def ok(self) -> bool:
        return self.expected == self.got and self.status == self.got_status


def special_cases() -> tuple[list[SpecialCase], list[tuple[str, str, bool, bool]]]:
    """The named cases of every registered format, and bit_equal's cases as
    ``(format, case, expected, got)``."""
    from fpinspect.numerics import FORMATS

    cases: list[SpecialCase] = []
    bit_cases: list[tuple[str, str, bool, bool]] = []
    for fmt in FORMATS.values():
        sv = special_values(fmt)
        top = top_rank(fmt)
        finite_top = top - (1 if fmt.has_inf else 0)
        want = [
            ("+0", "-0", 0, FINITE),
            ("+0", "min subnormal", 1, FINITE),
            ("-min subnormal", "min subnormal", 2, FINITE),
            ("max subnormal", "min normal", 1, FINITE),
            ("-max", "max", 2 * finite_top, FINITE),
            ("NaN", "NaN", 0, BOTH_NAN),
            ("NaN", "1", ulp_nan(fmt.dtype), NAN_MISMATCH),
        ]
        if fmt.has_inf:
            want += [
                ("max", "+inf", 1, INF_MISMATCH),
                ("+inf", "+inf", 0, INF_MATCH),
                ("-inf", "+inf", 2 * top, INF_MISMATCH),
            ]
        for a, b, dist, status in want:
            xa = np.array([sv[a]], dtype=np.float64).astype(fmt.dtype)
            xb = np.array([sv[b]], dtype=np.float64).astype(fmt.dtype)
            d, st = ulp_diff(xa, xb, return_status=True)
            cases.append(SpecialCase(fmt.name, f"{a} vs {b}", int(dist), status, int(d[0]), int(st[0])))
        zero = np.zeros(1, dtype=fmt.dtype)
        nan = np.array([np.nan], dtype=np.float64).astype(fmt.dtype)
        other_nan = (nan.view(fmt.uint) ^ fmt.uint.type(1)).view(fmt.dtype)
        bit_cases += [
            (fmt.name, "+0 vs -0", False, bit_equal(zero, -zero)),
            (fmt.name, "NaN vs the same NaN", True, bit_equal(nan, nan.copy())),
            (fmt.name, "NaN vs another NaN payload", False, bit_equal(nan, other_nan)),
        ]
    return cases, bit_cases


@dataclass
class StatsCheck:
    """``error_stats`` against the direct float64 computation for one format."""

    fmt: str
    #: ``(measure, statistic, error_stats value, float64 value, agrees)``
    rows: list[tuple[str, str, float, float, bool]]
    #: Largest ULP error of the correctly rounded values ``ref.astype(format)``.
    rounded_max_ulp: float
    ulp_kind: str

    @property
    def ok(self) -> bool:
        return all(r[-1] for r in self.rows) and self.rounded_max_ulp <= 0.5 and self.ulp_kind == "error"


def _stats_inputs(
    fmt: FloatFormat, s: SelfCheckSettings, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Float64 references with log-uniform magnitudes over the format's normal range (both
    signs), and the same values perturbed by up to ``max_ulps`` ULPs, rounded to ``fmt``."""
    top = min(fmt.emax - 1, 60)
    e = rng.integers(fmt.emin + 1, top + 1, size=s.stats_size)
    ref = np.ldexp(rng.uniform(1.0, 2.0, size=s.stats_size), e) * rng.choice([-1.0, 1.0], size=s.stats_size)
    noisy = ref * (1.0 + rng.uniform(-1.0, 1.0, size=s.stats_size) * s.max_ulps * 2.0 ** (1 - fmt.p))
    return noisy.astype(fmt.dtype), ref


def _direct(a: np.ndarray, ref: np.ndarray, fmt: FloatFormat) -> dict[str, np.ndarray]:
    """Absolute, relative and ULP errors computed here in float64; the ULP is ``np.spacing``
    of the format's power of two at the reference's exponent."""
    diff = np.abs(a.astype(np.float64) - ref)
    e = np.frexp(np.abs(ref))[1] - 1
    ulp = np.spacing(np.ldexp(1.0, e).astype(fmt.dtype)).astype(np.float64)
    return {"abs": diff, "rel": diff / np.abs(ref), "ulp": diff / ulp}


def check_error_stats(fmt_name: str, s: SelfCheckSettings) -> tuple[StatsCheck, Histogram]:
    fmt = float_format(fmt_name)
    rng = np.random.default_rng(s.seed + 2 + STATS_FORMATS.index(fmt_name))
    a, ref = _stats_inputs(fmt, s, rng)
    got = error_stats(a, ref)
    rows = []
    for measure, values in _direct(a, ref, fmt).items():
        want = {
            "max": float(values.max()),
            "mean": float(values.mean()),
            "p50": float(np.percentile(values, 50, method="inverted_cdf")),
            "p99": float(np.percentile(values, 99, method="inverted_cdf")),
        }
        for stat, w in want.items():
            g = float(getattr(getattr(got, measure), stat))
            same = abs(g - w) <= MEAN_RTOL * abs(w) if stat == "mean" else g == w
            rows.append((measure, stat, g, w, same))
    rounded = float(np.max(ulp_error(ref.astype(fmt.dtype), ref)))
    hist = ulp_error_histogram(
        f"s_{fmt_name}_error_stats", f"{fmt_name}: ULP error of the perturbed values", ulp_error(a, ref)
    )
    return StatsCheck(fmt_name, rows, rounded, got.ulp.kind), hist


@dataclass(frozen=True)
class DeviceRounding:
    device: str
    fmt: str
    values: int
    differing: int


def device_rounding(s: SelfCheckSettings, backend: Backend | DeviceOnly) -> list[DeviceRounding]:
    """float32 → float16 / bfloat16 on the device against numpy / ml_dtypes (module docstring).
    Inputs span each format's subnormals and overflow; NaN is left out (payloads may differ)."""
    from ..tensors import from_numpy, to_numpy, torch_dtype

    rng = np.random.default_rng(s.seed + 9)
    out = []
    for name in EXHAUSTIVE:
        fmt = float_format(name)
        e = rng.integers(fmt.emin - fmt.p - 1, min(fmt.emax + 2, 127), size=s.device_size)
        x = np.ldexp(rng.uniform(1.0, 2.0, size=s.device_size), e) * rng.choice([-1.0, 1.0], s.device_size)
        x = x.astype(np.float32)
        got = to_numpy(from_numpy(x).to(backend.device).to(torch_dtype(name)))
        want = x.astype(fmt.dtype)
        differing = int((got.view(fmt.uint) != want.view(fmt.uint)).sum())
        out.append(DeviceRounding(backend.name, name, x.size, differing))
    return out


def _not_run(claim: tuple[str, str], setting: str) -> Verdict:
    """A check that checked nothing is no verdict either way."""
    return Verdict(*claim, f"not run: {setting} is 0, so nothing was checked.", None)


#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): fields of
#: :meth:`SelfCheckResult.data`.
FIGURES = Figures(
    Fields(
        {
            "all_passed": EXACT,
            "arithmetic_rank_matches_sorted_rank": EXACT,
            "error_stats.*.agrees": EXACT,
            "error_stats.*.rounded_max_ulp": ULP,
            "device_rounding.*.differing": COUNT,
        }
    ),
)


@dataclass
class SelfCheckResult:
    settings: SelfCheckSettings
    exhaustive: list[DistanceCheck]
    float32: DistanceCheck
    #: The float32 oracle's formula reproduces the sorted rank on every float16 value.
    formula_ok: bool
    specials: list[SpecialCase]
    bit_cases: list[tuple[str, str, bool, bool]]
    stats: list[StatsCheck]
    rounding: list[DeviceRounding]
    charts: list[Histogram]

    def data(self) -> dict[str, Any]:
        return {
            "ulp_diff": {c.fmt: c.summary() for c in [*self.exhaustive, self.float32]},
            "arithmetic_rank_matches_sorted_rank": self.formula_ok,
            "special_values": {
                "cases": len(self.specials) + len(self.bit_cases),
                "failures": [f"{c.fmt}: {c.case}" for c in self.specials if not c.ok]
                + [f"{f}: bit_equal {case}" for f, case, want, got in self.bit_cases if want != got],
            },
            "error_stats": {
                c.fmt: {
                    "agrees": c.ok,
                    "rounded_max_ulp": c.rounded_max_ulp,
                    "ulp_kind": c.ulp_kind,
                    "disagreements": [f"{m} {st}: {g!r} vs {w!r}" for m, st, g, w, ok in c.rows if not ok],
                }
                for c in self.stats
            },
            "device_rounding": {r.fmt: {"values": r.values, "differing": r.differing} for r in self.rounding},
            "all_passed": all(v.agrees for v in self.verdicts()),
        }

    def verdicts(self) -> list[Verdict]:
        ex = self.exhaustive
        pairs = sum(c.pairs for c in ex)
        dist_bad = sum(c.distance_mismatches for c in ex)
        status_bad = sum(c.status_mismatches for c in ex)
        f32 = self.float32
        special_bad = [c for c in self.specials if not c.ok]
        bits_bad = [b for b in self.bit_cases if b[2] != b[3]]
        stats_bad = [c for c in self.stats if not c.ok]
        device = self.rounding[0].device if self.rounding else "?"
        differing = sum(r.differing for r in self.rounding)
        sampled = (
            "ulp_diff, sampled float32",
            "each distance equals the arithmetic rank difference (itself checked on every float16 value)",
        )
        stats = (
            "error_stats against numpy float64",
            "max, mean, P50, P99 of absolute, relative and ULP error equal a direct float64 computation; "
            "correctly rounded values score at most 0.5 ULP",
        )
        rounding = (
            f"rounding on {device}",
            "float32 → float16 / bfloat16 on the device equals numpy's round-to-nearest-even bit for bit",
        )
        return [
            Verdict(
                "ulp_diff, every float16 and bfloat16 value",
                "each distance is the distance in sorted value order; each status the float64 classification",
                f"{pairs:,} pairs ({', '.join(c.fmt for c in ex)}): {dist_bad} distance and {status_bad} status "
                "mismatches.",
                pairs > 0 and dist_bad == 0 and status_bad == 0,
            ),
            _not_run(sampled, "float32_pairs")
            if not f32.pairs
            else Verdict(
                *sampled,
                f"{f32.pairs:,} pairs: {f32.distance_mismatches} distance and {f32.status_mismatches} status "
                f"mismatches; the rank formula {'reproduces' if self.formula_ok else 'does NOT reproduce'} the "
                "sorted float16 rank.",
                f32.ok and self.formula_ok,
            ),
            Verdict(
                "special values",
                "±0, subnormals, max vs inf, NaN: the documented distance and status; bit_equal tells ±0 and "
                "NaN payloads apart",
                f"{len(self.specials) + len(self.bit_cases) - len(special_bad) - len(bits_bad)} of "
                f"{len(self.specials) + len(self.bit_cases)} cases as specified"
                + (
                    f"; wrong: {', '.join(f'{c.fmt} {c.case}' for c in special_bad[:5])}"
                    if special_bad
                    else ""
                )
                + ".",
                not special_bad and not bits_bad,
            ),
            _not_run(stats, "stats_size")
            if not self.stats
            else Verdict(
                *stats,
                "; ".join(
                    f"{c.fmt}: {'agrees' if c.ok else 'DISAGREES'} (rounded max {c.rounded_max_ulp:.3g} ULP)"
                    for c in self.stats
                )
                + ".",
                not stats_bad,
            ),
            _not_run(rounding, "device_size")
            if not sum(r.values for r in self.rounding)
            else Verdict(
                *rounding,
                "; ".join(f"{r.fmt}: {r.differing} of {r.values:,} differ" for r in self.rounding) + ".",
                differing == 0,
            ),
        ]

    def tables(self) -> list[Table]:
        return [
            Table(
                "ulp_diff against the oracles",
                ("format", "oracle", "pairs", "distance mismatches", "status mismatches"),
                tuple(
                    (c.fmt, c.oracle, c.pairs, c.distance_mismatches, c.status_mismatches)
                    for c in [*self.exhaustive, self.float32]
                ),
            ),
            Table(
                "error_stats against numpy float64",
                (
                    "format",
                    "max ULP (error_stats)",
                    "max ULP (float64)",
                    "P99 ULP (error_stats)",
                    "P99 ULP (float64)",
                    "correctly rounded max ULP",
                    "agrees",
                ),
                tuple(
                    (
                        c.fmt,
                        *(v for r in c.rows if r[0] == "ulp" and r[1] in ("max", "p99") for v in r[2:4]),
                        c.rounded_max_ulp,
                        c.ok,
                    )
                    for c in self.stats
                ),
            ),
            Table(
                "Rounding on the device",
                ("device", "format", "values", "differing from numpy"),
                tuple((r.device, r.fmt, r.values, r.differing) for r in self.rounding),
            ),
            Table(
                "Special values",
                ("format", "case", "expected", "got", "expected status", "status"),
                tuple(
                    (c.fmt, c.case, c.expected, c.got, STATUS_NAMES[c.status], STATUS_NAMES[c.got_status])
                    for c in self.specials
                ),
                summary=False,
            ),
            Table(
                "error_stats, every statistic",
                ("format", "measure", "statistic", "error_stats", "float64", "agrees"),
                tuple((c.fmt, *r) for c in self.stats for r in c.rows),
                summary=False,
            ),
        ]

    def histograms(self) -> list[Histogram]:
        return self.charts


def run(s: SelfCheckSettings, backend: Backend | DeviceOnly, emit: Emit) -> SelfCheckResult:
    # NaN and overflow are inputs here on purpose: their casts must not warn
    with np.errstate(invalid="ignore", over="ignore"):
        return _run(s, backend, emit)


def _run(s: SelfCheckSettings, backend: Backend | DeviceOnly, emit: Emit) -> SelfCheckResult:
    charts: list[Histogram] = []
    checks = []
    for name in EXHAUSTIVE:
        emit(Message(f"ulp_diff: every {name} value against {s.anchors} anchors and its neighbour"))
        check, hist = exhaustive(name, s, emit)
        checks.append(check)
        charts.append(hist)
    emit(Message(f"ulp_diff: {s.float32_pairs:,} sampled float32 pairs"))
    f32, formula_ok, hist = sampled_float32(s, emit)
    charts.append(hist)
    emit(Message("special values of every format"))
    specials, bit_cases = special_cases()
    stats = []
    for i, name in enumerate(STATS_FORMATS if s.stats_size else ()):
        emit(Message(f"error_stats of {s.stats_size:,} {name} values against numpy float64"))
        check, hist = check_error_stats(name, s)
        stats.append(check)
        charts.append(hist)
        emit(HistogramEvent(hist))
        emit(Progress("S error_stats", i + 1, len(STATS_FORMATS)))
    emit(Message(f"rounding float32 to float16 / bfloat16 on {backend.name}"))
    rounding = device_rounding(s, backend)
    return SelfCheckResult(s, checks, f32, formula_ok, specials, bit_cases, stats, rounding, charts)


TASK = Task(
    id="S",
    title="precision toolkit self-check (bit-diff / ULP / fp64 reference)",
    claim="shared infrastructure: ulp_diff, bit_equal and error_stats are exact on every format, checked "
    "against independent oracles",
    settings=SelfCheckSettings,
    run=run,
    figures=FIGURES,
    priority="P0",
    fusing=False,
)
