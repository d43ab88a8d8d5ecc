"""Task C1 — tensor × scalar: does the instruction the compiler picks change the last bit?
(docs/test-plan.md §1.2 (2)).

Path A is ``x * scalar`` (a Python scalar); path B is ``x * s.expand_as(x)`` with ``s`` a
0-d tensor of ``x``'s dtype (broadcast, then element-wise multiply). Each runs eager and
fused once; every output is also measured against the float64 product ``x * scalar``
with ``ulp_error``.

Two things can make A and B differ: the instruction (scalar multiply versus broadcast +
vector multiply) and the scalar's *value* — path B's tensor holds the scalar rounded to
``dtype`` (0.7 → 0.7001953125 in float16), while path A multiplies by it in the
operator's float32 "opmath" (ulp_spec.md §5(c)). So the **headline comparison isolates
the instruction**: path A's code with the scalar's value equalised, ``x * float(s)``
(fused), against fused path B, with the integer ``ulp_diff``. Fused A against fused B
(both the value and the instruction differ) is reported beside it as the raw difference.

Evidence of the lowering: the profiler's operator (and, on CUDA, kernel) names for the
eager paths, and the arithmetic statements of the fused kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import bit_equal, error_stats, fp64_reference, ulp_diff, ulp_error, ulp_nan
from fpinspect.numerics.results import to_builtins
from fpinspect.store.figures import COUNT, EXACT, SHARE, Fields, Figures

from ..backends.base import Backend, computation_lines, input_buffers, kernel_hash
from ..events import HistogramEvent, Message, Progress
from ..results import Histogram, Table, Verdict, ulp_diff_histogram, ulp_error_histogram, ulp_error_shares
from ..settings import TaskSettings
from ..task import Emit, Task

#: "Mostly within 1 ULP" means at least this share of elements at 0 or 1 ULP.
MOSTLY = 0.99


@dataclass(frozen=True)
class ScalarMulSettings(TaskSettings):
    """``x`` ~ U(low, high) of ``shape``, multiplied by ``scalar``."""

    shape: tuple[int, ...] = (1024, 1024)
    low: float = -1.0
    high: float = 1.0
    scalar: float = 0.7

    QUICK: ClassVar = {"shape": (512, 512)}

    def work(self) -> float:
        """Elements multiplied: the elements of ``shape``."""
        return float(math.prod(self.shape))


def _trace(backend: Backend, fn, *args) -> dict[str, list[str]]:
    """Operator names (``aten::…``) and device kernel names the profiler records for one
    eager call, in first-seen order."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if backend.name == "cuda" else [])
    with profile(activities=activities) as prof:
        fn(*args)
        backend.synchronize()
    ops: list[str] = []
    kernels: list[str] = []
    for e in prof.events():
        on_device = str(getattr(e, "device_type", "")).endswith("CUDA")
        bucket = kernels if on_device else ops
        if (on_device or e.name.startswith("aten::")) and e.name not in bucket:
            bucket.append(e.name)
    return {"ops": ops, "device_kernels": kernels}


@dataclass
class PathRecord:
    """One path: its expression, eager and fused outputs, and how it was lowered."""

    expression: str
    eager: np.ndarray
    fused: np.ndarray
    eager_trace: dict[str, list[str]]
    kernel_names: list[str]
    kernel_hash: str | None
    kernel_inputs: int
    kernel_lines: list[str]


