"""Task B — accumulated error: is the fused error no worse than eager's? (docs/test-plan.md
§3.2, the plan's central quantitative claim).

Each chain of :data:`CHAINS` runs on ``inputs`` random inputs per dtype and input
distribution, three ways: the float64 reference (:func:`fpinspect.numerics.fp64_reference`:
the same code on the inputs' exact float64 values, nothing rounded in between), eager in
the storage dtype (every operator rounds its output to float16 / bfloat16), and fused
(one compiled kernel graph that keeps intermediates in float32 and rounds at its boundary).

Input ``i`` of every chain, dtype and distribution is drawn with seed ``seed + i``
(activations, then the chain's weights; float32 on the CPU, rounded to the dtype) from
:data:`DISTRIBUTIONS`: ``normal``, ``uniform``, ``large`` (× 64), ``heavy_tails`` (Student's t, 3).
The absolute, relative and ULP errors against float64 stream through the toolkit's one-pass
statistics (:class:`PathErrors`, P50 / P99 / max); per input, each path's largest ULP error.

A row is **no worse** when fused P99 ≤ eager P99 and fused max ≤ eager max (ULP error), with
no more NaN / infinity mismatches than eager (the plan's rule). Beside it, a paired bootstrap
over the inputs (:mod:`..bootstrap`) gives each P99 and max a 95% interval and the row a class:
fused *worse beyond noise*, *within noise* or *better beyond noise*. A row the rule calls worse
is a counter-example when worse beyond noise (chain, dtype, distribution, input index and seed,
the element where fused is worst, eager there); the others are listed apart, and their chain's
verdict is "cannot tell" rather than "disagrees".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import accumulate, fp64_reference, ulp_error
from fpinspect.numerics.quantiles import RealQuantiles
from fpinspect.store.figures import COUNT, FLAG, REL, ULP, Fields, Figures, Rows

from ..backends.base import Backend
from ..bootstrap import InputTops, compare
from ..events import CurveEvent, HistogramEvent, Message, Progress
from ..results import Curve, Histogram, Table, Verdict, cdf_series, ulp_error_bins
from ..settings import TaskSettings
from ..task import Emit, Task

LAYER_NORM_EPS = 1e-5
#: Head width of the attention fragment.
HEAD_DIM = 64
#: Bins of the error histograms, in ULP of the result (<= 0.5 is correctly rounded).
EDGES = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
PATHS = ("eager", "fused")
#: Storage dtypes the chains run in.
STORAGE_DTYPES = ("float16", "bfloat16", "float32")


def mul_add_gelu_mul(x, a, b, c):
    import torch.nn.functional as F

    return F.gelu(x * a + b) * c


def layernorm(x, gamma, beta):
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps=LAYER_NORM_EPS)


def softmax(x):
    import torch

    return torch.softmax(x, dim=-1)


def matmul_add_layernorm(x, w, bias, gamma, beta):
    import torch.nn.functional as F

    return F.layer_norm(x @ w + bias, (x.shape[-1],), gamma, beta, eps=LAYER_NORM_EPS)


def attention(q, k, v):
    import torch

    scores = (q * q.shape[-1] ** -0.5) @ k.transpose(-1, -2)
    return torch.softmax(scores, dim=-1) @ v


@dataclass(frozen=True)
class Chain:
    """``fn`` and its operands: ``activations`` drawn from the row's distribution with
    the shape ``"rows,hidden"`` or ``"heads,rows,head"``, then ``weights`` as
    ``(shape, low, high)`` of a uniform distribution (``"hidden"``, ``"hidden,hidden"``;
    a ``low`` of None means ``±hidden**-0.5``). ``ge_types``: its operators' GE op types, for
    the §6.1 switch list (:mod:`fpinspect.dumps.switches`) when it is a counter-example."""

    name: str
    expression: str
    fn: Callable[..., Any]
    activations: tuple[str, ...]
    weights: tuple[tuple[str, float | None, float], ...] = ()
    ge_types: tuple[str, ...] = ()


_AFFINE = (("hidden", 0.5, 1.5), ("hidden", -0.5, 0.5))
CHAINS = {
    c.name: c
    for c in (
        Chain(
            "mul_add_gelu_mul",
            "gelu(x * a + b) * c",
            mul_add_gelu_mul,
            ("rows,hidden",),
            (("hidden", 0.5, 1.5), ("hidden", -0.5, 0.5), ("hidden", 0.5, 1.5)),
            ("Mul", "Add", "GeluV2", "Mul"),
        ),
        Chain(
            "layernorm",
            "layer_norm(x) * gamma + beta",
            layernorm,
            ("rows,hidden",),
            _AFFINE,
            ("LayerNormV4",),
        ),
        Chain("softmax", "softmax(x, -1)", softmax, ("rows,hidden",), ge_types=("SoftmaxV2",)),
        Chain(
            "matmul_add_layernorm",
            "layer_norm(x @ w + bias)",
            matmul_add_layernorm,
            ("rows,hidden",),
            (("hidden,hidden", None, 0.0), ("hidden", -0.1, 0.1), *_AFFINE),
            ("MatMulV2", "Add", "LayerNormV4"),
        ),
        Chain(
            "attention",
            "softmax(q k^T / sqrt(d)) v",
            attention,
            ("heads,rows,head",) * 3,
            ge_types=("Muls", "BatchMatMulV2", "SoftmaxV2", "BatchMatMulV2"),
        ),
    )
}

DISTRIBUTIONS = {
    "normal": "N(0, 1)",
    "uniform": "U(-1, 1)",
    "large": "N(0, 1) × 64",
    "heavy_tails": "Student's t, 3 degrees of freedom",
}


@dataclass(frozen=True)
class AccumulatedErrorSettings(TaskSettings):
    """``inputs`` inputs per chain, dtype (``dtypes``, replacing the common ``dtype``
    field, which this task does not read) and distribution; activations [rows, hidden]
    (attention: [hidden / 64 heads, rows, 64]). Partial histograms and CDFs are
    streamed every ``partial_every`` inputs."""

    dtypes: tuple[str, ...] = ("float16", "bfloat16")
    distributions: tuple[str, ...] = tuple(DISTRIBUTIONS)
    chains: tuple[str, ...] = tuple(CHAINS)
    inputs: int = 1000
    rows: int = 128
    hidden: int = 1024
    partial_every: int = 50
    #: A deliberately worse fused path, to check baselines with: the fused path's result is
    #: rounded to this format and back ("bfloat16": worse in float16 and float32 rows). Empty: off.
    fused_rounding: str = ""

    QUICK: ClassVar = {"inputs": 100, "rows": 16, "hidden": 256}
    UNUSED: ClassVar = ("dtype",)
    IMPLEMENTATION: ClassVar = ("fused_rounding",)

    def work(self) -> float:
        """Activation elements computed: inputs × dtypes × distributions × chains × rows × hidden."""
        cells = len(self.dtypes) * len(self.distributions) * len(self.chains)
        return float(self.inputs) * cells * self.rows * self.hidden

    def __post_init__(self):
        empty = [n for n in ("dtypes", "distributions", "chains") if not getattr(self, n)]
        if empty:
            raise ValueError(f"{', '.join(empty)} must not be empty")
        odd = [d for d in self.dtypes if d not in STORAGE_DTYPES]
        if odd:
            raise ValueError(
                f"dtype(s) {', '.join(odd)} not covered; choose from {', '.join(STORAGE_DTYPES)}"
            )
        for kind, names, known in (
            ("chain", self.chains, CHAINS),
            ("distribution", self.distributions, DISTRIBUTIONS),
        ):
            unknown = [n for n in names if n not in known]
            if unknown:
                raise ValueError(f"unknown {kind}(s) {', '.join(unknown)}; known: {', '.join(known)}")
        if self.inputs < 1 or self.rows < 1 or self.partial_every < 1:
            raise ValueError("inputs, rows and partial_every must be at least 1")
        if self.fused_rounding not in ("", *STORAGE_DTYPES):
            raise ValueError(f"fused_rounding must be empty or one of {', '.join(STORAGE_DTYPES)}")
        if self.hidden < HEAD_DIM or self.hidden % HEAD_DIM:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of the head width {HEAD_DIM}")


def _shape(spec: str, s: AccumulatedErrorSettings) -> tuple[int, ...]:
    sizes = {"rows": s.rows, "hidden": s.hidden, "heads": s.hidden // HEAD_DIM, "head": HEAD_DIM}
    return tuple(sizes[k] for k in spec.split(","))


def draw(chain: Chain, distribution: str, s: AccumulatedErrorSettings, dtype: str, index: int) -> list:
    """Input ``index`` of ``chain`` (module docstring), as CPU tensors of ``dtype``."""
    import torch

    from ..tensors import torch_dtype

    g = torch.Generator().manual_seed(s.seed + index)
    out = []
    for spec in chain.activations:
        shape = _shape(spec, s)
        if distribution == "uniform":
            t = torch.rand(shape, generator=g) * 2 - 1
        elif distribution == "heavy_tails":
            chi2 = torch.randn((3, *shape), generator=g).square().sum(0)
            t = torch.randn(shape, generator=g) / (chi2 / 3).sqrt()
        else:
            t = torch.randn(shape, generator=g) * (64.0 if distribution == "large" else 1.0)
        out.append(t)
    for spec, low, high in chain.weights:
        if low is None:
            low, high = -(s.hidden**-0.5), s.hidden**-0.5
        out.append(torch.rand(_shape(spec, s), generator=g) * (high - low) + low)
    return [t.to(torch_dtype(dtype)) for t in out]


class PathErrors:
    """One path of one row, streamed input by input with bounded memory: each input's
    statistics against float64 come from the toolkit's one-pass
    :func:`~fpinspect.numerics.accumulate` (so abs, rel and ULP error mean exactly what
    :func:`~fpinspect.numerics.error_stats` means), its quantile stores are merged into
    :class:`~fpinspect.numerics.quantiles.RealQuantiles` (exact up to their cap, then a
    sketch); maxima keep the input and element where they occur. Histogram counts come
    from :func:`~fpinspect.numerics.ulp_error` over :data:`EDGES`."""

    def __init__(self):
        self.abs_q, self.rel_q, self.ulp_q = RealQuantiles(), RealQuantiles(), RealQuantiles()
        self.counts = np.zeros(len(EDGES) + 1, dtype=np.int64)
        self.elements = self.finite = self.nan_mismatch = self.inf_mismatch = 0
        self.sum_ulp = 0.0
        self.max_ulp = self.max_rel = self.max_abs = None
        #: [input index, *element index] of the largest ULP error.
        self.worst: list[int] | None = None
        self.per_input_max: list[float] = []
        #: Each input's largest ULP errors, for the bootstrap over inputs.
        self.tops = InputTops()

    def add(self, index: int, y: np.ndarray, ref: np.ndarray) -> None:
        flat, ref_flat = y.reshape(-1), ref.reshape(-1)
        st = accumulate(flat, ref_flat)
        self.elements += st.count
        self.finite += st.finite
        self.nan_mismatch += st.nan_mismatch
        self.inf_mismatch += st.inf_mismatch
        self.sum_ulp += st.sum_ulp_error
        for mine, theirs in (
            (self.abs_q, st.abs_quantiles),
            (self.rel_q, st.rel_quantiles),
            (self.ulp_q, st.ulp_quantiles),
        ):
            mine.merge(theirs)
        if st.finite:
            if self.max_ulp is None or st.max_ulp > self.max_ulp:
                self.max_ulp = st.max_ulp
                self.worst = [index, *(int(i) for i in np.unravel_index(st.max_ulp_index, y.shape))]
            self.max_abs = st.max_abs if self.max_abs is None else max(self.max_abs, st.max_abs)
        if st.rel_count:
            self.max_rel = st.max_rel if self.max_rel is None else max(self.max_rel, st.max_rel)
        self.per_input_max.append(float(st.max_ulp) if st.finite else float("nan"))
        errors = ulp_error(flat, ref_flat)
        _, counts, _ = ulp_error_bins(errors, EDGES)
        self.counts += counts
        self.tops.add(errors[np.isfinite(errors)])

    def summary(self) -> dict[str, Any]:
        (p50_u, p99_u), (p50_r, p99_r), (p50_a, p99_a) = (
            q.percentiles((50, 99)) for q in (self.ulp_q, self.rel_q, self.abs_q)
        )
        return {
            "p50_ulp": p50_u,
            "p99_ulp": p99_u,
            "max_ulp": self.max_ulp,
            "mean_ulp": self.sum_ulp / self.finite if self.finite else None,
            "p50_rel": p50_r,
            "p99_rel": p99_r,
            "max_rel": self.max_rel,
            "p50_abs": p50_a,
            "p99_abs": p99_a,
            "max_abs": self.max_abs,
            "worst": self.worst,
            "nan_mismatch": self.nan_mismatch,
            "inf_mismatch": self.inf_mismatch,
            "elements": self.elements,
        }


def no_worse(eager: dict[str, Any], fused: dict[str, Any]) -> bool:
    """The plan's rule: fused P99 ≤ eager P99 and fused max ≤ eager max (ULP error), and
    no more special-value mismatches than eager."""

    def num(v):
        return -1.0 if v is None else v

    specials = lambda d: d["nan_mismatch"] + d["inf_mismatch"]  # noqa: E731
    return (
        num(fused["p99_ulp"]) <= num(eager["p99_ulp"])
        and num(fused["max_ulp"]) <= num(eager["max_ulp"])
        and specials(fused) <= specials(eager)
    )


@dataclass
class Row:
    """One chain × dtype × distribution: both paths' summaries and per-input maxima."""

    chain: str
    dtype: str
    distribution: str
    inputs: int
    eager: dict[str, Any]
    fused: dict[str, Any]
    per_input_max: dict[str, list[float]]
    counts: dict[str, list[int]]
    #: Filled for a row that is worse: the input and element of fused's largest error.
    worst: dict[str, Any] | None = None
    #: The bootstrap's intervals and class (:func:`~..bootstrap.compare`); None when not run.
    noise: dict[str, Any] | None = None

    @property
    def fused_no_worse(self) -> bool:
        return no_worse(self.eager, self.fused)

    @property
    def worse_beyond_noise(self) -> bool:
        """The rule fails and the evidence holds: the bootstrap says worse beyond noise, or
        fused has more special-value mismatches (counts, not a statistic), or no bootstrap ran."""
        specials = lambda d: d["nan_mismatch"] + d["inf_mismatch"]  # noqa: E731
        return not self.fused_no_worse and (
            self.noise is None
            or self.noise["class"] == "worse beyond noise"
            or specials(self.fused) > specials(self.eager)
        )

    def inputs_fused_worse(self) -> int:
        """Inputs whose largest fused error exceeds their largest eager error."""
        e, f = (np.asarray(self.per_input_max[p]) for p in PATHS)
        return int(np.count_nonzero(f > e))

    def contract(self) -> dict[str, Any]:
        keys = ("p50_ulp", "p99_ulp", "max_ulp", "p99_rel", "max_rel")
        extra = ("mean_ulp", "p50_rel", "p50_abs", "p99_abs", "max_abs", "nan_mismatch", "inf_mismatch")
        return {
            "chain": self.chain,
            "dtype": self.dtype,
            "distribution": self.distribution,
            "inputs": self.inputs,
            "eager": {k: self.eager[k] for k in (*keys, *extra)},
            "fused": {k: self.fused[k] for k in (*keys, *extra)},
            "fused_no_worse": self.fused_no_worse,
            "worse_beyond_noise": self.worse_beyond_noise,
            "noise": self.noise,
            "inputs_fused_worse": self.inputs_fused_worse(),
            "per_input_max_ulp": self.per_input_max,
        }


