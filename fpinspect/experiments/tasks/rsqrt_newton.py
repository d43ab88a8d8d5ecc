"""Task C3 — rsqrt iterations: does the iteration count change the last bit? (docs/test-plan.md
§1.2 (4)).

The framework's ``torch.rsqrt`` (eager and fused) is compared with Newton–Raphson
variants whose iteration count we control, all against the float64 ``1/sqrt(x)``:

* **initial estimate** — the bit trick ``y0 = float32_from_bits(0x5F3759DF - (bits(x) >> 1))``
  on the float32 value of ``x`` (relative error at most about 3.4e-2);
* **iteration** — ``y ← y · (1.5 − ((0.5·x)·y)·y)``, every operation in float32;
* after ``k`` iterations ``y`` is rounded once to ``dtype``.

Convergence is quadratic (``e' = −(3/2)e² − (1/2)e³``), so each step roughly doubles the
correct bits until float32 rounding inside the iteration sets the floor (ulp_spec.md
§5(b)). No compiler exposes an iteration-count switch for its own rsqrt
(torch_fusion.md §1.6), so the Newton–Raphson variants are **this tool's own code**
(torch ops, compiled by the backend), not the framework's algorithm. The plan's fallback
is measured too: the framework's rsqrt against a numpy float32 ``1 / sqrt(x)`` rounded to
``dtype``, and the framework's fused rsqrt under each compiler variant of the backend
that keeps the thread count (on the CPU: vector and scalar code, ``cpp.simdlen``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import bit_equal, error_stats, fp64_reference, ulp_error
from fpinspect.store.figures import EXACT, ULP, Fields, Figures, Rows

from ..backends.base import Backend, computation_lines
from ..events import HistogramEvent, Message, Progress
from ..results import Histogram, Table, Verdict, ulp_error_histogram, ulp_error_shares
from ..settings import TaskSettings
from ..task import Emit, Task

MAGIC = 0x5F3759DF


@dataclass(frozen=True)
class RsqrtSettings(TaskSettings):
    """``x`` ~ U(low, high) of ``shape``; one Newton–Raphson variant per entry of
    ``iterations``."""

    shape: tuple[int, ...] = (1024, 1024)
    low: float = 0.01
    high: float = 100.0
    iterations: tuple[int, ...] = (1, 2, 3)

    QUICK: ClassVar = {"shape": (512, 512)}

    def work(self) -> float:
        """Elements computed: the elements of ``shape`` × the variants of ``iterations``."""
        return float(math.prod(self.shape)) * len(self.iterations)


def newton_rsqrt(x, iterations: int):
    """Newton–Raphson ``1/sqrt(x)`` from the bit-trick estimate, in float32 (module
    docstring), rounded to ``x.dtype``."""
    import torch

    xf = x.float()
    y = (MAGIC - (xf.view(torch.int32) >> 1)).view(torch.float32)
    half_x = 0.5 * xf
    for _ in range(iterations):
        y = y * (1.5 - half_x * y * y)
    return y.to(x.dtype)


@dataclass
class Variant:
    label: str
    iterations: int | None
    eager: np.ndarray
    fused: np.ndarray
    kernel_lines: list[str]
    #: Generated kernels of the fused version (0: nothing was fused).
    kernels: int = 0


def _stats(a: np.ndarray, reference: np.ndarray) -> dict[str, Any]:
    """ULP error statistics against float64 and the shares of
    :func:`~..results.ulp_error_shares` (share ``(0, 0.5]``: correctly rounded)."""
    u = error_stats(a, reference).ulp
    shares = ulp_error_shares(ulp_error(a, reference))
    return {"max_ulp": u.max, "mean_ulp": u.mean, "p99_ulp": u.p99, "share": shares}


def _summary(st: dict[str, Any]) -> dict[str, Any]:
    return {k: st[k] for k in ("max_ulp", "mean_ulp", "p99_ulp")}


#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): each row of
#: :meth:`RsqrtResult.data`'s ``by_iterations``, and the framework's bit-equality.
FIGURES = Figures(
    Rows("by_iterations", ("iterations",), {"max_ulp": ULP, "p99_ulp": ULP, "mean_ulp": ULP}),
    Fields({"framework.eager_vs_fused_bit_equal": EXACT}),
)


@dataclass
class RsqrtResult:
    settings: RsqrtSettings
    variants: list[Variant]
    reference: np.ndarray
    #: The plan's fallback: numpy's float32 ``1 / sqrt(x)`` rounded to ``dtype``.
    numpy_fp32: np.ndarray | None = None
    #: The framework's fused rsqrt under each compiler variant, by label.
    compiler_variants: dict[str, np.ndarray] = field(default_factory=dict)
    #: ``errors[label][mode]``: statistics of that output against float64.
    errors: dict[str, dict[str, dict[str, Any]]] = field(init=False)
    #: Share of elements where each Newton variant's fused output differs from the
    #: framework's fused output, by iteration count.
    differs: dict[int, float] = field(init=False)

    def __post_init__(self):
        self.errors = {
            v.label: {"eager": _stats(v.eager, self.reference), "fused": _stats(v.fused, self.reference)}
            for v in self.variants
        }
        fw = self.framework.fused
        self.differs = {v.iterations: 1.0 - error_stats(v.fused, fw).ulp.share.zero for v in self.newton}

    @property
    def framework(self) -> Variant:
        return self.variants[0]

    @property
    def newton(self) -> list[Variant]:
        return sorted(self.variants[1:], key=lambda v: v.iterations)

    def data(self) -> dict[str, Any]:
        fw = self.framework
        return {
            "by_iterations": [
                {"iterations": v.iterations, **_summary(self.errors[v.label]["fused"])} for v in self.newton
            ],
            "framework": {
                **self.errors[fw.label],
                "eager_vs_fused_bit_equal": bit_equal(fw.eager, fw.fused),
                "fused_kernel_lines": fw.kernel_lines,
            },
            "kernels": {v.label: v.kernels for v in self.variants},
            "fallback": self.fallback(),
            "newton": {
                "written_by": "fpinspect (torch ops compiled by the backend), not the framework's rsqrt",
                "initial_estimate": f"float32 bits 0x{MAGIC:08X} - (bits(x) >> 1)",
                "iteration": "y = y * (1.5 - ((0.5 * x) * y) * y), float32",
                "share_differing_from_framework": {str(k): d for k, d in self.differs.items()},
                "eager_vs_fused_bit_equal": {
                    str(v.iterations): bit_equal(v.eager, v.fused) for v in self.newton
                },
            },
        }

    def fallback(self) -> dict[str, Any]:
        """The framework's fused rsqrt against numpy float32 and across compiler variants."""
        fw = self.framework.fused
        out: dict[str, Any] = {}
        if self.numpy_fp32 is not None:
            out["numpy_float32"] = {
                "expression": "numpy 1 / sqrt(float32(x)), rounded to the dtype",
                "share_differing_from_framework": 1.0 - error_stats(self.numpy_fp32, fw).ulp.share.zero,
                **_summary(_stats(self.numpy_fp32, self.reference)),
            }
        out["compiler_variants"] = {
            label: {
                "bit_equal_to_default": bit_equal(a, fw),
                "max_ulp_vs_default": error_stats(a, fw).ulp.max,
            }
            for label, a in self.compiler_variants.items()
        }
        return out

    def verdicts(self) -> list[Verdict]:
        diffs = self.differs
        same = [k for k, d in diffs.items() if d == 0]
        out = [
            Verdict(
                "iteration variants differ from the framework",
                "every Newton–Raphson rsqrt (this tool's own code; the framework's iteration count cannot be set) "
                "differs from the framework's rsqrt in the last bit",
                "share of elements differing from the framework's fused rsqrt: "
                + ", ".join(f"{k} iteration(s) {d:.2%}" for k, d in diffs.items())
                + "."
                + (
                    f" Identical to the framework: {', '.join(f'{k} iteration(s)' for k in same)}."
                    if same
                    else ""
                ),
                bool(diffs) and not same,
            )
        ]
        rows = [(v.iterations, self.errors[v.label]["fused"]) for v in self.newton]
        means = [r["mean_ulp"] for _, r in rows]
        maxes = [r["max_ulp"] for _, r in rows]
        monotone = all(a >= b for a, b in zip(means, means[1:])) and all(
            a >= b for a, b in zip(maxes, maxes[1:])
        )
        improves = len(rows) > 1 and means[-1] < means[0]
        floor = ""
        if len(rows) > 1 and means[-1] == means[-2]:
            floor = (
                f" From {rows[-2][0]} to {rows[-1][0]} iterations nothing changes: float32 rounding inside the "
                f"iteration and the final rounding to {self.settings.dtype} set the floor."
            )
        out.append(
            Verdict(
                "more iterations, smaller error",
                "the ULP error against float64 shrinks as the iteration count grows",
                "; ".join(
                    f"{k} iteration(s): max {r['max_ulp']:.3g}, mean {r['mean_ulp']:.3g} ULP" for k, r in rows
                )
                + "."
                + floor,
                monotone and improves,
            )
        )
        fb = self.fallback()
        if "numpy_float32" in fb:
            n = fb["numpy_float32"]
            variants = fb["compiler_variants"]
            changed = [k for k, v in variants.items() if not v["bit_equal_to_default"]]
            out.append(
                Verdict(
                    "fallback: the framework's rsqrt against numpy float32",
                    "the plan's fallback when the iteration count cannot be set: compare the framework's rsqrt with "
                    "a numpy float32 implementation; a different algorithm shows as a difference",
                    f"numpy float32 1/sqrt differs from the framework's fused rsqrt in "
                    f"{n['share_differing_from_framework']:.2%} of elements (its error: max {n['max_ulp']:.3g}, mean "
                    f"{n['mean_ulp']:.3g} ULP). Compiler variants "
                    + (", ".join(variants) if variants else "(none on this device)")
                    + (
                        f": {', '.join(changed)} change the framework's result."
                        if changed
                        else ": no change."
                    )
                    + (
                        ""
                        if n["share_differing_from_framework"] > 0
                        else " The framework's rsqrt is numpy's correctly rounded float32 1/sqrt here, so the "
                        "fallback cannot show an algorithm difference on this device."
                    ),
                    True if n["share_differing_from_framework"] > 0 else None,
                )
            )
        return out

    def tables(self) -> list[Table]:
        return [
            Table(
                "Error against float64 1/sqrt(x), in ULP of the result (<= 0.5 is correctly rounded)",
                (
                    "variant",
                    "mode",
                    "max",
                    "mean",
                    "p99",
                    *(f"share {k}" for k in self.errors[self.framework.label]["eager"]["share"]),
                ),
                tuple(
                    (label, mode, *_summary(st).values(), *st["share"].values())
                    for label, modes in self.errors.items()
                    for mode, st in modes.items()
                ),
            ),
            Table(
                "Plan table: iterations → last-bit error (fused)",
                ("iterations", "max ULP", "mean ULP", "p99 ULP", "differs from framework"),
                tuple(
                    (
                        v.iterations,
                        *_summary(self.errors[v.label]["fused"]).values(),
                        self.differs[v.iterations],
                    )
                    for v in self.newton
                ),
            ),
        ]

    def histograms(self) -> list[Histogram]:
        return [_histogram(v, self.reference) for v in self.variants]


