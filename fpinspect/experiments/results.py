"""Typed pieces of an experiment report and the report itself.

A task's ``run`` returns a :class:`TaskResult`: its contract data (the JSON keys the issue
fixes for that task), tables, histograms and :class:`Verdict` statements. The child process
wraps that into a :class:`TaskReport` with the environment and settings; the parent gets the
report back as a dict and rebuilds it with :meth:`TaskReport.from_dict`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class Verdict:
    """One claim checked on this device.

    ``agrees`` is True or False when the measurement confirms or contradicts the plan's
    expectation, and None when this device cannot show the effect at all (the statement
    in ``measured`` then says why).
    """

    topic: str
    expectation: str
    measured: str
    agrees: bool | None


@dataclass(frozen=True)
class Table:
    """A table of the report. Every table goes to ``report.md`` and ``result.json``; the
    terminal summary shows only those with ``summary`` set (evidence such as generated
    code is too wide for it)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    summary: bool = True


@dataclass(frozen=True)
class Histogram:
    """Counts (or values) over labelled bins; rendered as a bar chart."""

    name: str
    title: str
    xlabel: str
    bins: tuple[str, ...]
    counts: tuple[float, ...]
    ylabel: str = "elements"


@dataclass(frozen=True)
class Series:
    """One line of a :class:`Curve`: ``y[i]`` at ``x[i]``, ``x`` ascending."""

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]


@dataclass(frozen=True)
class Curve:
    """Lines over a common x axis (an empirical CDF, a trend); rendered as a line chart,
    as steps when ``steps`` is set (a CDF is a step function). ``xscale`` is ``"linear"``
    or ``"log"``. ``secondary`` lines (differences, bands) go on a second y axis on the
    right, labelled ``secondary_ylabel`` and log-scaled when ``secondary_log``."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    xscale: str = "linear"
    steps: bool = False
    secondary: tuple[Series, ...] = ()
    secondary_ylabel: str = ""
    secondary_log: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Curve:
        def lines(items) -> tuple[Series, ...]:
            return tuple(Series(s["label"], tuple(s["x"]), tuple(s["y"])) for s in items)

        return cls(**{**d, "series": lines(d["series"]), "secondary": lines(d.get("secondary", ()))})


def cdf_series(label: str, values, points: int = 200) -> Series:
    """The empirical CDF of ``values`` (NaN left out) as a step line: at each of at most
    ``points`` distinct values ``v`` (every one when there are fewer), the fraction of
    values ``<= v``."""
    v = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
    v = v[~np.isnan(v)]
    if v.size == 0:
        return Series(label, (), ())
    xs = np.unique(v)
    if xs.size > points:
        xs = np.unique(np.quantile(v, np.linspace(0, 1, points), method="inverted_cdf"))
    ys = np.searchsorted(v, xs, side="right") / v.size
    return Series(label, tuple(float(x) for x in xs), tuple(float(y) for y in ys))


class TaskResult(Protocol):
    def data(self) -> dict[str, Any]: ...

    def tables(self) -> list[Table]: ...

    def histograms(self) -> list[Histogram]: ...

    def verdicts(self) -> list[Verdict]: ...


def task_curves(result: TaskResult) -> list[Curve]:
    """A result's line charts: its ``curves()`` when it has that method (optional), else none."""
    curves = getattr(result, "curves", None)
    return list(curves()) if curves is not None else []


def _ulp_diff_bins(d: np.ndarray, nan_value: int, top: int | None = None) -> tuple[list[str], list[int]]:
    """Bins 0, 1, 2, 3, then [4, 8), [8, 16), … up to ``top`` (default: the largest distance);
    NaN mismatches (the ``ulp_nan`` sentinel) get their own bin. A fixed ``top`` gives the
    same bins to every batch, so partial histograms can be summed."""
    d = np.asarray(d).reshape(-1)
    nan = d == nan_value
    finite = d[~nan].astype(np.float64)
    if top is None:
        top = int(finite.max()) if finite.size else 0
    edges = [0, 1, 2, 3, 4]
    while edges[-1] <= top:
        edges.append(edges[-1] * 2)
    labels = [str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}" for lo, hi in zip(edges[:-1], edges[1:])]
    counts = [int(c) for c in np.histogram(finite, bins=np.asarray(edges, dtype=np.float64) - 0.5)[0]]
    if nan.any():
        labels.append("NaN")
        counts.append(int(nan.sum()))
    return labels, counts


def ulp_diff_histogram(
    name: str, title: str, dist: np.ndarray, nan_value: int, top: int | None = None
) -> Histogram:
    """Histogram of integer ULP distances (from :func:`fpinspect.numerics.ulp_diff`), bins
    as in :func:`_ulp_diff_bins`."""
    labels, counts = _ulp_diff_bins(dist, nan_value, top)
    return Histogram(name, title, "ULP distance", tuple(labels), tuple(counts))


#: Bin edges of real ULP errors; an error <= 0.5 ULP is a correctly rounded result.
ULP_ERROR_EDGES = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)