def _chain_class(rows: list[Row]) -> str:
    """A chain is worse beyond noise if any row is, better beyond noise if every row is."""
    classes = [r.noise["class"] if r.noise else None for r in rows]
    if any(r.worse_beyond_noise for r in rows):
        return "worse beyond noise"
    if classes and all(c == "better beyond noise" for c in classes):
        return "better beyond noise"
    return "within noise"


def _fmt(v: float | None) -> str:
    """Six significant digits: P99s of correctly rounded paths differ in the fifth."""
    return "-" if v is None else f"{v:.6g}"


#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): both paths'
#: statistics and the rule of each :meth:`Row.contract` in ``chains`` (its per-input series
#: stay in result.json only), and the count of worse rows.
FIGURES = Figures(
    Rows(
        "chains",
        ("chain", "dtype", "distribution"),
        {
            **{
                f"{path}.{stat}": rule
                for path in PATHS
                for stat, rule in (
                    ("p50_ulp", ULP),
                    ("p99_ulp", ULP),
                    ("max_ulp", ULP),
                    ("p99_rel", REL),
                    ("max_rel", REL),
                )
            },
            "fused_no_worse": FLAG,
        },
        drop=("per_input_max_ulp",),
    ),
    Fields({"verdict.rows_worse": COUNT}),
)


