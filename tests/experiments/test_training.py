"""Task E: the pieces on their own (fast), then real runs of a test-sized GPT — one
process, two processes under torchrun, a rank that dies, and a resumed run that must
reproduce the uninterrupted one bit for bit."""

from __future__ import annotations

import dataclasses
import json
import math
import threading

import numpy as np
import pytest

from fpinspect.experiments.engine import ExperimentFailed, ExperimentProcess, collect
from fpinspect.experiments.events import CurvePoint
from fpinspect.experiments.output import write_outputs
from fpinspect.experiments.registry import get_task
from fpinspect.experiments.results import TaskReport
from fpinspect.experiments.tasks.training import TrainingResult, TrainingSettings
from fpinspect.experiments.training.corpus import Corpus, eval_offsets, train_batch
from fpinspect.experiments.training.distributed import root_cause
from fpinspect.experiments.training.divergence import FACTOR, first_divergence, noise_band

#: A GPT small enough that a compile and a few steps take seconds.
TINY = dict(
    n_layer=1,
    n_head=2,
    n_embd=16,
    block_size=16,
    batch_size=4,
    steps=8,
    sample_every=2,
    checkpoint_every=4,
    eval_batches=2,
    warmup_steps=2,
)
#: No run of the tiny GPT may take longer than this; a hang fails the test instead.
DEADLINE_S = 240


def tiny(**overrides) -> TrainingSettings:
    return dataclasses.replace(TrainingSettings.profile("quick"), **{**TINY, **overrides})


# -- fast: the pieces ------------------------------------------------------------------


def test_noise_band_is_the_running_maximum_gap():
    band = noise_band(np.array([1.0, 1.0, 1.0, 1.0]), np.array([1.0, 1.5, 1.1, 0.0]))
    assert band.tolist() == [0.0, 0.5, 0.5, 1.0]


def test_divergence_finds_the_first_sample_beyond_the_band():
    steps = np.array([10, 20, 30, 40])
    eager = np.array([5.0, 4.0, 3.0, 2.0])
    band = np.full(4, 0.01)
    floor = np.zeros(4)
    within = eager + FACTOR * 0.01 * np.array([0.5, -0.9, 0.99, -0.2])
    assert first_divergence(steps, eager, within, band, floor) is None
    jumped = eager + np.array([0.0, 0.005, 0.5, 0.5])
    d = first_divergence(steps, eager, jumped, band, floor)
    assert (d.index, d.step, d.size) == (2, 30, pytest.approx(0.5)) and d.ratio == pytest.approx(25.0)
    assert (d.beyond, d.last_step) == (2, 40)
    excursion = first_divergence(steps, eager, eager + np.array([0.0, 0.5, 0.0, 0.0]), band, floor)
    assert (excursion.step, excursion.beyond, excursion.last_step) == (20, 1, 20)
    # a NaN is beyond any band; a floor widens it
    assert first_divergence(steps, eager, np.array([5.0, math.nan, 3.0, 2.0]), band, floor).step == 20
    assert first_divergence(steps, eager, jumped, band, np.full(4, 1.0)) is None


def payload(fused_offset: np.ndarray, noise_offset: float) -> dict:
    """A synthetic run set: eager curves, a noise run off by ``noise_offset``, a fused run
    off by ``fused_offset`` per sample."""
    steps = [10, 20, 30, 40]
    base = {
        "train_loss": [5.0, 4.0, 3.0, 2.5],
        "eval_loss": [5.1, 4.1, 3.2, 2.8],
        "grad_norm": [2.0, 1.5, 1.0, 0.8],
    }

    def run(offset):
        samples = []
        for i, step in enumerate(steps):
            values = {m: v[i] + float(np.broadcast_to(offset, 4)[i]) for m, v in base.items()}
            samples.append({"step": step, **values, "perplexity": math.exp(values["eval_loss"])})
        return {"samples": samples, "seconds": 1.0, "first_step_seconds": 0.1, "resumed_at": 0}

    return {
        "runs": {"eager": run(0.0), "fused": run(fused_offset), "noise": run(noise_offset)},
        "parameters": 1,
        "world_size": 1,
        "grad_scaler": False,
        "threads_per_process": 1,
    }


def test_verdict_fails_when_fused_leaves_the_noise_band():
    s = TrainingSettings.profile("quick")
    bad = TrainingResult(s, payload(np.array([0.0, 0.001, 0.3, 0.3]), 0.01), "cpu")
    (v,) = bad.verdicts()
    assert v.agrees is False and "leaves the noise band at step 30" in v.measured
    assert "samples beyond it: 2 of 4, the last at step 40" in v.measured
    d = bad.data()["divergence"]
    assert (d["step"], d["metric"], d["samples_beyond"], d["last_step_beyond"]) == (30, "train_loss", 2, 40)
    assert d["size"] == pytest.approx(0.3) and d["band"] == pytest.approx(0.01)
    assert d["ratio"] == pytest.approx(0.3 / (FACTOR * 0.01), rel=1e-2)
    good = TrainingResult(s, payload(np.array([0.0, 0.001, -0.015, 0.012]), 0.01), "cpu")
    assert good.verdicts()[0].agrees is True and good.data()["divergence"] is None


