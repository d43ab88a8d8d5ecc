"""Task A — auto-fusion's own binary determinism (docs/test-plan.md §3.3).

The subgraph is the first half of a Transformer FFN block as the plan words it:
``gelu(layer_norm(x @ w + b))`` with ``x`` [batch, sequence, hidden] and ``w`` [hidden,
hidden], compiled by the device's fusing compiler.

Round 1 compiles it and runs it ``runs`` times in this process. ``H_k0`` is the SHA-256 of
the **generated kernel source** (normalised, :func:`~..backends.base.kernel_hash`): library
kernels the compiled code calls instead — on Inductor the matmul, ``extern_kernels.mm`` /
``addmm`` — are not generated and so not part of it; the report names them. On CUDA the
device's deterministic mode is on (:meth:`~..backends.base.Backend.deterministic_mode`).
Round 2 is a cold start: a new child process whose compile caches point at an empty
directory loads the same inputs from disk, compiles again and runs ``runs`` times. Every
output is identified by the MD5 of its bytes: an output bit-identical (``bit_equal``) to
an output already seen shares its MD5, any other gets its own MD5 computed — the same
result as hashing every output, at the cost of one hash per distinct output. The first
:data:`MAX_KEPT` distinct outputs of each round are kept for the ULP distances; the
maximum is taken against round 1's first output.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from fpinspect.numerics import bit_equal, ulp_diff, ulp_nan
from fpinspect.store.figures import EXACT, Fields, Figures

from ..backends.base import Backend, count_files, kernel_hash
from ..engine import ExperimentProcess, collect
from ..events import HistogramEvent, Message, Progress
from ..results import Histogram, Table, Verdict
from ..settings import TaskSettings
from ..task import Emit, Task

INPUT_NAMES = ("x", "w", "b", "gamma", "beta")
#: Distinct outputs kept in memory per round for bit comparison and ULP distances.
MAX_KEPT = 16
LAYER_NORM_EPS = 1e-5


@dataclass(frozen=True)
class DeterminismSettings(TaskSettings):
    """``shape`` = (batch, sequence, hidden); ``runs`` per round. Inputs: ``x`` ~ U(-1, 1),
    ``w`` ~ U(-s, s) with s = hidden**-0.5, ``b`` ~ U(-0.1, 0.1), ``gamma`` ~ U(0.5, 1.5),
    ``beta`` ~ U(-0.5, 0.5); input number i of :data:`INPUT_NAMES` is drawn with seed
    ``seed + i``."""

    shape: tuple[int, int, int] = (8, 2048, 4096)
    runs: int = 1000

    QUICK: ClassVar = {"shape": (2, 128, 256), "runs": 100}

    def work(self) -> float:
        """Multiply-adds of the matmul over both rounds: 2 × runs × batch × sequence × hidden²."""
        batch, sequence, hidden = self.shape
        return 2.0 * self.runs * batch * sequence * hidden * hidden


@dataclass
class Round:
    """One round: its runs, how many runs gave each output MD5, the kernel it compiled
    and the state of the compile cache around that compile."""

    label: str
    runs: int
    kernel_hash: str | None
    kernels: list[str]
    #: Library kernels called, not generated: outside ``kernel_hash``.
    externs: list[str]
    output_hashes: dict[str, int]
    compile_seconds: float
    cache_dir: str | None
    cache_files_before: int
    cache_files_after: int
    compile_counters: dict[str, int]


def subgraph(x, w, b, gamma, beta):
    import torch.nn.functional as F

    return F.gelu(F.layer_norm(x @ w + b, (x.shape[-1],), gamma, beta, eps=LAYER_NORM_EPS))


def make_inputs(s: DeterminismSettings) -> list:
    from ..tensors import uniform

    hidden = s.shape[-1]
    scale = hidden**-0.5
    specs = [
        (s.shape, -1.0, 1.0),
        ((hidden, hidden), -scale, scale),
        ((hidden,), -0.1, 0.1),
        ((hidden,), 0.5, 1.5),
        ((hidden,), -0.5, 0.5),
    ]
    return [uniform(shape, lo, hi, s.dtype, s.seed + i) for i, (shape, lo, hi) in enumerate(specs)]


def _identify(a: np.ndarray, kept: dict[str, np.ndarray]) -> str:
    from ..tensors import md5

    for h, rep in kept.items():
        if bit_equal(a, rep):
            return h
    h = md5(a)
    if len(kept) < MAX_KEPT:
        kept[h] = a
    return h


def _hash_histogram(name: str, title: str, counts: dict[str, int]) -> Histogram:
    """Runs per output, ``counts`` keyed by a short label of each output's MD5."""
    return Histogram(
        name, title, "output MD5 (first 8 hex digits)", tuple(counts), tuple(counts.values()), "runs"
    )