@dataclass
class AccumulatedErrorResult:
    settings: AccumulatedErrorSettings
    rows: list[Row]
    #: Generated kernels per chain and dtype (0 would mean nothing was fused).
    kernels: dict[str, dict[str, int]] = field(default_factory=dict)

    def by_chain(self) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = {}
        for r in self.rows:
            out.setdefault(r.chain, []).append(r)
        return out

    def counter_examples(self, beyond_noise: bool = True) -> list[dict[str, Any]]:
        """Rows the plan's rule calls worse: those worse beyond noise, or (``beyond_noise``
        False) the others."""
        out = []
        for r in self.rows:
            if r.fused_no_worse or r.worse_beyond_noise != beyond_noise:
                continue
            failed = [
                name
                for name, bad in (
                    ("P99", (r.fused["p99_ulp"] or 0) > (r.eager["p99_ulp"] or 0)),
                    ("max", (r.fused["max_ulp"] or 0) > (r.eager["max_ulp"] or 0)),
                    (
                        "special values",
                        r.fused["nan_mismatch"] + r.fused["inf_mismatch"]
                        > r.eager["nan_mismatch"] + r.eager["inf_mismatch"],
                    ),
                )
                if bad
            ]
            out.append(
                {
                    "chain": r.chain,
                    "ops": CHAINS[r.chain].expression,
                    "dtype": r.dtype,
                    "distribution": r.distribution,
                    "worse_in": failed,
                    "fused": {k: r.fused[k] for k in ("p99_ulp", "max_ulp")},
                    "eager": {k: r.eager[k] for k in ("p99_ulp", "max_ulp")},
                    "inputs_fused_worse": r.inputs_fused_worse(),
                    "noise": r.noise,
                    **(r.worst or {}),
                }
            )
        return out

    def verdict(self) -> dict[str, Any]:
        chains = {c: all(r.fused_no_worse for r in rows) for c, rows in self.by_chain().items()}
        return {
            "by_chain_noise": {c: _chain_class(rows) for c, rows in self.by_chain().items()},
            "rows_worse_beyond_noise": sum(r.worse_beyond_noise for r in self.rows),
            "rule": "fused P99 <= eager P99 and fused max <= eager max (ULP error against float64, over all "
            "elements of all inputs), per chain, dtype and distribution",
            "fused_no_worse": all(chains.values()),
            "by_chain": chains,
            "rows_worse": sum(not r.fused_no_worse for r in self.rows),
            "rows": len(self.rows),
        }

    def data(self) -> dict[str, Any]:
        return {
            "chains": [r.contract() for r in self.rows],
            "counter_examples": self.counter_examples(),
            "worse_within_noise": self.counter_examples(beyond_noise=False),
            "verdict": self.verdict(),
            "fused_kernels": self.kernels,
            "expressions": {c: CHAINS[c].expression for c in self.settings.chains},
            "distributions": {d: DISTRIBUTIONS[d] for d in self.settings.distributions},
        }

    def verdicts(self) -> list[Verdict]:
        out = []
        for chain, rows in self.by_chain().items():
            bad = [r for r in rows if not r.fused_no_worse]
            measured = f"no worse in {len(rows) - len(bad)} of {len(rows)} (dtype, distribution) rows"
            if bad:
                measured += "; worse in " + "; ".join(
                    f"{r.dtype} {r.distribution} (P99 {_fmt(r.fused['p99_ulp'])} vs {_fmt(r.eager['p99_ulp'])}, "
                    f"max {_fmt(r.fused['max_ulp'])} vs {_fmt(r.eager['max_ulp'])} ULP, fused vs eager; "
                    f"{'beyond' if r.worse_beyond_noise else 'within'} noise)"
                    for r in bad
                )
            measured += f". Over the inputs' bootstrap: fused {_chain_class(rows)}"
            best = [r for r in rows if r.fused["mean_ulp"] is not None and r.eager["mean_ulp"] is not None]
            if best:
                ratio = np.mean([r.fused["mean_ulp"] / max(r.eager["mean_ulp"], 1e-300) for r in best])
                measured += f". Mean ULP error fused / eager, averaged over rows: {ratio:.2f}"
            kernels = self.kernels.get(chain, {})
            if kernels and not all(kernels.values()):
                measured += ". No fused kernel was generated for " + ", ".join(
                    d for d, n in kernels.items() if not n
                )
            out.append(
                Verdict(
                    f"{chain}: fused no worse than eager",
                    f"{CHAINS[chain].expression}: fused P99 ≤ eager P99 and fused max ≤ eager max (ULP error "
                    "against float64), in every dtype and distribution",
                    measured + ".",
                    # the rule fails only within noise: the evidence cannot tell
                    not bad or (None if not any(r.worse_beyond_noise for r in bad) else False),
                )
            )
        return out

    def tables(self) -> list[Table]:
        summary = Table(
            "Error against float64, in ULP of the result (all elements of all inputs)",
            (
                "chain",
                "dtype",
                "distribution",
                "inputs",
                "eager P50",
                "eager P99",
                "eager max",
                "fused P50",
                "fused P99",
                "fused max",
                "eager max rel",
                "fused max rel",
                "fused no worse",
            ),
            tuple(
                (
                    r.chain,
                    r.dtype,
                    r.distribution,
                    r.inputs,
                    r.eager["p50_ulp"],
                    r.eager["p99_ulp"],
                    r.eager["max_ulp"],
                    r.fused["p50_ulp"],
                    r.fused["p99_ulp"],
                    r.fused["max_ulp"],
                    r.eager["max_rel"],
                    r.fused["max_rel"],
                    r.fused_no_worse,
                )
                for r in self.rows
            ),
        )
        absolute = Table(
            "Absolute and relative error (P50 / P99 / max)",
            (
                "chain",
                "dtype",
                "distribution",
                "path",
                "abs P50",
                "abs P99",
                "abs max",
                "rel P50",
                "rel P99",
                "rel max",
                "NaN mismatches",
                "inf mismatches",
            ),
            tuple(
                (
                    r.chain,
                    r.dtype,
                    r.distribution,
                    p,
                    d["p50_abs"],
                    d["p99_abs"],
                    d["max_abs"],
                    d["p50_rel"],
                    d["p99_rel"],
                    d["max_rel"],
                    d["nan_mismatch"],
                    d["inf_mismatch"],
                )
                for r in self.rows
                for p, d in (("eager", r.eager), ("fused", r.fused))
            ),
            summary=False,
        )
        counter = Table(
            "Counter-examples (fused worse than eager beyond noise)",
            (
                "chain",
                "dtype",
                "distribution",
                "worse in",
                "input",
                "seed",
                "element",
                "fused ULP",
                "eager ULP there",
            ),
            tuple(
                (
                    e["chain"],
                    e["dtype"],
                    e["distribution"],
                    ", ".join(e["worse_in"]),
                    e.get("input_index"),
                    e.get("seed"),
                    e.get("location"),
                    e.get("fused_ulp_error"),
                    e.get("eager_ulp_error"),
                )
                for e in self.counter_examples()
            ),
        )
        return [summary, counter, self._noise_table(), absolute]

    def _noise_table(self) -> Table:
        def interval(r: Row, stat: str, path: str) -> str:
            i = r.noise[stat][path] if r.noise else None
            return "-" if i is None else f"[{i[0]:.6g}, {i[1]:.6g}]"

        return Table(
            "Bootstrap over the inputs: 95% intervals of P99 and max ULP error, and of fused − eager",
            (
                "chain",
                "dtype",
                "distribution",
                "fused vs eager",
                "plan's rule",
                *(f"{stat} {path}" for stat in ("P99", "max") for path in ("eager", "fused", "difference")),
            ),
            tuple(
                (
                    r.chain,
                    r.dtype,
                    r.distribution,
                    r.noise["class"] if r.noise else "-",
                    "no worse"
                    if r.fused_no_worse
                    else f"worse ({'beyond' if r.worse_beyond_noise else 'within'} noise)",
                    *(
                        interval(r, stat, path)
                        for stat in ("p99_ulp", "max_ulp")
                        for path in ("eager", "fused", "difference")
                    ),
                )
                for r in self.rows
            ),
        )

    def histograms(self) -> list[Histogram]:
        return [
            error_histogram(c, d, p, [r for r in self.rows if r.chain == c and r.dtype == d])
            for c in self.settings.chains
            for d in self.settings.dtypes
            for p in PATHS
            if any(r.chain == c and r.dtype == d for r in self.rows)
        ]

    def curves(self) -> list[Curve]:
        return [cdf_curve(c, [r for r in self.rows if r.chain == c]) for c in self.by_chain()]


