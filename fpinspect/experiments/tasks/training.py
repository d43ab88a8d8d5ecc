"""Task E — end-to-end training, eager vs fused (docs/test-plan.md §3.2 in
practice).

A small GPT (:mod:`..training.gpt`) is trained three times from the same saved initial
weights on the same byte-level batches with the same AdamW settings and schedule
(:mod:`..training.loop`): **eager**, **fused** (``torch.compile`` on cpu/cuda, torchair GE
mode on npu — the backend's ``fused``), and a **noise** run: eager again with one
perturbation that should not matter (``noise``, :data:`NOISE_KINDS`: by default every
float32 master weight moved one ULP — the smallest change there is, so the tightest band;
or one ULP of the autocast dtype; or the next data-order seed). The noise run's gap to
eager is the measured noise band; the fused run *diverges* where its gap to eager leaves
that band (:mod:`..training.divergence`).

With ``nproc`` > 1 the three runs execute under ``torchrun`` as DistributedDataParallel
ranks (gloo / nccl / hccl); rank 0 reports. A rank that dies ends the launch (torchrun
stops the others) and the task fails with which rank died and how. Checkpoints every
``checkpoint_every`` steps go to ``<run_dir>/checkpoints``; ``resume`` continues a stopped
set there.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from fpinspect.store.figures import Fields, Figures, Rule

from ..backends.base import Backend
from ..engine import ExperimentProcess
from ..events import CurvePoint, Failed, Finished, Message, Progress
from ..results import Curve, Series, Table, Verdict
from ..settings import TaskSettings
from ..task import Emit, InputRefused, Task
from ..training.divergence import FACTOR, Divergence, first_divergence, noise_band
from ..training.store import Checkpoints, read_run, same_computation

#: Metrics compared for divergence, with the per-sample count of values averaged into them.
COMPARED = ("train_loss", "eval_loss", "grad_norm")
NOISE_KINDS = {
    "one_ulp": "a second eager run whose float32 initial weights are each moved one ULP (random direction)",
    "one_ulp_autocast": "a second eager run whose initial weights are each moved one ULP of the autocast "
    "dtype (random direction)",
    "data_order": "a second eager run whose batches come from the next data-order seed",
}


@dataclass(frozen=True)
class TrainingSettings(TaskSettings):
    """The model (GPT-2 small's shape in ``full``: 12 layers, 12 heads, width 768, context
    1024; the byte vocabulary of 256 makes it 85M parameters instead of GPT-2's 124M, whose
    extra 39M are its 50 257-token embedding), the optimisation (global ``batch_size``
    sequences per step, AdamW, warm-up + cosine ``lr`` → ``min_lr``, clipping at
    ``grad_clip``), the sampling (every ``sample_every`` steps, ``eval_batches`` fixed
    evaluation batches), ``dtype`` = the autocast dtype, ``noise`` (:data:`NOISE_KINDS`),
    and how it runs: ``nproc`` processes of ``threads`` CPU threads each (0: torch's
    default; the quick profile takes 1 — its kernels are too small to share, and the numbers
    then do not depend on the machine's core count), ``checkpoint_every`` steps, ``run_dir``
    (empty: the child's working directory), ``resume``."""

    dtype: str = "bfloat16"
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    block_size: int = 1024
    batch_size: int = 8
    steps: int = 1000
    sample_every: int = 50
    eval_batches: int = 4
    eval_fraction: float = 0.1
    lr: float = 6e-4
    min_lr: float = 6e-5
    warmup_steps: int = 100
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    noise: str = "one_ulp"
    checkpoint_every: int = 200
    nproc: int = 1
    threads: int = 0
    collective_timeout_s: float = 300.0
    run_dir: str = ""
    resume: bool = False

    QUICK: ClassVar = {
        "n_layer": 4,
        "n_head": 4,
        "n_embd": 64,
        "block_size": 64,
        "batch_size": 16,
        "steps": 300,
        "sample_every": 10,
        "eval_batches": 4,
        "lr": 2e-3,
        "min_lr": 2e-4,
        "warmup_steps": 30,
        "checkpoint_every": 100,
        "threads": 1,
    }

    def work(self) -> float:
        """Training multiply-adds of the three runs, about 6 × parameters × tokens (the
        transformer blocks' 12 × layers × width² parameters; tokens = steps × batch × context)."""
        parameters = 12 * self.n_layer * self.n_embd * self.n_embd
        return 3 * 6.0 * parameters * self.steps * self.batch_size * self.block_size

    def __post_init__(self):
        problems = []
        if self.dtype not in ("bfloat16", "float16", "float32"):
            problems.append(f"dtype must be bfloat16, float16 or float32, not {self.dtype!r}")
        if self.noise not in NOISE_KINDS:
            problems.append(f"noise must be one of {', '.join(NOISE_KINDS)}, not {self.noise!r}")
        if self.nproc < 1 or self.batch_size % self.nproc:
            problems.append(f"batch_size {self.batch_size} must split evenly over nproc {self.nproc}")
        if self.n_embd % self.n_head:
            problems.append(f"n_embd {self.n_embd} must be a multiple of n_head {self.n_head}")
        if self.sample_every < 1 or self.checkpoint_every % self.sample_every:
            problems.append(
                f"checkpoint_every {self.checkpoint_every} must be a multiple of sample_every {self.sample_every}"
            )
        if problems:
            raise ValueError("; ".join(problems))


class TrainingFailed(RuntimeError):
    """The distributed launch ended without a result; the message says which rank failed
    and how."""


# -- the analysis ----------------------------------------------------------------------


def _divergence_fields(d: Divergence) -> dict[str, Any]:
    return {"band": d.band, "ratio": d.ratio, "samples_beyond": d.beyond, "last_step_beyond": d.last_step}


def _curves(samples: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {m: [s[m] for s in samples] for m in ("train_loss", "eval_loss", "perplexity", "grad_norm")}


def resolution(values: np.ndarray, averaged: int) -> np.ndarray:
    """The smallest gap a float32 metric averaged over ``averaged`` values can show:
    ``2 · spacing(value) · sqrt(averaged)`` (the rounding of the mean of ``averaged``
    float32 numbers accumulates like a random walk)."""
    v = np.abs(np.asarray(values, np.float64)).astype(np.float32)
    return 2.0 * np.spacing(v).astype(np.float64) * np.sqrt(averaged)


#: A final loss (or norm) against its eager twin has no better side; it moves by rounding.
FINAL_RULE = Rule("either", rel=0.02, abs=1e-3)

#: The figures a baseline check compares (:mod:`fpinspect.store.figures`): the final values
#: of :meth:`TrainingResult.data`, and how far the fused curve left the noise band.
FIGURES = Figures(Fields({"final.*.*": FINAL_RULE, "divergence.size": Rule("lower", rel=0.1)}))


@dataclass
class TrainingResult:
    settings: TrainingSettings
    payload: dict[str, Any]
    device: str

    def __post_init__(self):
        runs = self.payload["runs"]
        self.steps = [s["step"] for s in runs["eager"]["samples"]]
        self.by_run = {name: _curves(run["samples"]) for name, run in runs.items()}
        s = self.settings
        averaged = {
            "train_loss": s.sample_every * s.batch_size * s.block_size,
            "eval_loss": s.eval_batches * s.batch_size * s.block_size,
            "grad_norm": s.sample_every,
        }
        steps = np.asarray(self.steps)
        self.band: dict[str, list[float]] = {}
        self.by_metric: dict[str, Divergence | None] = {}
        for m in COMPARED:
            eager = np.asarray(self.by_run["eager"][m], np.float64)
            band = noise_band(eager, self.by_run["noise"][m])
            self.band[m] = band.tolist()
            self.by_metric[m] = first_divergence(
                steps, eager, self.by_run["fused"][m], band, resolution(eager, averaged[m])
            )
        found = [(d.step, m, d) for m, d in self.by_metric.items() if d is not None]
        self.divergence = min(found, key=lambda t: (t[0], COMPARED.index(t[1]))) if found else None

    def _final(self, name: str) -> dict[str, float]:
        return {m: values[-1] for m, values in self.by_run[name].items()}

    def data(self) -> dict[str, Any]:
        final = {name: self._final(name) for name in self.by_run}
        final["fused_minus_eager"] = {m: final["fused"][m] - final["eager"][m] for m in final["eager"]}
        divergence = None
        if self.divergence is not None:
            step, metric, d = self.divergence
            divergence = {"step": step, "size": d.size, "metric": metric, **_divergence_fields(d)}
        runs = self.payload["runs"]
        return {
            "steps": self.steps,
            "eager": self.by_run["eager"],
            "fused": self.by_run["fused"],
            "noise_run": self.by_run["noise"],
            "noise_band": {"method": NOISE_KINDS[self.settings.noise], "factor": FACTOR, **self.band},
            "divergence": divergence,
            "divergence_by_metric": {
                m: None if d is None else {"step": d.step, "size": d.size, **_divergence_fields(d)}
                for m, d in self.by_metric.items()
            },
            "final": final,
            "world_size": self.payload["world_size"],
            "parameters": self.payload["parameters"],
            "autocast_dtype": self.payload.get("autocast_dtype", self.settings.dtype),
            "grad_scaler": self.payload["grad_scaler"],
            "threads_per_process": self.payload["threads_per_process"],
            "timing": {
                name: {k: run.get(k) for k in ("seconds", "first_step_seconds", "resumed_at")}
                for name, run in runs.items()
            },
        }

    def verdicts(self) -> list[Verdict]:
        last = len(self.steps) - 1
        bands = ", ".join(f"{m} {self.band[m][last]:.3g}" for m in COMPARED)
        gaps = ", ".join(
            f"{m} {abs(self.by_run['fused'][m][last] - self.by_run['eager'][m][last]):.3g}" for m in COMPARED
        )
        if self.divergence is None:
            measured = (
                f"the fused curves stay within {FACTOR:g}× the noise band at every one of the {len(self.steps)} "
                f"samples; at step {self.steps[last]} the gaps are {gaps}, the bands {bands}"
            )
        else:
            step, metric, d = self.divergence
            measured = (
                f"fused {metric} leaves the noise band at step {step}: gap {d.size:.3g} against a band of "
                f"{d.band:.3g} ({d.ratio:.3g}× the limit); samples beyond it: {d.beyond} of {len(self.steps)}, "
                f"the last at step {d.last_step}; at step {self.steps[last]} the gaps are {gaps}, "
                f"the bands {bands}"
            )
        return [
            Verdict(
                "curves overlap within normal noise",
                "eager and fused train loss, eval loss and grad norm overlap within normal noise "
                f"(noise: {NOISE_KINDS[self.settings.noise]})",
                measured + ".",
                self.divergence is None,
            )
        ]

    def tables(self) -> list[Table]:
        final = self.data()["final"]
        rows = [
            (m, final["eager"][m], final["fused"][m], final["fused_minus_eager"][m], final["noise"][m])
            for m in ("train_loss", "eval_loss", "perplexity", "grad_norm")
        ]
        div_rows = tuple(
            (m, "-" if d is None else d.step, None if d is None else d.size, self.band[m][-1])
            for m, d in self.by_metric.items()
        )
        return [
            Table(
                f"Final metrics at step {self.steps[-1]}",
                ("metric", "eager", "fused", "fused − eager", "noise run"),
                tuple(rows),
            ),
            Table(
                "Divergence: first step beyond the noise band, per metric",
                ("metric", "step", "gap there", "band at the end"),
                div_rows,
            ),
        ]

    def histograms(self) -> list:
        return []

    def curves(self) -> list[Curve]:
        x = tuple(float(s) for s in self.steps)
        out = []
        for m, label in (
            ("train_loss", "train loss"),
            ("eval_loss", "eval loss"),
            ("grad_norm", "grad norm"),
        ):
            eager, fused, noise = (self.by_run[run][m] for run in ("eager", "fused", "noise"))
            out.append(
                Curve(
                    name=f"e_{m}",
                    title=f"{label}: eager vs fused ({self.device}, {self.payload['world_size']} process(es))",
                    xlabel="step",
                    ylabel=label,
                    series=(Series("eager", x, tuple(eager)), Series("fused", x, tuple(fused))),
                    secondary=(
                        Series("|fused − eager|", x, tuple(abs(f - e) for f, e in zip(fused, eager))),
                        Series("|noise − eager|", x, tuple(abs(n - e) for n, e in zip(noise, eager))),
                        Series("noise band", x, tuple(self.band[m])),
                    ),
                    secondary_ylabel="difference",
                    secondary_log=True,
                )
            )
        return out


# -- running ---------------------------------------------------------------------------


def run_dir_of(s: TrainingSettings) -> Path:
    return Path(s.run_dir).resolve() if s.run_dir else Path.cwd()


def _prepare(s: TrainingSettings, backend: Backend, run_dir: Path) -> None:
    """Check a resumed set against its ``run.json``, or clear the folder of an old one;
    then record this set's settings."""
    store = Checkpoints(run_dir)
    if s.resume:
        saved = read_run(run_dir)
        if saved is None:
            raise InputRefused(f"{run_dir} holds no checkpoints of task E to resume")
        changed = same_computation(s.to_dict(), saved["settings"])
        if changed:
            raise InputRefused(f"{run_dir} was started with other settings ({', '.join(changed)})")
    elif store.root.exists():
        shutil.rmtree(store.root)
    store.root.mkdir(parents=True, exist_ok=True)
    run = {"task": TASK.id, "device": backend.name, "settings": s.to_dict()}
    store.run_file.write_text(json.dumps(run, indent=2), "utf-8")


def train_entry(s: TrainingSettings, backend: Backend, emit: Emit, workdir: Path) -> dict[str, Any]:
    """What each rank runs under torchrun: join the process group, train the run set."""
    from ..training.distributed import process_group
    from ..training.loop import train_all

    with process_group(backend.name, s.collective_timeout_s) as ranks:
        return train_all(s, backend, ranks, Checkpoints(run_dir_of(s)), emit)


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def _launch(s: TrainingSettings, backend: Backend, emit: Emit, run_dir: Path) -> dict[str, Any]:
    """Run :func:`train_entry` on ``s.nproc`` ranks under torchrun, relaying rank 0's events."""
    from ..child import rank_events_path
    from ..events import read_events
    from ..training.distributed import root_cause, torchrun_launcher

    workdir = run_dir / "torchrun"
    shutil.rmtree(workdir, ignore_errors=True)
    emit(Message(f"starting {s.nproc} processes under torchrun ({workdir})"))
    last_point: CurvePoint | None = None
    failure: Failed | None = None
    # A cancelled parent sends SIGTERM: leave through the with-block so torchrun is stopped too.
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        with ExperimentProcess(
            TASK.id,
            s,
            device=backend.name,
            entry="train",
            workdir=workdir,
            launcher=torchrun_launcher(s.nproc),
        ) as process:
            for event in process.events():
                if isinstance(event, (Progress, Message, CurvePoint)):
                    emit(event)
                    if isinstance(event, CurvePoint):
                        last_point = event
                elif isinstance(event, Finished):
                    return event.result
                elif isinstance(event, Failed) and failure is None:
                    failure = event
            log = process.log_path.read_text("utf-8", errors="replace") if process.log_path.exists() else ""
    finally:
        signal.signal(signal.SIGTERM, previous)
    if failure is not None and failure.kind == "usage":
        raise InputRefused(failure.message)
    where = f" (last sample: step {last_point.step} of the {last_point.series} run)" if last_point else ""
    cause = root_cause(log)
    if cause is not None:
        what = cause.describe()
        rank_failure = None
        if cause.rank > 0:
            path = rank_events_path(workdir, cause.rank)
            events = list(read_events(path.read_text("utf-8").splitlines())) if path.exists() else []
            rank_failure = next((e for e in events if isinstance(e, Failed)), None)
        elif failure is not None:
            rank_failure = failure
        if rank_failure is not None:
            what += f" ({rank_failure.message})"
    else:
        what = failure.message if failure is not None else "the launch ended without a result"
    raise TrainingFailed(
        f"{what}{where}; torchrun stopped the other ranks. Checkpoints are in {run_dir}; continue with "
        f"--resume {run_dir}. torchrun's log: {workdir / 'train.log'}"
    )


def run(s: TrainingSettings, backend: Backend, emit: Emit) -> TrainingResult:
    run_dir = run_dir_of(s)
    _prepare(s, backend, run_dir)
    s = dataclasses.replace(s, run_dir=str(run_dir))
    if s.nproc == 1:
        from ..training.distributed import Ranks
        from ..training.loop import train_all

        payload = train_all(s, backend, Ranks(), Checkpoints(run_dir), emit)
    else:
        payload = _launch(s, backend, emit, run_dir)
    return TrainingResult(s, payload, backend.name)


TASK = Task(
    id="E",
    title="end-to-end training: eager vs fused",
    claim="§3.2 in practice: fused training curves overlap eager ones within normal noise",
    settings=TrainingSettings,
    run=run,
    figures=FIGURES,
    entries={"train": train_entry},
    priority="P2",
)