def test_batches_are_a_function_of_seed_and_step_and_split_over_ranks():
    corpus = Corpus.load(0.1)
    assert len(corpus.train) > 400_000 and len(corpus.eval) > 40_000
    x, y = train_batch(corpus, 7, 3, 8, 16)
    assert x.shape == y.shape == (8, 16) and (x[:, 1:] == y[:, :-1]).all()
    assert (train_batch(corpus, 7, 3, 8, 16)[0] == x).all() and not (
        train_batch(corpus, 7, 4, 8, 16)[0] == x
    ).all()
    halves = [train_batch(corpus, 7, 3, 8, 16, rank=r, world=2)[0] for r in (0, 1)]
    assert (np.stack(halves, 1).reshape(8, 16) == x).all()
    offsets = eval_offsets(corpus, 2, 4, 16)
    assert len(offsets) == 8 and offsets.max() + 17 <= len(corpus.eval)


def test_settings_refuse_what_cannot_run():
    with pytest.raises(ValueError, match="batch_size 4 must split evenly over nproc 3"):
        tiny(nproc=3)
    with pytest.raises(ValueError, match="checkpoint_every 3 must be a multiple of sample_every 2"):
        tiny(checkpoint_every=3)
    with pytest.raises(ValueError, match="noise must be one of"):
        tiny(noise="cosmic rays")


def test_root_cause_reads_torchrun_failure_summary():
    log = """
[W1201 ...] Sending process 123 closing signal SIGTERM
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
fpinspect.experiments.child FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-01_07:00:00
  host      : box
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 124)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 124
============================================================
"""
    cause = root_cause(log)
    assert (cause.rank, cause.exitcode) == (1, -9) and "SIGKILL" in cause.reason
    assert cause.describe() == "rank 1 was killed by signal 9"
    assert root_cause("Traceback: something else entirely") is None


@pytest.mark.needs("torch")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_move_one_ulp_moves_every_weight_exactly_one_ulp(dtype):
    import torch

    from fpinspect.experiments.training.loop import move_one_ulp

    torch.manual_seed(0)
    layer = torch.nn.Linear(64, 32)
    before = [p.detach().clone() for p in layer.parameters()]
    fmt = getattr(torch, dtype)
    move_one_ulp(layer, 5, fmt)
    for old, new in zip(before, layer.parameters()):
        new = new.detach()
        if fmt == torch.float32:
            inf = torch.full_like(old, math.inf)
            up, down = torch.nextafter(old, inf), torch.nextafter(old, -inf)
            assert ((new == up) | (new == down)).all() and (new > old).any() and (new < old).any()
        else:  # one step of the bfloat16 grid: the rounded weights are neighbours there
            _, e = torch.frexp(old)
            assert torch.equal((new - old).abs(), torch.ldexp(torch.ones_like(old), e - 8))


@pytest.mark.needs("torch")
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_float16_with_a_grad_scaler_and_float32_train_too(tmp_path, dtype):
    from fpinspect.experiments.backends import open_backend
    from fpinspect.experiments.training.distributed import Ranks
    from fpinspect.experiments.training.loop import RunSpec, Trainer, autocast_dtype, write_initial_weights
    from fpinspect.experiments.training.store import Checkpoints

    s = tiny(dtype=dtype, steps=4, checkpoint_every=2, run_dir=str(tmp_path))
    backend = open_backend("cpu")
    store = Checkpoints(tmp_path)
    write_initial_weights(s, store, Ranks())
    trainer = Trainer(RunSpec("eager"), s, backend, Ranks(), store, lambda event: None)
    assert str(trainer.amp_dtype) == f"torch.{dtype}" == str(autocast_dtype(dtype, backend))
    samples = trainer.run()["samples"]
    assert [x["step"] for x in samples] == [2, 4]
    assert all(math.isfinite(x[m]) for x in samples for m in ("train_loss", "eval_loss", "grad_norm"))
    assert samples[-1]["eval_loss"] < math.log(256)


def run_cli(*args):
    from click.testing import CliRunner

    from fpinspect.cli.experiments import run_command

    return CliRunner().invoke(run_command, list(args))


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (["C1", "--nproc", "2"], "task C1 runs in one process; --nproc and --resume are for task E."),
        (["E", "--nproc", "3"], "task E: batch_size 16 must split evenly over nproc 3."),
        (["E", "--resume", "{tmp}"], "{tmp} holds no stopped run of task E to resume"),
    ],
)
def test_training_options_refuse_bad_usage_in_one_sentence(tmp_path, args, sentence):
    result = run_cli(*(a.format(tmp=tmp_path) for a in args))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().startswith("fpinspect run: " + sentence.format(tmp=tmp_path))


# -- slow: real runs -------------------------------------------------------------------