def error_histogram(chain: str, dtype: str, path: str, rows: list[Row]) -> Histogram:
    """ULP errors of every element of every input of ``rows`` (one chain and dtype,
    all distributions), binned by :data:`EDGES`."""
    counts = np.sum([r.counts[path] for r in rows], axis=0) if rows else np.zeros(len(EDGES) + 1)
    labels = [
        f"{EDGES[0]:g}",
        *(f"({a:g}, {b:g}]" for a, b in zip(EDGES[:-1], EDGES[1:])),
        f"> {EDGES[-1]:g}",
    ]
    n = sum(r.inputs for r in rows)
    return Histogram(
        f"b_{chain}_{dtype}_{path}",
        f"{chain}, {dtype}, {path}: error against float64 ({n} inputs)",
        "error in ULP of the result",
        tuple(labels),
        tuple(int(c) for c in counts),
    )


def cdf_curve(chain: str, rows: list[Row]) -> Curve:
    """Per chain: the CDF over inputs of each input's largest ULP error, one line per
    dtype and path (all distributions pooled)."""
    dtypes = list(dict.fromkeys(r.dtype for r in rows))
    series = tuple(
        cdf_series(f"{d} {p}", [v for r in rows if r.dtype == d for v in r.per_input_max[p]])
        for d in dtypes
        for p in PATHS
    )
    return Curve(
        f"b_{chain}_cdf",
        f"{chain}: CDF of each input's largest error",
        f"largest ULP error of an input ({len({r.distribution for r in rows})} distributions pooled)",
        "share of inputs",
        series,
        xscale="log",
        steps=True,
    )