def _run_round(
    backend: Backend, s: DeterminismSettings, inputs: list, emit: Emit, label: str
) -> tuple[Round, dict[str, np.ndarray]]:
    from ..tensors import to_numpy

    cache = backend.cache_dir()
    before = count_files(cache)
    emit(Message(f"{label}: compiling the subgraph"))
    compiled = backend.compile(subgraph, *inputs)
    after = count_files(cache)
    counts: dict[str, int] = {}
    kept: dict[str, np.ndarray] = {}
    step = max(1, s.runs // 50)
    for i in range(s.runs):
        h = _identify(to_numpy(compiled.fn(*inputs)), kept)
        counts[h] = counts.get(h, 0) + 1
        if (i + 1) % step == 0 or i + 1 == s.runs:
            emit(Progress(label, i + 1, s.runs))
    short = label.split(":")[0]
    emit(
        HistogramEvent(
            _hash_histogram(
                f"a_hashes_{short.replace(' ', '_')}",
                f"Runs per output MD5, {label}",
                {h[:8]: c for h, c in counts.items()},
            )
        )
    )
    record = Round(
        label=label,
        runs=s.runs,
        kernel_hash=kernel_hash(compiled.kernels),
        kernels=[k.name for k in compiled.kernels],
        externs=list(compiled.externs),
        output_hashes=counts,
        compile_seconds=round(compiled.seconds, 3),
        cache_dir=str(cache) if cache is not None else None,
        cache_files_before=before,
        cache_files_after=after,
        compile_counters=backend.compile_counters(),
    )
    return record, kept


def cold_round(s: DeterminismSettings, backend: Backend, emit: Emit, workdir: Path) -> dict[str, Any]:
    """Round 2, run in a cold child: inputs from ``workdir/inputs``, distinct outputs
    written to ``workdir/cold_outputs/<md5>.npy``."""
    from ..tensors import from_numpy, load_bits, save_bits

    backend.deterministic_mode()
    inputs = [
        from_numpy(load_bits(workdir / "inputs" / f"{n}.npy", s.dtype)).to(backend.device)
        for n in INPUT_NAMES
    ]
    record, kept = _run_round(backend, s, inputs, emit, "round 2: cold start")
    out = workdir / "cold_outputs"
    out.mkdir(exist_ok=True)
    for h, a in kept.items():
        save_bits(out / f"{h}.npy", a)
    return asdict(record)


def _cold_start(s: DeterminismSettings, backend: Backend, emit: Emit, workdir: Path) -> Round:
    env = backend.cold_start_env(workdir / "cold-cache")

    def forward(event) -> None:
        if isinstance(event, (Progress, Message, HistogramEvent)):
            emit(event)

    emit(Message("round 2: starting a new process with empty compile caches"))
    with ExperimentProcess(
        TASK.id, s, device=backend.name, entry="cold_round", env=env, workdir=workdir
    ) as p:
        return Round(**collect(p, forward))


#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): fields of
#: :meth:`DeterminismResult.data`.
FIGURES = Figures(Fields({"unique_output_hashes": EXACT, "max_ulp": EXACT}))


@dataclass
class DeterminismResult:
    settings: DeterminismSettings
    input_md5: dict[str, str]
    rounds: list[Round]
    max_ulp: int
    ulp_nan: int
    #: What :meth:`~..backends.base.Backend.deterministic_mode` switched on (both rounds).
    deterministic_mode: dict[str, Any] = field(default_factory=dict)

    @property
    def first(self) -> Round:
        return self.rounds[0]

    @property
    def cold(self) -> Round:
        return self.rounds[1]

    def unique_hashes(self) -> set[str]:
        return {h for r in self.rounds for h in r.output_hashes}

    def data(self) -> dict[str, Any]:
        return {
            "runs": self.settings.runs,
            "unique_output_hashes": len(self.unique_hashes()),
            "kernel_hash": self.first.kernel_hash,
            "kernel_hash_covers": "the generated kernel source only; library calls are not included",
            "extern_kernels": self.first.externs,
            "cold_start_kernel_hash": self.cold.kernel_hash,
            "deterministic_mode": self.deterministic_mode,
            "max_ulp": self.max_ulp,
            "rounds": [asdict(r) for r in self.rounds],
            "input_md5": self.input_md5,
        }

    def _cold_was_cold(self) -> bool:
        c = self.cold
        misses = c.compile_counters.get("fx_graph_cache_misses")
        hits = c.compile_counters.get("fx_graph_cache_hits", 0)
        compiled_again = misses > 0 if misses is not None else c.cache_files_after > 0
        return c.cache_files_before == 0 and hits == 0 and compiled_again

    def verdicts(self) -> list[Verdict]:
        first, cold, n = self.first, self.cold, self.settings.runs
        hint = (
            " Look for random operators, reductions using atomics, autotuning (try "
            "TORCHINDUCTOR_DETERMINISTIC=1) or a changed thread count."
        )
        k1 = len(first.output_hashes)
        out = [
            Verdict(
                "one process",
                f"{n} runs give 1 unique output hash",
                f"{n} runs gave {k1} unique output hash{'es' if k1 != 1 else ''}."
                + ("" if k1 == 1 else hint),
                k1 == 1,
            )
        ]
        counters = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in cold.compile_counters.items())
        out.append(
            Verdict(
                "cold start is cold",
                "the new process finds an empty compile cache and compiles the kernel again",
                f"cache folder held {cold.cache_files_before} files before the compile and "
                f"{cold.cache_files_after} after" + (f"; {counters}" if counters else "") + ".",
                self._cold_was_cold(),
            )
        )
        h0, h1 = first.kernel_hash, cold.kernel_hash
        what = "H_k0, the hash of the generated kernel source"
        externs = (
            f" Not covered: the library kernel(s) {', '.join(first.externs)} the compiled code calls (their "
            "binary is the library's, the same in both rounds only if the library is)."
            if first.externs
            else ""
        )
        if h0 is None or h1 is None:
            out.append(
                Verdict(
                    "same kernel after a cold start",
                    f"the recompiled kernel source hash equals {what}",
                    "no kernel source was captured on this device, so the kernel hashes cannot be compared."
                    + externs,
                    None,
                )
            )
        else:
            out.append(
                Verdict(
                    "same kernel after a cold start",
                    f"the recompiled kernel source hash equals {what}",
                    f"H_k0 = {h0[:16]}…, cold start = {h1[:16]}…: {'equal' if h0 == h1 else 'different'}."
                    + externs,
                    h0 == h1,
                )
            )
        same = set(cold.output_hashes) == set(first.output_hashes) and self.max_ulp == 0
        out.append(
            Verdict(
                "same outputs after a cold start",
                "round-2 outputs have round 1's MD5, max ULP difference 0",
                f"round 2 gave {len(cold.output_hashes)} output hash(es), "
                f"{len(set(cold.output_hashes) & set(first.output_hashes))} shared with round 1; "
                f"max ULP difference {self._ulp_text()}." + ("" if same else hint),
                same,
            )
        )
        return out

    def _ulp_text(self) -> str:
        return "NaN mismatch" if self.max_ulp == self.ulp_nan else str(self.max_ulp)

    def _ulp_number(self) -> int | None:
        """The max ULP difference as a number; None (a dash) for a NaN mismatch, which has no distance."""
        return None if self.max_ulp == self.ulp_nan else self.max_ulp

    def tables(self) -> list[Table]:
        n = self.settings.runs
        plan = Table(
            "Plan table (runs per round / unique output hashes over both rounds / max ULP difference)",
            ("", "runs", "unique hashes", "max ULP diff"),
            (("expected", n, 1, 0), ("measured", n, len(self.unique_hashes()), self._ulp_number())),
        )
        rounds = Table(
            "Rounds",
            (
                "round",
                "runs",
                "unique hashes",
                "kernel source hash",
                "library kernels (not hashed)",
                "compile s",
                "cache files before",
                "cache files after",
                "compile cache",
            ),
            tuple(
                (
                    r.label,
                    r.runs,
                    len(r.output_hashes),
                    (r.kernel_hash or "not captured")[:16],
                    ", ".join(r.externs) or "-",
                    r.compile_seconds,
                    r.cache_files_before,
                    r.cache_files_after,
                    ", ".join(
                        f"{k.replace('fx_graph_cache_', '')} {v}" for k, v in r.compile_counters.items()
                    )
                    or "n/a",
                )
                for r in self.rounds
            ),
        )
        return [plan, rounds]

    def histograms(self) -> list[Histogram]:
        counts = {
            f"{r.label.split(':')[0]} · {h[:8]}": c for r in self.rounds for h, c in r.output_hashes.items()
        }
        return [_hash_histogram("a_output_hashes", "Runs per output MD5, both rounds", counts)]


