"""Task C2 — reduction order: does the chunk (tile) size change the last bit of a sum?
(docs/test-plan.md §1.2 (3)).

``x`` [1, n] ~ U(low, high) in ``dtype`` is summed over its last axis by:

* one explicit chunked reduction per chunk size ``c``, in exactly this order, with
  **float32 accumulation** (the upcast fused kernels apply to sums): each chunk of ``c``
  consecutive elements is reduced as a balanced tree (element ``i`` of the first half plus
  element ``i`` of the second half, ``log2(c)`` levels); the ``n / c`` chunk sums are then
  added one after another, first to last, into a float32 accumulator; that accumulator is
  rounded once to ``dtype``;
* the framework's own ``x.sum(dim=-1)`` (order chosen by the library or the compiler;
  its float32 accumulator is read as ``x.sum(dim=-1, dtype=torch.float32)``).

Each version is compiled and run ``runs`` times (self-determinism with ``bit_equal``),
compared pairwise with ``ulp_diff`` and against the float64 sum with ``ulp_error``. A
U(0, 1) input keeps the sum away from zero, where ULP errors would be meaningless
(ulp_spec.md §5(a)).

With float32 accumulation the chunk size rarely survives the final rounding to float16
(ulp_spec.md §5(a): "with fp32 accumulation, block size does not matter at n = 16384").
So the task also runs the **same** chunked reduction with **accumulation in the storage
dtype** (``dtype``, float16 by default), the emulation of a kernel that never upcasts.
Every addition is rounded to ``dtype``, in exactly this order: inside each chunk of ``c``
consecutive elements, the balanced tree above (level by level, element ``i`` of the first
half plus element ``i`` of the second half, each sum rounded to ``dtype``); then the
``n / c`` chunk sums are added one after another, first to last, each partial sum rounded
to ``dtype`` (:func:`chunked_sum_in_dtype`). These versions run eagerly with torch ops on
the CPU, whatever the backend: they emulate an accumulation order, they are not a
framework kernel (a float16 ``+`` of two float16 tensors is one correctly rounded
addition on the CPU). Each runs ``runs`` times for self-determinism; the pairwise ULP
matrix and the errors against float64 are measured on the task's input. Whether the
error grows or shrinks with ``c`` is judged on ``trials`` inputs (seeds ``seed`` …
``seed + trials - 1``, same distribution), by the mean normwise error
``|s - ref| / Σ|x|`` in units of ``u`` of ``dtype``, against Higham's bound for this
order (:mod:`.summation`).

The chunked orders above are **this tool's own code** (explicit reshapes and additions,
compiled by the backend), not a chunk size chosen by the framework, which exposes none.
So the task also runs the plan's fallback — how the **framework's own** ``sum`` order
changes: the same ``n`` elements summed whole (``x.sum(dtype=float32)`` and ``x.sum()``)
when viewed as each shape of :func:`framework_shapes`, and at [1, n] under each compiler
setting of :meth:`~..backends.base.Backend.codegen_variants` (on the CPU: vector or scalar
code, ``cpp.simdlen``, and the thread count). Float32 accumulators are compared in float32
ULP, since the final rounding to ``dtype`` may hide the order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import bit_equal, error_stats, fp64_reference, ulp_diff, ulp_of
from fpinspect.store.figures import EXACT, Fields, Figures

from ..backends.base import Backend, kernel_hash
from ..events import HistogramEvent, Message, Progress
from ..results import Histogram, Table, Verdict
from ..settings import TaskSettings
from ..task import Emit, Task
from .summation import (
    additions_per_term,
    chunked_sum,
    chunked_sum_in_dtype,
    error_bound,
    framework_shapes,
    framework_sum,
    unit_roundoff,
    whole_sum,
)

FRAMEWORK = "sum"


@dataclass(frozen=True)
class ReductionOrderSettings(TaskSettings):
    """``n`` elements in a [1, n] row; ``chunk_sizes`` powers of two dividing ``n``;
    every version runs ``runs`` times."""

    n: int = 16384
    chunk_sizes: tuple[int, ...] = (512, 1024, 2048)
    runs: int = 1000
    low: float = 0.0
    high: float = 1.0
    trials: int = 200

    QUICK: ClassVar = {"runs": 100}

    def work(self) -> float:
        """Elements summed: n × (runs of each chunked order and of the framework's sum + trials)."""
        return float(self.n) * (self.runs * (len(self.chunk_sizes) + 1) + self.trials)

    def __post_init__(self):
        for c in self.chunk_sizes:
            if c < 1 or c & (c - 1) or self.n % c:
                raise ValueError(f"chunk size {c} must be a power of two that divides n = {self.n}")
        if self.trials < 1:
            raise ValueError(f"trials must be at least 1, not {self.trials}")


@dataclass
class Version:
    label: str
    chunk_size: int | None
    result: np.ndarray
    accumulator: np.ndarray
    eager_result: np.ndarray
    eager_accumulator: np.ndarray
    distinct_outputs: int
    kernel_hash: str | None
    #: Generated kernels of the fused version (0: nothing was fused).
    kernels: int = 0

    @property
    def self_deterministic(self) -> bool:
        return self.distinct_outputs == 1


@dataclass
class Observation:
    """The framework's own sum under one shape or compiler setting (fused)."""

    label: str
    kind: str  # "shape" or "compiler"
    accumulator: np.ndarray
    result: np.ndarray
    eager_accumulator: np.ndarray
    kernels: int


@dataclass
class StorageVersion:
    """One chunk size summed with accumulation in the storage dtype (eager, on the CPU)."""

    chunk_size: int
    result: np.ndarray
    distinct_outputs: int

    @property
    def label(self) -> str:
        return str(self.chunk_size)

    @property
    def self_deterministic(self) -> bool:
        return self.distinct_outputs == 1


@dataclass
class Trials:
    """Storage-dtype accumulation on ``inputs`` inputs (seeds ``seed`` … ``seed + inputs - 1``):
    per chunk size the normwise errors ``|s - ref| / Σ|x|`` in ``u`` of the dtype, and per
    pair of chunk sizes (in the order of ``chunk_sizes``) how many inputs gave sums that
    are not bit-equal."""

    inputs: int
    normwise_u: dict[int, list[float]]
    differ: list[list[int]]


def _run_version(backend: Backend, s: ReductionOrderSettings, x, label: str, fn, emit: Emit) -> Version:
    from ..tensors import to_numpy

    emit(Message(f"version {label}: compiling, then {s.runs} runs"))
    compiled = backend.compile(fn, x)
    first = tuple(to_numpy(t) for t in compiled.output)
    distinct = [first]
    step = max(1, s.runs // 20)
    for i in range(s.runs):
        out = tuple(to_numpy(t) for t in compiled.fn(x))
        if not any(all(bit_equal(o, d) for o, d in zip(out, seen)) for seen in distinct):
            distinct.append(out)
        if (i + 1) % step == 0 or i + 1 == s.runs:
            emit(Progress(f"version {label}", i + 1, s.runs))
    eager = tuple(to_numpy(t) for t in backend.eager(fn)(x))
    return Version(
        label=label,
        chunk_size=None if label == FRAMEWORK else int(label),
        accumulator=first[0],
        result=first[1],
        eager_accumulator=eager[0],
        eager_result=eager[1],
        distinct_outputs=len(distinct),
        kernel_hash=kernel_hash(compiled.kernels),
        kernels=len(compiled.kernels),
    )


def _run_storage_version(s: ReductionOrderSettings, host, chunk: int, emit: Emit) -> StorageVersion:
    from ..tensors import to_numpy

    label = f"{s.dtype} accumulation, chunk {chunk}"
    emit(Message(f"{label}: {s.runs} eager runs on the CPU"))
    first = to_numpy(chunked_sum_in_dtype(host, chunk))
    distinct = [first]
    step = max(1, s.runs // 20)
    for i in range(s.runs):
        out = to_numpy(chunked_sum_in_dtype(host, chunk))
        if not any(bit_equal(out, seen) for seen in distinct):
            distinct.append(out)
        if (i + 1) % step == 0 or i + 1 == s.runs:
            emit(Progress(label, i + 1, s.runs))
    return StorageVersion(chunk, first, len(distinct))


def _input(s: ReductionOrderSettings, seed: int):
    """The [1, n] input drawn with ``seed``, its float64 sum and ``Σ|x|``."""
    from ..tensors import uniform

    host = uniform((1, s.n), s.low, s.high, s.dtype, seed)
    reference = np.asarray(fp64_reference(lambda t: t.sum(dim=-1), [host]))
    abs_sum = float(np.abs(np.asarray(host.double())).sum())
    return host, reference, abs_sum


def _run_trials(s: ReductionOrderSettings, emit: Emit) -> Trials:
    from ..tensors import to_numpy

    sizes = s.chunk_sizes
    u = unit_roundoff(s.dtype)
    normwise: dict[int, list[float]] = {c: [] for c in sizes}
    differ = [[0] * len(sizes) for _ in sizes]
    stage = f"{s.dtype} accumulation on {s.trials} inputs"
    emit(Message(f"{stage} (seeds {s.seed} to {s.seed + s.trials - 1})"))
    step = max(1, s.trials // 20)
    for t in range(s.trials):
        host, reference, abs_sum = _input(s, s.seed + t)
        sums = [to_numpy(chunked_sum_in_dtype(host, c)) for c in sizes]
        for c, r in zip(sizes, sums):
            normwise[c].append(error_stats(r, reference).abs.max / abs_sum / u)
        for i, a in enumerate(sums):
            for j, b in enumerate(sums):
                differ[i][j] += not bit_equal(a, b)
        if (t + 1) % step == 0 or t + 1 == s.trials:
            emit(Progress(stage, t + 1, s.trials))
    return Trials(s.trials, normwise, differ)


def _ulp(a: np.ndarray, b: np.ndarray) -> int:
    return int(ulp_diff(a, b).max())


def _observe(backend: Backend, s: ReductionOrderSettings, host, emit: Emit) -> list[Observation]:
    """The framework's own whole sum at each shape, then at [1, n] under each compiler
    variant (the default variant is the [1, n] shape, not compiled twice)."""
    from ..tensors import to_numpy

    out: list[Observation] = []

    def observe(label: str, kind: str, x) -> Observation:
        compiled = backend.compile(whole_sum, x)
        acc, res = (to_numpy(t) for t in compiled.output)
        eager = to_numpy(backend.eager(whole_sum)(x)[0])
        return Observation(
            label, kind, acc.reshape(1), res.reshape(1), eager.reshape(1), len(compiled.kernels)
        )

    emit(Message("the framework's own sum: the same elements at other shapes and compiler settings"))
    x = host.to(backend.device)
    for shape in framework_shapes(s.n):
        out.append(observe(f"shape {list(shape)}", "shape", x.reshape(shape)))
    for v in backend.codegen_variants():
        if not v.options and v.threads is None:
            out.append(
                Observation(
                    v.label,
                    "compiler",
                    *(getattr(out[0], f) for f in ("accumulator", "result", "eager_accumulator", "kernels")),
                )
            )
            continue
        with backend.variant(v):
            out.append(observe(v.label, "compiler", x))
    return out


#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): fields of
#: :meth:`ReductionOrderResult.data`.
FIGURES = Figures(
    Fields(
        {
            "ulp_matrix.*.*": EXACT,
            "eager_vs_fused_bit_equal.*": EXACT,
            "self_deterministic.*": EXACT,
        }
    ),
)


@dataclass
class ReductionOrderResult:
    settings: ReductionOrderSettings
    versions: list[Version]
    reference: np.ndarray
    abs_sum: float
    storage: list[StorageVersion]
    trials: Trials
    observations: list[Observation] = field(default_factory=list)

    @property
    def chunked(self) -> list[Version]:
        return [v for v in self.versions if v.chunk_size is not None]

    @property
    def framework(self) -> Version:
        return next(v for v in self.versions if v.chunk_size is None)

    def matrix(self, field: str) -> list[list[int]]:
        vs = self.chunked
        return [[_ulp(getattr(a, field), getattr(b, field)) for b in vs] for a in vs]

    def vs_fp64(self, v: Version) -> dict[str, Any]:
        """``v`` against the float64 sum: the result's error in ULP of ``dtype``, the
        accumulator's in float32 ULP, and the accumulator's bound (:func:`error_bound`)."""
        res = error_stats(v.result, self.reference)
        acc = error_stats(v.accumulator, self.reference)
        bound = error_bound(self.settings.n, v.chunk_size, self.abs_sum)
        return {
            "value": float(v.result[0]),
            "ulp_error": res.ulp.max,
            "abs_error": res.abs.max,
            "accumulator": float(v.accumulator[0]),
            "accumulator_ulp_error": acc.ulp.max,
            "accumulator_abs_error": acc.abs.max,
            "accumulator_bound": bound,
            "within_bound": acc.abs.max <= bound,
        }

    def storage_matrix(self) -> list[list[int]]:
        return [[_ulp(a.result, b.result) for b in self.storage] for a in self.storage]

    def storage_vs_fp64(self, v: StorageVersion) -> dict[str, Any]:
        """``v`` (storage-dtype accumulation) against the float64 sum: the error in ULP of
        ``dtype``, the absolute and the normwise error (``/ Σ|x|``, in ``u`` of ``dtype``),
        and Higham's bound of this order with ``dtype``'s ``u``."""
        s = self.settings
        st = error_stats(v.result, self.reference)
        u = unit_roundoff(s.dtype)
        bound = error_bound(s.n, v.chunk_size, self.abs_sum, u)
        return {
            "value": float(v.result[0]),
            "ulp_error": st.ulp.max,
            "abs_error": st.abs.max,
            "normwise_error_u": st.abs.max / self.abs_sum / u,
            "bound_factor": additions_per_term(s.n, v.chunk_size),
            "bound": bound,
            "within_bound": st.abs.max <= bound,
        }

    def trend(self) -> list[dict[str, Any]]:
        """Mean normwise error over the trials from each chunk size to the next larger
        one: the measured ratio against the ratio of the bounds and its square root
        (typical errors grow like the square root of the bound factor, ulp_spec.md §5(a))."""
        n, u = self.settings.n, unit_roundoff(self.settings.dtype)
        mean = {c: float(np.mean(e)) for c, e in self.trials.normwise_u.items()}
        sizes = sorted(mean)
        out = []
        for a, b in zip(sizes, sizes[1:]):
            bound_ratio = error_bound(n, b, 1.0, u) / error_bound(n, a, 1.0, u)
            out.append(
                {
                    "from": a,
                    "to": b,
                    "measured_ratio": mean[b] / mean[a] if mean[a] > 0 else None,
                    "bound_ratio": bound_ratio,
                    "typical_ratio": math.sqrt(bound_ratio),
                }
            )
        return out

    def storage_data(self) -> dict[str, Any]:
        s, tr = self.settings, self.trials
        return {
            "accumulation_dtype": s.dtype,
            "order": (
                f"balanced tree inside each chunk, then the chunk sums first to last; every addition "
                f"rounded to {s.dtype}"
            ),
            "ran_on": "cpu, eager torch ops (an emulation of the accumulation order, not a framework kernel)",
            "ulp_matrix": self.storage_matrix(),
            "self_deterministic": {v.label: v.self_deterministic for v in self.storage},
            "vs_fp64": {v.label: self.storage_vs_fp64(v) for v in self.storage},
            "trials": {
                "inputs": tr.inputs,
                "seeds": [s.seed, s.seed + tr.inputs - 1],
                "mean_normwise_error_u": {str(c): float(np.mean(e)) for c, e in tr.normwise_u.items()},
                "max_normwise_error_u": {str(c): float(np.max(e)) for c, e in tr.normwise_u.items()},
                "differ_share": [[d / tr.inputs for d in row] for row in tr.differ],
                "trend": self.trend(),
            },
        }

    def data(self) -> dict[str, Any]:
        fw = self.framework
        return {
            "chunk_sizes": list(self.settings.chunk_sizes),
            "ulp_matrix": self.matrix("result"),
            "accumulator_ulp_matrix": self.matrix("accumulator"),
            "self_deterministic": {v.label: v.self_deterministic for v in self.versions},
            "vs_fp64": {v.label: self.vs_fp64(v) for v in self.versions},
            "reference": float(self.reference[0]),
            "abs_sum": self.abs_sum,
            "accumulation_dtype": "float32",
            "framework_vs_chunks": {v.label: _ulp(fw.result, v.result) for v in self.chunked},
            "eager_vs_fused_bit_equal": {
                v.label: bit_equal(v.result, v.eager_result) and bit_equal(v.accumulator, v.eager_accumulator)
                for v in self.versions
            },
            "kernel_hashes": {v.label: v.kernel_hash for v in self.versions},
            "kernels": {v.label: v.kernels for v in self.versions},
            "chunked_orders_are": (
                "fpinspect's own code (explicit reshapes and additions in the order of the task's docstring, "
                "compiled by the backend), not a chunk size the framework chose"
            ),
            "storage_dtype_accumulation": self.storage_data(),
            "framework_order": self.framework_order(),
        }

    def framework_order(self) -> dict[str, Any]:
        """Each observation of the framework's own sum against the first of its kind: the
        float32 accumulators in float32 ULP, the results in ULP of ``dtype``."""
        out: dict[str, Any] = {}
        for kind in ("shape", "compiler"):
            obs = [o for o in self.observations if o.kind == kind]
            out[kind] = [
                {
                    "label": o.label,
                    "accumulator": float(o.accumulator[0]),
                    "result": float(o.result[0]),
                    "accumulator_ulp_vs_first": _ulp(o.accumulator, obs[0].accumulator),
                    "result_ulp_vs_first": _ulp(o.result, obs[0].result),
                    "accumulator_ulp_error": float(error_stats(o.accumulator, self.reference).ulp.max),
                    "eager_equal": bit_equal(o.accumulator, o.eager_accumulator),
                    "kernels": o.kernels,
                }
                for o in obs
            ]
        return out

    def verdicts(self) -> list[Verdict]:
        s = self.settings
        det = {v.label: v.self_deterministic for v in self.versions}
        out = [
            Verdict(
                "each version is self-consistent",
                f"{s.runs} runs of each version are bit-identical",
                ", ".join(
                    f"{k}: {'1 distinct output' if ok else 'several distinct outputs'}"
                    for k, ok in det.items()
                )
                + ".",
                all(det.values()),
            )
        ]
        m, acc = self.matrix("result"), self.matrix("accumulator")
        k = len(m)
        off = [m[i][j] for i in range(k) for j in range(k) if i != j]
        off_acc = [acc[i][j] for i in range(k) for j in range(k) if i != j]
        spacing = float(ulp_of(self.reference, s.dtype)[0])
        if off and min(off) >= 1:
            measured = f"every pair of chunk sizes differs, by {min(off)} to {max(off)} ULP of {s.dtype}."
        elif off and max(off) == 0:
            measured = (
                f"all chunk sizes give the same {s.dtype} sum. Their float32 accumulators differ by up to "
                f"{max(off_acc)} float32 ULP, but the final rounding to {s.dtype} (spacing {spacing:g} at "
                f"|sum| ≈ {abs(float(self.reference[0])):.6g}) hides the order (see the rows on "
                f"{s.dtype} accumulation for a kernel that does not upcast)."
            )
        else:
            measured = (
                f"some pairs differ (up to {max(off)} ULP of {s.dtype}) and some do not; float32 accumulators "
                f"differ by up to {max(off_acc)} float32 ULP."
            )
        out.append(
            Verdict(
                "chunk sizes differ in the last bit",
                f"versions with different chunk sizes differ by >= 1 ULP of {s.dtype} (the chunked orders are this "
                "tool's own code, compiled by the backend: the framework exposes no chunk size)",
                measured,
                bool(off) and min(off) >= 1,
            )
        )
        fp64 = {v.label: self.vs_fp64(v) for v in self.versions}
        out.append(
            Verdict(
                "errors within the rounding-error range",
                "every version's error against float64 stays within the bound of its summation order",
                "; ".join(
                    f"{k}: accumulator error {d['accumulator_abs_error']:.3g} (bound {d['accumulator_bound']:.3g}), "
                    f"result {d['ulp_error']:.3g} ULP"
                    for k, d in fp64.items()
                )
                + f". The bound of '{FRAMEWORK}' assumes float32 accumulation in an unknown order.",
                all(d["within_bound"] for d in fp64.values()),
            )
        )
        return out + self.storage_verdicts() + self.framework_verdicts()

    def framework_verdicts(self) -> list[Verdict]:
        order = self.framework_order()
        if not any(order.values()):
            return []
        parts, changed = [], False
        for kind, what in (("shape", "shapes"), ("compiler", "compiler settings")):
            rows = order[kind]
            if not rows:
                continue
            accs = {r["accumulator"] for r in rows}
            results = {r["result"] for r in rows}
            changed |= len(accs) > 1
            parts.append(
                f"over {len(rows)} {what} ({', '.join(r['label'] for r in rows)}): {len(accs)} distinct float32 "
                f"accumulator(s), up to {max(r['accumulator_ulp_vs_first'] for r in rows)} float32 ULP from the "
                f"first, and {len(results)} distinct {self.settings.dtype} result(s)"
            )
        return [
            Verdict(
                "the framework's own order changes",
                "the plan's fallback when the framework exposes no chunk size: its own sum order changes with the "
                "shape (and, on the CPU, with cpp.simdlen and the thread count)",
                "; ".join(parts)
                + "."
                + ("" if changed else " The framework's own order gave the same sum every time here."),
                True if changed else None,
            )
        ]

    def storage_verdicts(self) -> list[Verdict]:
        s = self.settings
        d = self.storage_data()
        labels = [v.label for v in self.storage]
        k = len(labels)
        m, share = d["ulp_matrix"], d["trials"]["differ_share"]
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        per_pair = ", ".join(f"{labels[i]} vs {labels[j]}: {m[i][j]}" for i, j in pairs)
        shares = ", ".join(f"{labels[i]} vs {labels[j]} {share[i][j]:.0%}" for i, j in pairs)
        off = [m[i][j] for i, j in pairs]
        det = d["self_deterministic"]
        out = [
            Verdict(
                f"{s.dtype} accumulation: chunk sizes differ in the last bit",
                f"with every addition rounded to {s.dtype}, versions with different chunk sizes differ by "
                f">= 1 ULP of {s.dtype} (each version self-consistent)",
                f"on the task's input, ULP of {s.dtype} between the sums: {per_pair}. Over "
                f"{d['trials']['inputs']} inputs the sums differ in: {shares}. {s.runs} eager runs of each "
                f"version: {'bit-identical' if all(det.values()) else 'several distinct outputs'}.",
                bool(off) and min(off) >= 1 and all(det.values()),
            )
        ]
        trend = d["trials"]["trend"]
        if trend:
            sizes = sorted(s.chunk_sizes)
            factors = ", ".join(str(additions_per_term(s.n, c)) for c in sizes)
            mean = d["trials"]["mean_normwise_error_u"]

            def direction(r: float | None) -> str:
                return "?" if r is None else "grows" if r > 1 else "shrinks" if r < 1 else "stays"

            predicted = ", ".join(
                f"{t['from']}→{t['to']}: {direction(t['bound_ratio'])} (bound ×{t['bound_ratio']:.2f}, "
                f"typical ×{t['typical_ratio']:.2f})"
                for t in trend
            )
            measured = ", ".join(
                f"{t['from']}→{t['to']}: {direction(t['measured_ratio'])}"
                + ("" if t["measured_ratio"] is None else f" (×{t['measured_ratio']:.2f})")
                for t in trend
            )
            fp64 = d["vs_fp64"]
            out.append(
                Verdict(
                    f"{s.dtype} accumulation: error against chunk size follows the bound",
                    f"the error follows Higham's bound for this order, γ_k·Σ|x| with k = log2(c) + n/c - 1 = "
                    f"{factors} for c = {', '.join(map(str, sizes))}: {predicted}. (ulp_spec.md §5(a)'s growth "
                    f"of 1.3-1.6× per doubling is for recursive summation inside each block, k = c + n/c - 2.)",
                    f"mean normwise error over {d['trials']['inputs']} inputs, in u = 2^{math.log2(unit_roundoff(s.dtype)):.0f}: "
                    + ", ".join(f"{c}: {mean[str(c)]:.3g}" for c in sizes)
                    + f"; {measured}. On the task's input: "
                    + ", ".join(f"{c}: {fp64[str(c)]['normwise_error_u']:.3g}" for c in sizes)
                    + ".",
                    all(
                        t["measured_ratio"] is not None
                        and direction(t["measured_ratio"]) == direction(t["bound_ratio"])
                        for t in trend
                    ),
                )
            )
        fp64 = d["vs_fp64"]
        worst = {c: max(e) for c, e in self.trials.normwise_u.items()}
        u = unit_roundoff(s.dtype)
        out.append(
            Verdict(
                f"{s.dtype} accumulation: errors within the rounding-error range",
                f"every version's error stays within Higham's bound of its order with {s.dtype}'s u",
                "; ".join(
                    f"{c}: error {v['abs_error']:.3g} (bound {v['bound']:.3g}), {v['ulp_error']:.3g} ULP"
                    for c, v in fp64.items()
                )
                + f". Over {self.trials.inputs} inputs the largest normwise error is "
                + ", ".join(
                    f"{c}: {worst[c]:.3g}u (bound {error_bound(s.n, c, 1.0, u) / u:.3g}u)"
                    for c in s.chunk_sizes
                )
                + ".",
                all(v["within_bound"] for v in fp64.values())
                and all(worst[c] * u <= error_bound(s.n, c, 1.0, u) for c in s.chunk_sizes),
            )
        )
        return out

    def tables(self) -> list[Table]:
        labels = [v.label for v in self.chunked]
        s = self.settings
        result = Table(
            f"ULP matrix of the {s.dtype} sums (chunk sizes)",
            ("chunk", *labels),
            tuple((a, *row) for a, row in zip(labels, self.matrix("result"))),
        )
        acc = Table(
            "ULP matrix of the float32 accumulators (chunk sizes)",
            ("chunk", *labels),
            tuple((a, *row) for a, row in zip(labels, self.matrix("accumulator"))),
        )
        data = self.data()
        fp64 = Table(
            f"Against the float64 sum {float(self.reference[0])!r}",
            (
                "version",
                "self-deterministic",
                "eager = fused",
                f"{s.dtype} sum",
                "ULP error",
                "float32 accumulator",
                "accumulator float32-ULP error",
                "accumulator bound (abs)",
                "within bound",
            ),
            tuple(
                (
                    k,
                    data["self_deterministic"][k],
                    data["eager_vs_fused_bit_equal"][k],
                    d["value"],
                    d["ulp_error"],
                    d["accumulator"],
                    d["accumulator_ulp_error"],
                    d["accumulator_bound"],
                    d["within_bound"],
                )
                for k, d in data["vs_fp64"].items()
            ),
        )
        return [result, acc, fp64, *self.storage_tables(), *self.framework_tables()]

    def framework_tables(self) -> list[Table]:
        order = self.framework_order()
        s = self.settings
        return [
            Table(
                f"The framework's own sum of the same {s.n} elements, by {kind} (fused)",
                (
                    kind,
                    "float32 accumulator",
                    "float32 ULP vs first",
                    f"{s.dtype} sum",
                    "ULP vs first",
                    "accumulator float32-ULP error",
                    "eager = fused",
                    "kernels",
                ),
                tuple(
                    (
                        r["label"],
                        r["accumulator"],
                        r["accumulator_ulp_vs_first"],
                        r["result"],
                        r["result_ulp_vs_first"],
                        r["accumulator_ulp_error"],
                        r["eager_equal"],
                        r["kernels"],
                    )
                    for r in rows
                ),
            )
            for kind, rows in (("shape", order["shape"]), ("compiler setting", order["compiler"]))
            if rows
        ]

    def storage_tables(self) -> list[Table]:
        s = self.settings
        d = self.storage_data()
        labels = [v.label for v in self.storage]
        matrix = Table(
            f"ULP matrix of the {s.dtype} sums with {s.dtype} accumulation (chunk sizes; eager on the CPU)",
            ("chunk", *labels),
            tuple((a, *row) for a, row in zip(labels, d["ulp_matrix"])),
        )
        fp64 = Table(
            f"{s.dtype} accumulation against the float64 sum {float(self.reference[0])!r}",
            (
                "chunk",
                "self-deterministic",
                f"{s.dtype} sum",
                "ULP error",
                "abs error",
                "normwise error (u)",
                "bound factor k",
                "bound (abs)",
                "within bound",
            ),
            tuple(
                (
                    c,
                    d["self_deterministic"][c],
                    v["value"],
                    v["ulp_error"],
                    v["abs_error"],
                    v["normwise_error_u"],
                    v["bound_factor"],
                    v["bound"],
                    v["within_bound"],
                )
                for c, v in d["vs_fp64"].items()
            ),
        )
        tr = d["trials"]
        ratios = {t["to"]: t for t in tr["trend"]}
        trend = Table(
            f"{s.dtype} accumulation on {tr['inputs']} inputs: normwise error against chunk size",
            (
                "chunk",
                "bound factor k",
                "mean error (u)",
                "max error (u)",
                "× previous chunk",
                "bound ×",
                "√(bound ×)",
            ),
            tuple(
                (
                    c,
                    additions_per_term(s.n, c),
                    tr["mean_normwise_error_u"][str(c)],
                    tr["max_normwise_error_u"][str(c)],
                    *(
                        (ratios[c]["measured_ratio"], ratios[c]["bound_ratio"], ratios[c]["typical_ratio"])
                        if c in ratios
                        else (None, None, None)
                    ),
                )
                for c in sorted(s.chunk_sizes)
            ),
        )
        return [matrix, fp64, trend]

    def histograms(self) -> list[Histogram]:
        return [
            _error_chart(self.versions, self.reference, self.settings.dtype),
            _trend_chart(self.settings, self.trials),
        ]


def _error_chart(versions: list[Version], reference: np.ndarray, dtype: str) -> Histogram:
    return Histogram(
        "c2_error_vs_fp64",
        f"Error of each version's {dtype} sum against float64",
        "version (chunk size, or the framework's sum)",
        tuple(v.label for v in versions),
        tuple(float(error_stats(v.result, reference).ulp.max) for v in versions),
        ylabel=f"error in ULP of {dtype}",
    )


def _trend_chart(s: ReductionOrderSettings, trials: Trials) -> Histogram:
    sizes = sorted(s.chunk_sizes)
    return Histogram(
        "c2_storage_accumulation_error",
        f"Mean normwise error, {s.dtype} accumulation",
        f"chunk size ({trials.inputs} inputs)",
        tuple(str(c) for c in sizes),
        tuple(float(np.mean(trials.normwise_u[c])) for c in sizes),
        ylabel=f"|sum - fp64| / Σ|x|, in u of {s.dtype}",
    )


def run(s: ReductionOrderSettings, backend: Backend, emit: Emit) -> ReductionOrderResult:
    from functools import partial

    host, reference, abs_sum = _input(s, s.seed)
    x = host.to(backend.device)
    versions: list[Version] = []
    fns = [(str(c), partial(chunked_sum, chunk=c)) for c in s.chunk_sizes] + [(FRAMEWORK, framework_sum)]
    for label, fn in fns:
        versions.append(_run_version(backend, s, x, label, fn, emit))
        emit(HistogramEvent(_error_chart(versions, reference, s.dtype)))
    storage = [_run_storage_version(s, host, c, emit) for c in s.chunk_sizes]
    trials = _run_trials(s, emit)
    emit(HistogramEvent(_trend_chart(s, trials)))
    observations = _observe(backend, s, host, emit)
    return ReductionOrderResult(s, versions, reference, abs_sum, storage, trials, observations)


TASK = Task(
    id="C2",
    title="Reduction order: chunk size",
    claim="§1.2 (3): floating-point addition is not associative, so different chunk (tile) sizes give last-bit differences",
    settings=ReductionOrderSettings,
    run=run,
    figures=FIGURES,
    priority="P0",
)