def _locate(
    backend: Backend,
    s: AccumulatedErrorSettings,
    chain: Chain,
    dtype: str,
    distribution: str,
    fused_fn,
    worst,
) -> dict[str, Any]:
    """Where fused's largest error is: input index, its seed, the element, and both paths'
    ULP errors there (the input is drawn again from its seed)."""
    from ..tensors import to_numpy

    index, location = int(worst[0]), [int(i) for i in worst[1:]]
    host = draw(chain, distribution, s, dtype, index)
    args = [t.to(backend.device) for t in host]
    ref = np.asarray(fp64_reference(chain.fn, host))
    at = tuple(location)
    errs = {
        p: float(ulp_error(to_numpy(fn(*args)), ref)[at])
        for p, fn in (("eager", backend.eager(chain.fn)), ("fused", fused_fn))
    }
    return {
        "input_index": index,
        "seed": s.seed + index,
        "location": location,
        "reference": float(ref[at]),
        "fused_ulp_error": errs["fused"],
        "eager_ulp_error": errs["eager"],
    }


def _run_chain_dtype(
    backend: Backend, s: AccumulatedErrorSettings, chain: Chain, dtype: str, emit: Emit, done: list[Row]
) -> tuple[list[Row], int]:
    from ..tensors import to_numpy

    emit(Message(f"{chain.name} ({chain.expression}), {dtype}: compiling"))
    first = [t.to(backend.device) for t in draw(chain, s.distributions[0], s, dtype, 0)]
    compiled = backend.compile(chain.fn, *first)
    fused_fn, eager_fn = compiled.fn, backend.eager(chain.fn)
    if s.fused_rounding:
        fused_fn = _rounded_through(fused_fn, s.fused_rounding)
    stage = f"B {chain.name} {dtype}"
    total, step = s.inputs * len(s.distributions), 0
    rows: list[Row] = []
    for distribution in s.distributions:
        paths: dict[str, PathErrors] | None = None
        for i in range(s.inputs):
            host = draw(chain, distribution, s, dtype, i)
            args = [t.to(backend.device) for t in host]
            ref = np.asarray(fp64_reference(chain.fn, host))
            outs = {"eager": to_numpy(eager_fn(*args)), "fused": to_numpy(fused_fn(*args))}
            if paths is None:
                paths = {p: PathErrors() for p in PATHS}
            for p in PATHS:
                paths[p].add(i, outs[p], ref)
            step += 1
            if step % s.partial_every == 0 or step == total:
                emit(Progress(stage, step, total))
                partial = [*rows, _row(chain, dtype, distribution, i + 1, paths)]
                for p in PATHS:
                    emit(HistogramEvent(error_histogram(chain.name, dtype, p, partial)))
                emit(
                    CurveEvent(cdf_curve(chain.name, [*(r for r in done if r.chain == chain.name), *partial]))
                )
        assert paths is not None
        row = _row(chain, dtype, distribution, s.inputs, paths)
        row.noise = compare(paths["eager"].tops, paths["fused"].tops, s.seed)
        if not row.fused_no_worse and row.fused["worst"] is not None:
            row.worst = _locate(backend, s, chain, dtype, distribution, fused_fn, row.fused["worst"])
        rows.append(row)
    return rows, len(compiled.kernels)