def _pair(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """``a`` against ``b`` in their own format: bit equality and integer ULP shares."""
    st = error_stats(a, b).ulp
    return {"bit_equal": bit_equal(a, b), "max_ulp": st.max, "share": to_builtins(st.share)}


def _vs_fp64(a: np.ndarray, ref: np.ndarray) -> dict[str, Any]:
    """``a`` against the float64 product: ULP error statistics and the shares of
    :func:`~..results.ulp_error_shares`."""
    st = error_stats(a, ref).ulp
    shares = ulp_error_shares(ulp_error(a, ref))
    return {"max_ulp": st.max, "mean_ulp": st.mean, "p99_ulp": st.p99, "share": shares}


def _operands_note(a: PathRecord, b: PathRecord) -> str:
    """What the fused kernels' input buffers say about where the scalar comes from."""
    if not (a.kernel_inputs and b.kernel_inputs):
        return "the fused kernels' operands could not be read from their source"
    note = f"the fused kernels read {a.kernel_inputs} and {b.kernel_inputs} input buffers"
    if a.kernel_inputs < b.kernel_inputs:
        note += ": path A folds the scalar into the kernel as a constant, path B loads it and broadcasts it"
    return note


def _multiply(lines: list[str]) -> str:
    """The multiplication statement(s) among a kernel's arithmetic lines."""
    return " ".join(line for line in lines if " * " in line)


#: Row labels of the comparisons table, by key of :attr:`ScalarMulResult.pairs`.
PAIR_LABELS = {
    "isolated": "fused B vs fused A with the value equalised (headline: instruction only)",
    "raw": "fused B vs fused A (value and instruction)",
    "eager": "eager B vs eager A",
    "A": "fused A vs eager A",
    "B": "fused B vs eager B",
}


#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): fields of
#: :meth:`ScalarMulResult.data`.
FIGURES = Figures(
    Fields({"ulp_share.*": SHARE, "eager_ulp_share.*": SHARE, "bit_equal": EXACT, "max_ulp": COUNT})
)


@dataclass
class ScalarMulResult:
    settings: ScalarMulSettings
    rounded_scalar: float
    paths: dict[str, PathRecord]
    control: np.ndarray
    reference: np.ndarray
    #: Arithmetic statements of the value control's fused kernel.
    control_lines: list[str]
    #: Same-format comparisons, keyed as in :data:`PAIR_LABELS`.
    pairs: dict[str, dict[str, Any]] = field(init=False)
    #: Each path and mode against the float64 product.
    vs_fp64: dict[str, dict[str, dict[str, Any]]] = field(init=False)

    def __post_init__(self):
        a, b = self.paths["A"], self.paths["B"]
        self.pairs = {
            "isolated": _pair(b.fused, self.control),
            "raw": _pair(b.fused, a.fused),
            "eager": _pair(b.eager, a.eager),
            "A": _pair(a.fused, a.eager),
            "B": _pair(b.fused, b.eager),
        }
        self.vs_fp64 = {
            k: {"eager": _vs_fp64(p.eager, self.reference), "fused": _vs_fp64(p.fused, self.reference)}
            for k, p in self.paths.items()
        }

    def data(self) -> dict[str, Any]:
        main = self.pairs["isolated"]
        paths = {
            k: {
                "expression": p.expression,
                "eager_vs_fused": self.pairs[k],
                "vs_fp64": self.vs_fp64[k],
                "lowering": {
                    "eager": p.eager_trace,
                    "fused_kernels": p.kernel_names,
                    "fused_kernel_hash": p.kernel_hash,
                    "fused_kernel_inputs": p.kernel_inputs,
                    "fused_kernel_lines": p.kernel_lines,
                },
            }
            for k, p in self.paths.items()
        }
        return {
            "ulp_share": main["share"],
            "comparison": (
                f"fused path B against fused path A's code with the scalar's value equalised "
                f"(x * {self.rounded_scalar!r}): the instruction alone"
            ),
            "bit_equal": main["bit_equal"],
            "max_ulp": main["max_ulp"],
            "lowered_the_same": self.lowered_the_same(),
            "raw_ulp_share": self.pairs["raw"]["share"],
            "eager_ulp_share": self.pairs["eager"]["share"],
            "scalar": self.settings.scalar,
            "scalar_in_dtype": self.rounded_scalar,
            "paths": paths,
            "value_control": {
                "expression": f"x * {self.rounded_scalar!r} (fused)",
                "vs_path_b": self.pairs["isolated"],
                "kernel_lines": self.control_lines,
            },
        }

    def lowered_the_same(self) -> bool:
        """Whether the device treats both paths alike once the value is equalised: the
        outputs are bit-identical and each fused kernel performs exactly one float
        multiplication per element."""
        b = self.paths["B"]
        one_multiply = all(
            sum(" * " in line for line in lines) == 1 for lines in (self.control_lines, b.kernel_lines)
        )
        return self.pairs["isolated"]["bit_equal"] and one_multiply

    def verdicts(self) -> list[Verdict]:
        main = self.pairs["isolated"]
        share = main["share"]
        within = share["0"] + share["1"]
        differ = not main["bit_equal"]
        value = f"x * {self.rounded_scalar!r}"
        raw = self.pairs["raw"]["share"]
        if differ:
            measured = (
                f"with the scalar's value equalised ({value} through path A's code against path B), "
                f"{1 - share['0']:.2%} of elements differ; {share['1']:.2%} by 1 ULP, {share['>=2']:.2%} by 2 or more."
            )
            agrees: bool | None = within >= MOSTLY
        else:
            how = (
                "it lowers both paths the same way — one float32 multiply per element: "
                f"`{_multiply(self.control_lines)}` against `{_multiply(self.paths['B'].kernel_lines)}` "
                "(the whole fused arithmetic is in the lowering table)"
                if self.lowered_the_same()
                else "the fused kernels' arithmetic is in the lowering table"
            )
            measured = (
                f"with the scalar's value equalised ({value} through path A's code against path B) the two paths are "
                f"bit-identical on this device: {how}. The raw difference of fused A and B ({1 - raw['0']:.2%} of "
                f"elements) is the scalar's value ({self.settings.scalar!r} against {self.rounded_scalar!r}), not "
                "the instruction, so C1 cannot show an instruction effect here."
            )
            agrees = None
        out = [
            Verdict(
                "paths differ in the last bit",
                f"the scalar-multiply and broadcast + vector-multiply paths, same scalar value, are not identical "
                f"and mostly (>= {MOSTLY:.0%}) within 1 ULP",
                measured,
                agrees,
            )
        ]
        operands = _operands_note(self.paths["A"], self.paths["B"])
        out.append(
            Verdict(
                "the cause is instruction choice",
                "scalar multiply and broadcast + vector multiply lower to different instructions",
                (
                    f"the difference survives equalising the scalar's value, so the two lowerings compute "
                    f"differently ({operands})."
                    if differ
                    else f"no difference is left once the value is equalised ({operands})."
                ),
                True if differ else None,
            )
        )
        return out

    def tables(self) -> list[Table]:
        shares = Table(
            "ULP shares (fractions of elements)",
            ("comparison", "0 ULP", "1 ULP", ">= 2 ULP", "bit-equal"),
            tuple(
                (PAIR_LABELS[k], d["share"]["0"], d["share"]["1"], d["share"][">=2"], d["bit_equal"])
                for k, d in self.pairs.items()
            ),
        )
        fp64 = Table(
            "Error against the float64 product (ULP of the result)",
            (
                "path",
                "mode",
                "max",
                "mean",
                "p99",
                *(f"share {k}" for k in self.vs_fp64["A"]["eager"]["share"]),
            ),
            tuple(
                (
                    f"{k}: {p.expression}",
                    mode,
                    v["max_ulp"],
                    v["mean_ulp"],
                    v["p99_ulp"],
                    *v["share"].values(),
                )
                for k, p in self.paths.items()
                for mode, v in self.vs_fp64[k].items()
            ),
        )
        lowering = Table(
            "Lowering evidence",
            (
                "path",
                "eager operators",
                "eager device kernels",
                "fused kernels",
                "fused kernel inputs",
                "fused arithmetic",
            ),
            tuple(
                (
                    f"{k}: {p.expression}",
                    ", ".join(p.eager_trace["ops"]),
                    ", ".join(p.eager_trace["device_kernels"]) or "-",
                    ", ".join(p.kernel_names) or "-",
                    p.kernel_inputs,
                    "\n".join(p.kernel_lines) or "-",
                )
                for k, p in self.paths.items()
            )
            + (
                (
                    f"value control: x * {self.rounded_scalar!r}",
                    "-",
                    "-",
                    "-",
                    "-",
                    "\n".join(self.control_lines) or "-",
                ),
            ),
            summary=False,
        )
        return [shares, fp64, lowering]

    def histograms(self) -> list[Histogram]:
        a, b = self.paths["A"], self.paths["B"]
        nan = ulp_nan(a.fused.dtype)
        return [
            ulp_diff_histogram(
                "c1_fused_a_vs_b",
                f"Fused path B vs fused x * {self.rounded_scalar!r} (value equalised)",
                ulp_diff(b.fused, self.control),
                nan,
            ),
            ulp_diff_histogram(
                "c1_fused_a_vs_b_raw", "Fused path B vs fused path A (raw)", ulp_diff(b.fused, a.fused), nan
            ),
            ulp_error_histogram(
                "c1_a_vs_fp64", "Fused path A vs float64", ulp_error(a.fused, self.reference)
            ),
            ulp_error_histogram(
                "c1_b_vs_fp64", "Fused path B vs float64", ulp_error(b.fused, self.reference)
            ),
        ]


def run(s: ScalarMulSettings, backend: Backend, emit: Emit) -> ScalarMulResult:
    import torch

    from ..tensors import to_numpy, torch_dtype, uniform

    host = uniform(s.shape, s.low, s.high, s.dtype, s.seed)
    x = host.to(backend.device)
    scalar_t = torch.tensor(s.scalar, dtype=torch_dtype(s.dtype), device=backend.device)
    rounded = float(scalar_t.item())

    def path_a(x):
        return x * s.scalar

    def path_b(x, t):
        return x * t.expand_as(x)

    def control(x):
        return x * rounded

    specs = {"A": (f"x * {s.scalar!r}", path_a, (x,)), "B": ("x * s.expand_as(x)", path_b, (x, scalar_t))}
    steps = len(specs) + 2
    paths: dict[str, PathRecord] = {}
    for i, (key, (expr, fn, args)) in enumerate(specs.items()):
        emit(Message(f"path {key}: {expr}, eager and fused"))
        eager = to_numpy(backend.eager(fn)(*args))
        trace = _trace(backend, backend.eager(fn), *args)
        compiled = backend.compile(fn, *args)
        paths[key] = PathRecord(
            expression=expr,
            eager=eager,
            fused=to_numpy(compiled.output),
            eager_trace=trace,
            kernel_names=[k.name for k in compiled.kernels],
            kernel_hash=kernel_hash(compiled.kernels),
            kernel_inputs=input_buffers(compiled.kernels),
            kernel_lines=computation_lines(compiled.kernels),
        )
        emit(Progress("C1 paths", i + 1, steps))
    emit(Message(f"value control: x * {rounded!r}"))
    compiled_control = backend.compile(control, x)
    ctrl = to_numpy(compiled_control.output)
    emit(Progress("C1 paths", steps - 1, steps))
    reference = np.asarray(fp64_reference(lambda t: t * s.scalar, [host]))
    emit(Progress("C1 paths", steps, steps))
    result = ScalarMulResult(s, rounded, paths, ctrl, reference, computation_lines(compiled_control.kernels))
    emit(HistogramEvent(result.histograms()[0]))
    return result


TASK = Task(
    id="C1",
    title="Tensor × scalar: instruction choice",
    claim="§1.2 (2): x * scalar lowered to a scalar multiply or to broadcast + vector multiply can differ in the last bit",
    settings=ScalarMulSettings,
    run=run,
    figures=FIGURES,
    priority="P0",
)
