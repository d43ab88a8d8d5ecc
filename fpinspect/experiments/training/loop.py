"""One training run of task E, in one process or as one DDP rank, with checkpoints.

Every run of a set starts from the same initial weights (``initial.pt``, written once by
rank 0) and sees the same batches (:mod:`.corpus`) under the same AdamW settings and
learning-rate schedule; runs differ only in what :class:`RunSpec` says: ``fused`` runs the
model through the device's fusing compiler, ``noise`` is the noise-band reference — an
eager run whose initial weights are each moved one float32 ULP (or one ULP of the
autocast dtype), or whose data order comes from the next seed (``settings.noise``).

Mixed precision as users train: float32 master weights and optimizer state, the forward
and backward passes under ``torch.autocast`` in ``settings.dtype``; float16 adds a
``GradScaler``. Each step clips the gradient norm to ``grad_clip`` (the norm reported is
the one before clipping).

Every ``sample_every`` steps a sample is taken: ``train_loss`` and ``grad_norm`` are the
means over the steps since the previous sample, ``eval_loss`` the mean token loss over the
fixed evaluation windows, computed by the same eager forward pass in every run — so eval
curves differ only by what fusion did to the training, not by the evaluation's own
rounding — and ``perplexity`` is ``exp(eval_loss)``. With several ranks, losses are
averaged over the ranks (each holds an equal share of the global batch, so that is the
global mean); gradients are already averaged by DDP, so every rank sees the same norm.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..backends.base import Backend
from ..events import CurvePoint, Message, Progress
from ..task import Emit, InputRefused
from ..tensors import torch_dtype
from .corpus import VOCAB_SIZE, Corpus, eval_offsets, train_batch, windows
from .distributed import Ranks
from .gpt import GPT, GPTConfig, parameter_count
from .store import Checkpoints

if TYPE_CHECKING:
    from ..tasks.training import TrainingSettings

METRICS = ("train_loss", "eval_loss", "perplexity", "grad_norm")

#: Fault injection for tests: ``"RANK:STEP"`` makes that rank kill itself with SIGKILL
#: right after finishing that step of the first run that reaches it.
KILL_ENV = "FPINSPECT_TEST_KILL_RANK_AT"


@dataclass(frozen=True)
class RunSpec:
    name: str
    fused: bool = False
    noise: bool = False


RUNS = (RunSpec("eager"), RunSpec("fused", fused=True), RunSpec("noise", noise=True))


def save_atomically(obj: Any, path: Path) -> None:
    """``torch.save`` to a temporary name, then rename: a run killed while saving leaves
    the previous checkpoint intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: Path, device: torch.device | None) -> Any:
    """``torch.load`` with ``weights_only=True``: a checkpoint holds tensors, dicts, lists and
    numbers, and a run folder may come from another machine, so a file that would unpickle
    anything else (code included) is refused as damaged, as is one torch cannot read."""
    try:
        return torch.load(path, map_location=device or "cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise damaged(path, "it holds objects other than tensors, dicts, lists and numbers") from exc
    except (RuntimeError, EOFError, ValueError, OSError) as exc:
        raise damaged(path, "torch cannot read it") from exc


def damaged(path: Path, why: str) -> InputRefused:
    return InputRefused(f"{path} is a damaged checkpoint: {why}; delete it to train that run afresh")


def model_config(s: TrainingSettings) -> GPTConfig:
    return GPTConfig(VOCAB_SIZE, s.block_size, s.n_layer, s.n_head, s.n_embd)


def learning_rate(step: int, s: TrainingSettings) -> float:
    """Linear warm-up over ``warmup_steps``, then cosine decay from ``lr`` to ``min_lr``
    at the last step."""
    if step < s.warmup_steps:
        return s.lr * (step + 1) / s.warmup_steps
    progress = (step - s.warmup_steps) / max(1, s.steps - s.warmup_steps)
    return s.min_lr + 0.5 * (s.lr - s.min_lr) * (1.0 + math.cos(math.pi * min(1.0, progress)))


def move_one_ulp(model: torch.nn.Module, seed: int, dtype: torch.dtype) -> None:
    """Move every parameter element one ULP *of* ``dtype`` (float32, or the autocast dtype:
    the precision the forward pass sees) up or down, the direction drawn per element from a
    generator seeded with ``seed``. One ULP of ``x`` in a format with ``m`` stored mantissa
    bits is ``2**(e - m)`` for ``2**e <= |x| < 2**(e + 1)``; zeros move by the format's
    smallest normal spacing, ``2**(emin - m)``."""
    info = torch.finfo(dtype)
    mantissa_bits = -int(round(math.log2(info.eps)))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            up = torch.rand(p.shape, generator=g) < 0.5
            sign = torch.where(up, 1.0, -1.0).to(p.device, p.dtype)
            _, exponent = torch.frexp(torch.where(p == 0, torch.full_like(p, info.tiny), p))
            p.add_(sign * torch.ldexp(torch.ones_like(p), exponent - 1 - mantissa_bits))


def _optimizer(model: torch.nn.Module, s: TrainingSettings) -> torch.optim.Optimizer:
    """AdamW, the usual GPT grouping: weight decay on every parameter of two or more
    dimensions (matrices and embeddings), none on biases and layer norms."""
    params = list(model.parameters())
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": s.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=s.lr, betas=(s.beta1, s.beta2), foreach=False)


def _kill_point() -> tuple[int, int] | None:
    value = os.environ.get(KILL_ENV)
    if not value:
        return None
    rank, step = value.split(":")
    return int(rank), int(step)


def autocast_dtype(name: str, backend: Backend) -> torch.dtype:
    """The autocast dtype for setting ``name`` on ``backend``: bfloat16 where the device
    computes it, else float16 (then with a GradScaler) — older GPUs and Ascend parts
    without bfloat16 train that way."""
    dtype = torch_dtype(name)
    if dtype == torch.bfloat16 and backend.device in ("cuda", "npu"):
        if not getattr(torch, backend.device).is_bf16_supported():
            return torch.float16
    return dtype


def write_initial_weights(s: TrainingSettings, store: Checkpoints, ranks: Ranks) -> int:
    """Rank 0 draws the initial weights from ``s.seed`` and saves them (unless a resumed
    set already has them); returns the parameter count."""
    torch.manual_seed(s.seed)
    model = GPT(model_config(s))
    if ranks.leader and not store.initial.exists():
        save_atomically(model.state_dict(), store.initial)
    ranks.barrier()
    return parameter_count(model)


class Trainer:
    """One run (``spec``) of the set described by ``s``, on ``backend``, as ``ranks``."""

    def __init__(
        self,
        spec: RunSpec,
        s: TrainingSettings,
        backend: Backend,
        ranks: Ranks,
        store: Checkpoints,
        emit: Emit,
    ):
        self.spec, self.s, self.backend, self.ranks, self.store, self.emit = (
            spec,
            s,
            backend,
            ranks,
            store,
            emit,
        )
        self.corpus = Corpus.load(s.eval_fraction)
        self.device = torch.device(backend.device, ranks.local_rank) if backend.device != "cpu" else None
        self.amp_dtype = autocast_dtype(s.dtype, backend)
        self.local_batch = s.batch_size // ranks.world
        self.data_seed = s.seed + (1 if spec.noise and s.noise == "data_order" else 0)
        self.eval_windows = eval_offsets(self.corpus, s.eval_batches, s.batch_size, s.block_size)[
            ranks.rank :: ranks.world
        ]

    # -- pieces ------------------------------------------------------------------------

    def _tensor(self, a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(self.device or "cpu")

    def _autocast(self):
        return torch.autocast(
            device_type=self.backend.device, dtype=self.amp_dtype, enabled=self.amp_dtype != torch.float32
        )

    def _evaluate(self, model: torch.nn.Module) -> float:
        model.eval()
        total = torch.zeros((), dtype=torch.float64, device=self.device or "cpu")
        with torch.no_grad(), self._autocast():
            for i in range(0, len(self.eval_windows), self.local_batch):
                x, y = windows(
                    self.corpus.eval, self.eval_windows[i : i + self.local_batch], self.s.block_size
                )
                total += model(self._tensor(x), self._tensor(y)).double().mean()
        model.train()
        batches = math.ceil(len(self.eval_windows) / self.local_batch)
        return float(self.ranks.mean(total / batches))

    def _sample(
        self, step: int, loss_sum: torch.Tensor, norm_sum: torch.Tensor, n: int, model
    ) -> dict[str, float]:
        eval_loss = self._evaluate(model)
        return {
            "step": step,
            "train_loss": float(self.ranks.mean(loss_sum / n)),
            "eval_loss": eval_loss,
            "perplexity": math.exp(eval_loss),
            "grad_norm": float(norm_sum / n),
        }

    def _emit_sample(self, sample: dict[str, Any]) -> None:
        self.emit(CurvePoint(self.spec.name, sample["step"], {k: sample[k] for k in METRICS}))
        self.emit(Progress(f"E {self.spec.name}", sample["step"], self.s.steps))

    # -- the run -----------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Train (or continue) this run to ``s.steps``; returns its samples and timings."""
        s, ranks = self.s, self.ranks
        done_file = self.store.done(self.spec.name)
        if done_file.exists():
            try:
                finished = json.loads(done_file.read_text("utf-8"))
                for sample in finished["samples"]:
                    self._emit_sample(sample)
            except (ValueError, TypeError, KeyError, RecursionError) as exc:
                raise damaged(done_file, "it is not the record of a finished run") from exc
            self.emit(Message(f"{self.spec.name}: finished before, taken from {done_file}"))
            return finished

        model = GPT(model_config(s)).to(self.device or "cpu")
        try:
            model.load_state_dict(load_checkpoint(self.store.initial, self.device))
        except (RuntimeError, TypeError) as exc:
            raise damaged(self.store.initial, "its weights do not fit this run's model") from exc
        if self.spec.noise and s.noise in ("one_ulp", "one_ulp_autocast"):
            move_one_ulp(model, s.seed + 1, torch.float32 if s.noise == "one_ulp" else self.amp_dtype)
        optimizer = _optimizer(model, s)
        scaler = torch.amp.GradScaler(self.backend.device, enabled=self.amp_dtype == torch.float16)
        start, samples = 0, []
        latest = self.store.latest(self.spec.name)
        if latest.exists():
            state = load_checkpoint(latest, self.device)
            try:
                model.load_state_dict(state["model"])
                optimizer.load_state_dict(state["optimizer"])
                scaler.load_state_dict(state["scaler"])
                start, samples = int(state["step"]), list(state["samples"])
                for sample in samples:
                    self._emit_sample(sample)
            except (RuntimeError, ValueError, TypeError, KeyError, IndexError) as exc:
                raise damaged(latest, "its state does not fit this run") from exc
            self.emit(Message(f"{self.spec.name}: resuming at step {start} from {latest}"))

        # The model is compiled on its own and then wrapped by DDP: the fused graph is then
        # the same with one process or several (compiling the DDP wrapper instead would split
        # it at DDP's gradient buckets).
        net: torch.nn.Module = self.backend.fused(model) if self.spec.fused else model
        if ranks.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            net = DistributedDataParallel(net, device_ids=[ranks.local_rank] if self.device else None)
        self.emit(Message(f"{self.spec.name}: training from step {start} to {s.steps}"))

        kill = _kill_point()
        zero = torch.zeros((), dtype=torch.float32, device=self.device or "cpu")
        loss_sum, norm_sum, n = zero.clone(), zero.clone(), 0
        began = time.perf_counter()
        first_step_seconds = None
        for step in range(start, s.steps):
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(step, s)
            x, y = train_batch(
                self.corpus, self.data_seed, step, s.batch_size, s.block_size, ranks.rank, ranks.world
            )
            t0 = time.perf_counter()
            with self._autocast():
                loss = net(self._tensor(x), self._tensor(y)).mean()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), s.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            loss_sum += loss.detach().float()
            norm_sum += norm.detach().float()
            n += 1
            if first_step_seconds is None:
                self.backend.synchronize()
                first_step_seconds = time.perf_counter() - t0
            done = step + 1
            if kill is not None and kill == (ranks.rank, done):
                os.kill(os.getpid(), signal.SIGKILL)
            if done % s.sample_every == 0 or done == s.steps:
                sample = self._sample(done, loss_sum, norm_sum, n, model)
                samples.append(sample)
                self._emit_sample(sample)
                loss_sum, norm_sum, n = zero.clone(), zero.clone(), 0
            if done % s.checkpoint_every == 0 and done < s.steps:
                if ranks.leader:
                    state = {
                        "step": done,
                        "model": model.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "scaler": scaler.state_dict(),
                        "samples": samples,
                    }
                    save_atomically(state, latest)
                ranks.barrier()
        finished = {
            "samples": samples,
            "seconds": time.perf_counter() - began,
            "first_step_seconds": first_step_seconds,
            "resumed_at": start,
        }
        if ranks.leader:
            done_file.parent.mkdir(parents=True, exist_ok=True)
            done_file.write_text(json.dumps(finished), "utf-8")
            latest.unlink(missing_ok=True)
        ranks.barrier()
        return finished


def train_all(
    s: TrainingSettings, backend: Backend, ranks: Ranks, store: Checkpoints, emit: Emit
) -> dict[str, Any]:
    """The run set (:data:`RUNS`) one after the other; the payload task E analyses."""
    if s.threads:
        torch.set_num_threads(s.threads)
    parameters = write_initial_weights(s, store, ranks)
    emit(Message(f"GPT with {parameters:,} parameters, {ranks.world} process(es)"))
    amp = autocast_dtype(s.dtype, backend)
    if amp != torch_dtype(s.dtype):
        emit(
            Message(
                f"{backend.name} does not compute {s.dtype}; training under float16 autocast with a GradScaler"
            )
        )
    runs = {spec.name: Trainer(spec, s, backend, ranks, store, emit).run() for spec in RUNS}
    return {
        "runs": runs,
        "parameters": parameters,
        "world_size": ranks.world,
        "autocast_dtype": str(amp).removeprefix("torch."),
        "grad_scaler": amp == torch.float16,
        "threads_per_process": torch.get_num_threads(),
        "specs": [asdict(spec) for spec in RUNS],
    }
