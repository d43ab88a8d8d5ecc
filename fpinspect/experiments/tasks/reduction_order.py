"""Task C2 — reduction order: does the chunk (tile) size change the last bit of a sum?
(test plan §1.2 (3)).

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import bit_equal, error_stats, fp64_reference, ulp_diff, ulp_of

from ..backends.base import Backend, kernel_hash
from ..events import HistogramEvent, Message, Progress
from ..results import Histogram, Table, Verdict
from ..settings import TaskSettings
from ..task import Emit, Task

#: Unit roundoff of the float32 accumulator.
U32 = 2.0**-24
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

    QUICK: ClassVar = {"runs": 100}

    def __post_init__(self):
        for c in self.chunk_sizes:
            if c < 1 or c & (c - 1) or self.n % c:
                raise ValueError(f"chunk size {c} must be a power of two that divides n = {self.n}")


def chunked_sum(x, chunk: int):
    """The explicit chunked reduction of the module docstring: returns the float32
    accumulator [1] and its rounding to ``x.dtype`` [1]."""
    t = x.float().reshape(x.shape[0], -1, chunk)
    while t.shape[-1] > 1:
        half = t.shape[-1] // 2
        t = t[..., :half] + t[..., half:]
    partials = t[..., 0]
    acc = partials[:, 0]
    for i in range(1, partials.shape[1]):
        acc = acc + partials[:, i]
    return acc, acc.to(x.dtype)


def framework_sum(x):
    import torch

    return x.sum(dim=-1, dtype=torch.float32), x.sum(dim=-1)


def additions_per_term(n: int, chunk: int | None) -> int:
    """The most additions any element passes through: ``log2(c)`` in its chunk's tree
    plus ``n/c - 1`` sequential chunk additions; ``n - 1`` (recursive summation, the
    worst case) when the order is unknown."""
    if chunk is None:
        return n - 1
    return int(math.log2(chunk)) + n // chunk - 1


def error_bound(n: int, chunk: int | None, abs_sum: float) -> float:
    """Higham's bound ``γ_k · Σ|x|`` (``γ_k = k·u / (1 - k·u)``, float32 ``u``) on the
    accumulator's error for ``k`` = :func:`additions_per_term`."""
    k = additions_per_term(n, chunk)
    return k * U32 / (1 - k * U32) * abs_sum


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

    @property
    def self_deterministic(self) -> bool:
        return self.distinct_outputs == 1


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
    )


def _ulp(a: np.ndarray, b: np.ndarray) -> int:
    return int(ulp_diff(a, b).max())


@dataclass
class ReductionOrderResult:
    settings: ReductionOrderSettings
    versions: list[Version]
    reference: np.ndarray
    abs_sum: float

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
            "ulp_error": res["ulp"]["max"],
            "abs_error": res["abs"]["max"],
            "accumulator": float(v.accumulator[0]),
            "accumulator_ulp_error": acc["ulp"]["max"],
            "accumulator_abs_error": acc["abs"]["max"],
            "accumulator_bound": bound,
            "within_bound": acc["abs"]["max"] <= bound,
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
        }

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
                f"|sum| ≈ {abs(float(self.reference[0])):.6g}) hides the order."
            )
        else:
            measured = (
                f"some pairs differ (up to {max(off)} ULP of {s.dtype}) and some do not; float32 accumulators "
                f"differ by up to {max(off_acc)} float32 ULP."
            )
        out.append(
            Verdict(
                "chunk sizes differ in the last bit",
                f"versions with different chunk sizes differ by >= 1 ULP of {s.dtype}",
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
                "version", "self-deterministic", "eager = fused", f"{s.dtype} sum", "ULP error",
                "float32 accumulator", "accumulator float32-ULP error", "accumulator bound (abs)", "within bound",
            ),
            tuple(
                (
                    k, data["self_deterministic"][k], data["eager_vs_fused_bit_equal"][k], d["value"],
                    d["ulp_error"], d["accumulator"], d["accumulator_ulp_error"], d["accumulator_bound"],
                    d["within_bound"],
                )
                for k, d in data["vs_fp64"].items()
            ),
        )  # fmt: skip
        return [result, acc, fp64]

    def histograms(self) -> list[Histogram]:
        return [_error_chart(self.versions, self.reference, self.settings.dtype)]


def _error_chart(versions: list[Version], reference: np.ndarray, dtype: str) -> Histogram:
    return Histogram(
        "c2_error_vs_fp64",
        f"Error of each version's {dtype} sum against float64",
        "version (chunk size, or the framework's sum)",
        tuple(v.label for v in versions),
        tuple(float(error_stats(v.result, reference)["ulp"]["max"]) for v in versions),
        ylabel=f"error in ULP of {dtype}",
    )


def run(s: ReductionOrderSettings, backend: Backend, emit: Emit) -> ReductionOrderResult:
    from functools import partial

    from ..tensors import uniform

    host = uniform((1, s.n), s.low, s.high, s.dtype, s.seed)
    x = host.to(backend.device)
    reference = np.asarray(fp64_reference(lambda t: t.sum(dim=-1), [host]))
    abs_sum = float(np.abs(np.asarray(host.double())).sum())
    versions: list[Version] = []
    fns = [(str(c), partial(chunked_sum, chunk=c)) for c in s.chunk_sizes] + [(FRAMEWORK, framework_sum)]
    for label, fn in fns:
        versions.append(_run_version(backend, s, x, label, fn, emit))
        emit(HistogramEvent(_error_chart(versions, reference, s.dtype)))
    return ReductionOrderResult(s, versions, reference, abs_sum)


TASK = Task(
    id="C2",
    title="Reduction order: chunk size",
    claim="§1.2 (3): floating-point addition is not associative, so different chunk (tile) sizes give last-bit differences",
    settings=ReductionOrderSettings,
    run=run,
)