def run(s: DeterminismSettings, backend: Backend, emit: Emit) -> DeterminismResult:
    from ..tensors import load_bits, md5, save_bits, to_numpy

    deterministic = backend.deterministic_mode()
    host = make_inputs(s)
    input_md5 = {n: md5(to_numpy(t)) for n, t in zip(INPUT_NAMES, host)}
    with tempfile.TemporaryDirectory(prefix="fpinspect-A-") as tmp:
        workdir = Path(tmp)
        (workdir / "inputs").mkdir()
        for n, t in zip(INPUT_NAMES, host):
            save_bits(workdir / "inputs" / f"{n}.npy", to_numpy(t))
        inputs = [t.to(backend.device) for t in host]
        first, kept = _run_round(backend, s, inputs, emit, "round 1: one process")
        cold = _cold_start(s, backend, emit, workdir)
        cold_outputs = [load_bits(p, s.dtype) for p in sorted((workdir / "cold_outputs").glob("*.npy"))]
    reference = next(iter(kept.values()))
    nan = ulp_nan(reference.dtype)
    max_ulp = max(int(ulp_diff(a, reference).max()) for a in [*kept.values(), *cold_outputs])
    return DeterminismResult(s, input_md5, [first, cold], max_ulp, nan, deterministic)


TASK = Task(
    id="A",
    title="Auto-fusion's own binary determinism",
    claim="§3.3: the same compile inputs give the same kernel, and the same kernel and inputs give bit-identical outputs",
    settings=DeterminismSettings,
    run=run,
    figures=FIGURES,
    entries={"cold_round": cold_round},
    priority="P0",
)