def run_set(settings: TrainingSettings, env: dict | None = None) -> tuple[TaskReport, list]:
    """Run task E in a child; a watchdog cancels it after DEADLINE_S so a hang fails."""
    events: list = []
    with ExperimentProcess("E", settings, device="cpu", env=env) as process:
        watchdog = threading.Timer(DEADLINE_S, process.cancel)
        watchdog.start()
        try:
            payload = collect(process, events.append)
        finally:
            watchdog.cancel()
    return TaskReport.from_dict(payload), events


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, inductor_cache):
    return run_set(tiny(run_dir=str(tmp_path_factory.mktemp("e-one"))))


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory, inductor_cache):
    return run_set(tiny(nproc=2, run_dir=str(tmp_path_factory.mktemp("e-two"))))


def check_contract(report: TaskReport, world: int) -> dict:
    d = report.to_dict()
    s = TINY
    assert d["task"] == "E" and d["world_size"] == world
    assert d["steps"] == list(range(s["sample_every"], s["steps"] + 1, s["sample_every"]))
    for run in ("eager", "fused", "noise_run"):
        for m in ("train_loss", "eval_loss", "grad_norm", "perplexity"):
            assert len(d[run][m]) == len(d["steps"]) and all(math.isfinite(v) for v in d[run][m])
        assert d[run]["perplexity"] == pytest.approx([math.exp(v) for v in d[run]["eval_loss"]])
    for m in ("train_loss", "eval_loss", "grad_norm"):
        assert len(d["noise_band"][m]) == len(d["steps"])
        assert d["noise_band"][m] == sorted(d["noise_band"][m])  # a running maximum
    assert d["divergence"] is None or set(d["divergence"]) >= {"step", "size"}
    assert set(d["final"]) == {"eager", "fused", "noise", "fused_minus_eager"}
    assert d["final"]["eager"]["train_loss"] == d["eager"]["train_loss"][-1]
    # the runs really differ: the fused and the perturbed run are other computations
    assert d["fused"]["train_loss"] != d["eager"]["train_loss"]
    assert d["noise_run"]["train_loss"] != d["eager"]["train_loss"]
    # and they learn: the loss falls from ln(256)
    assert d["eager"]["eval_loss"][-1] < d["eager"]["eval_loss"][0] < math.log(256) + 0.1
    (v,) = report.verdicts
    assert v.topic == "curves overlap within normal noise" and v.agrees is (d["divergence"] is None)
    # every figure the task declares for baseline checks is a field of its result
    assert get_task("E").figures.unmatched(d) == []
    return d


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_one_process_eager_fused_and_noise(one_process, tmp_path):
    report, events = one_process
    check_contract(report, 1)
    points = [e for e in events if isinstance(e, CurvePoint)]
    assert {p.series for p in points} == {"eager", "fused", "noise"}
    assert [p.step for p in points if p.series == "fused"] == report.data["steps"]
    written = write_outputs(report, tmp_path)
    names = {p.name for p in written}
    assert {"e_train_loss.png", "e_eval_loss.png", "e_grad_norm.png"} <= names
    assert all(p.stat().st_size > 10_000 for p in written if p.suffix == ".png")
    assert "first step beyond the noise band" in (tmp_path / "report.md").read_text()


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_two_processes_under_torchrun(two_processes, one_process):
    d2 = check_contract(two_processes[0], 2)
    d1 = one_process[0].data
    # the same global batches: one and two processes train the same model up to rounding
    assert d2["eager"]["train_loss"] == pytest.approx(d1["eager"]["train_loss"], rel=1e-3)
    assert {p.series for p in two_processes[1] if isinstance(p, CurvePoint)} == {"eager", "fused", "noise"}


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_a_dying_rank_fails_clearly_and_the_run_resumes_bit_exactly(two_processes, tmp_path):
    settings = tiny(nproc=2, run_dir=str(tmp_path))
    with pytest.raises(ExperimentFailed) as failed:
        run_set(settings, env={"FPINSPECT_TEST_KILL_RANK_AT": "1:6"})
    message = str(failed.value)
    assert "rank 1 was killed by signal 9" in message and "step 4 of the eager run" in message
    assert f"--resume {tmp_path}" in message
    assert json.loads((tmp_path / "checkpoints" / "run.json").read_text())["settings"]["nproc"] == 2
    assert (tmp_path / "checkpoints" / "eager" / "latest.pt").exists()

    # continued from the command line, which takes the settings and device from run.json
    result = run_cli("E", "--resume", str(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.stderr
    d = json.loads(result.stdout)
    assert d["settings"] == {**settings.to_dict(), "resume": True, "run_dir": str(tmp_path.resolve())}
    assert (tmp_path / "figures" / "e_train_loss.png").exists() and (tmp_path / "report.md").exists()
    assert d["timing"]["eager"]["resumed_at"] == 4 and d["timing"]["fused"]["resumed_at"] == 0
    uninterrupted = two_processes[0].data
    for run in ("eager", "fused", "noise_run"):
        assert d[run] == uninterrupted[run], run