def _rounded_through(fn: Callable, dtype: str) -> Callable:
    """``fn`` whose result is rounded to ``dtype`` and back (the ``fused_rounding`` setting).
    Outside the compiled graph: inside it, Inductor keeps float32 and drops the round trip."""
    from ..tensors import torch_dtype

    low = torch_dtype(dtype)

    def rounded(*args):
        out = fn(*args)
        return out.to(low).to(out.dtype)

    return rounded


def _row(chain: Chain, dtype: str, distribution: str, inputs: int, paths: dict[str, PathErrors]) -> Row:
    return Row(
        chain.name,
        dtype,
        distribution,
        inputs,
        eager=paths["eager"].summary(),
        fused=paths["fused"].summary(),
        per_input_max={p: list(paths[p].per_input_max) for p in PATHS},
        counts={p: [int(c) for c in paths[p].counts] for p in PATHS},
    )


def run(s: AccumulatedErrorSettings, backend: Backend, emit: Emit) -> AccumulatedErrorResult:
    rows: list[Row] = []
    kernels: dict[str, dict[str, int]] = {}
    for name in s.chains:
        for dtype in s.dtypes:
            new, n = _run_chain_dtype(backend, s, CHAINS[name], dtype, emit, rows)
            rows += new
            kernels.setdefault(name, {})[dtype] = n
    return AccumulatedErrorResult(s, rows, kernels)


TASK = Task(
    id="B",
    title="Accumulated error: eager against fused",
    claim="§3.2: fused kernels compute in fp32 inside the fused region and round only at its boundary, so their "
    "accumulated error is no worse than eager (which rounds after every operator)",
    settings=AccumulatedErrorSettings,
    run=run,
    figures=FIGURES,
    priority="P1",
)