#: A real ULP error this close to a bin edge counts as on the edge: the float64 reference
#: is itself off by up to about 2**-29 ULP of a float32 result (2**-42 for float16), which
#: must not push an error of exactly 1 ULP into the next bin.
EDGE_TOLERANCE = 1e-6


def ulp_error_bins(err: np.ndarray, edges: tuple[float, ...]) -> tuple[list[str], list[int], int]:
    """Labels and counts of the bins ``0``, ``(e0, e1]``, …, ``> e_last`` (edges widened by
    :data:`EDGE_TOLERANCE`), and the number of NaN errors."""
    err = np.asarray(err, dtype=np.float64).reshape(-1)
    nan = np.isnan(err)
    upper = np.asarray(edges, dtype=np.float64) + EDGE_TOLERANCE
    counts = np.bincount(np.searchsorted(upper, err[~nan], side="left"), minlength=len(edges) + 1)
    inner = [f"({lo:g}, {hi:g}]" for lo, hi in zip(edges[:-1], edges[1:])]
    labels = [f"{edges[0]:g}", *inner, f"> {edges[-1]:g}"]
    return labels, [int(c) for c in counts], int(nan.sum())


def ulp_error_histogram(name: str, title: str, err: np.ndarray) -> Histogram:
    """Histogram of real ULP errors (from :func:`fpinspect.numerics.ulp_error`) over
    :data:`ULP_ERROR_EDGES`, plus a ``NaN`` bin when there are NaN mismatches."""
    labels, counts, nan = ulp_error_bins(err, ULP_ERROR_EDGES)
    if nan:
        labels.append("NaN")
        counts.append(nan)
    return Histogram(name, title, "error in ULP of the result", tuple(labels), tuple(counts))


def ulp_error_shares(err: np.ndarray) -> dict[str, float]:
    """Fractions of elements (NaN included in the total) whose real ULP error is 0
    (exact), in (0, 0.5] (correctly rounded), in (0.5, 1], and above 1."""
    labels, counts, nan = ulp_error_bins(err, (0.0, 0.5, 1.0))
    total = max(sum(counts) + nan, 1)
    return {label: c / total for label, c in zip(labels, counts)}


def jsonable(value: Any) -> Any:
    """Plain JSON types: numpy scalars and arrays become Python numbers and lists, tuples
    become lists, and non-finite floats become the strings ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"`` (strict JSON has no literal for them)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


#: Top-level report keys; task data may not reuse them.
RESERVED_KEYS = (
    "task",
    "title",
    "claim",
    "profile",
    "device",
    "dtype",
    "seeds",
    "torch_version",
    "environment",
    "settings",
    "verdicts",
    "tables",
    "histograms",
    "curves",
)


@dataclass
class TaskReport:
    """A finished experiment: what ran where, the task's contract data, and its evidence.

    :meth:`to_dict` puts the task's contract keys (for example A's ``runs`` and
    ``max_ulp``) at the top level next to the common keys in :data:`RESERVED_KEYS`.
    """

    task: str
    title: str
    claim: str
    profile: str
    environment: dict[str, Any]
    settings: dict[str, Any]
    data: dict[str, Any]
    verdicts: list[Verdict] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    histograms: list[Histogram] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)

    def __post_init__(self):
        clash = sorted(set(self.data) & set(RESERVED_KEYS))
        if clash:
            raise ValueError(f"task data reuses reserved report keys: {', '.join(clash)}")

    @property
    def device(self) -> str:
        return self.environment["device"]

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "task": self.task,
                "title": self.title,
                "claim": self.claim,
                "profile": self.profile,
                "device": self.device,
                # tasks that sweep formats (D, B) record the list they covered
                "dtype": self.settings.get("dtypes") or self.settings.get("dtype"),
                "seeds": {"inputs": self.settings.get("seed")},
                "torch_version": self.environment.get("torch"),
                "environment": self.environment,
                "settings": self.settings,
                **self.data,
                "verdicts": [asdict(v) for v in self.verdicts],
                "tables": [asdict(t) for t in self.tables],
                "histograms": [asdict(h) for h in self.histograms],
                "curves": [asdict(c) for c in self.curves],
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TaskReport:
        return cls(
            task=d["task"],
            title=d["title"],
            claim=d["claim"],
            profile=d["profile"],
            environment=d["environment"],
            settings=d["settings"],
            data={k: v for k, v in d.items() if k not in RESERVED_KEYS},
            verdicts=[Verdict(**v) for v in d["verdicts"]],
            tables=[
                Table(t["title"], tuple(t["columns"]), tuple(tuple(r) for r in t["rows"]), t["summary"])
                for t in d["tables"]
            ],
            histograms=[
                Histogram(**{**h, "bins": tuple(h["bins"]), "counts": tuple(h["counts"])})
                for h in d["histograms"]
            ],
            curves=[Curve.from_dict(c) for c in d.get("curves", [])],
        )