def _histogram(v: Variant, reference: np.ndarray) -> Histogram:
    name = "c3_" + ("framework" if v.iterations is None else f"newton_{v.iterations}")
    return ulp_error_histogram(name, f"{v.label} (fused) vs float64", ulp_error(v.fused, reference))


def run(s: RsqrtSettings, backend: Backend, emit: Emit) -> RsqrtResult:
    from functools import partial

    import torch

    from ..tensors import to_numpy, uniform

    host = uniform(s.shape, s.low, s.high, s.dtype, s.seed)
    x = host.to(backend.device)
    reference = np.asarray(fp64_reference(torch.rsqrt, [host]))
    specs: list[tuple[str, int | None, Any]] = [("framework rsqrt", None, torch.rsqrt)]
    specs += [
        (f"Newton–Raphson, {k} iteration(s)", k, partial(newton_rsqrt, iterations=k)) for k in s.iterations
    ]
    variants = []
    for i, (label, k, fn) in enumerate(specs):
        emit(Message(f"{label}: eager and fused"))
        eager = to_numpy(backend.eager(fn)(x))
        compiled = backend.compile(fn, x)
        v = Variant(
            label,
            k,
            eager,
            to_numpy(compiled.output),
            computation_lines(compiled.kernels),
            len(compiled.kernels),
        )
        variants.append(v)
        emit(HistogramEvent(_histogram(v, reference)))
        emit(Progress("C3 variants", i + 1, len(specs)))
    x32 = np.asarray(host.float())
    with np.errstate(divide="ignore"):
        numpy_fp32 = (np.float32(1) / np.sqrt(x32)).astype(variants[0].fused.dtype)
    compiler: dict[str, np.ndarray] = {}
    for v in backend.codegen_variants():
        if v.threads is None and v.options:
            emit(Message(f"framework rsqrt, compiler variant {v.label}"))
            with backend.variant(v):
                compiler[v.label] = to_numpy(backend.compile(torch.rsqrt, x).output)
    return RsqrtResult(s, variants, reference, numpy_fp32, compiler)


TASK = Task(
    id="C3",
    title="rsqrt: Newton–Raphson iteration count",
    claim="§1.2 (4): iterative approximations (rsqrt, div) with different iteration counts give different last-bit error",
    settings=RsqrtSettings,
    run=run,
    figures=FIGURES,
    priority="P0",
)
