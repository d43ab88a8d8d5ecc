"""Files that would run code when unpickled: every loader of the package refuses them.

Each case plants a pickle whose ``__reduce__`` creates a marker file and checks that the
marker never appears and the user gets one sentence with exit status 2.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fpinspect.cli import main


class CreatesMarker:
    """Unpickling this creates ``marker`` (what an attacker's payload would do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_diff_refuses_a_pickled_npy(tmp_path):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.npy"
    np.save(evil, np.array([CreatesMarker(marker)], dtype=object), allow_pickle=True)
    result = CliRunner().invoke(main, ["diff", str(evil), str(evil)])
    assert not marker.exists()
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "pickled data" in " ".join(result.output.split())  # however the table wraps it


@pytest.mark.needs("torch")
def test_task_d_inputs_refuse_a_pickled_npy(tmp_path):
    from fpinspect.experiments.tensors import load_bits

    marker = tmp_path / "ran"
    evil = tmp_path / "0.npy"
    np.save(evil, np.array([CreatesMarker(marker)], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        load_bits(evil, "float32")
    assert not marker.exists()


@pytest.mark.parametrize("where", ["initial.pt", "eager/latest.pt"])
@pytest.mark.parametrize("payload", ["pickle", "garbage"])
def test_resume_refuses_a_checkpoint_that_is_not_plain_data(tmp_path, where, payload):
    torch = pytest.importorskip("torch")
    from fpinspect.cli.experiments import run_command
    from fpinspect.experiments.tasks.training import TrainingSettings

    settings = dataclasses.replace(
        TrainingSettings.profile("quick"),
        n_layer=1,
        n_head=2,
        n_embd=16,
        block_size=16,
        batch_size=4,
        steps=4,
        sample_every=2,
        checkpoint_every=2,
        eval_batches=1,
        warmup_steps=1,
        run_dir=str(tmp_path),
    )
    checkpoints = tmp_path / "checkpoints"
    (checkpoints / "eager").mkdir(parents=True)
    run = {"task": "E", "device": "cpu", "settings": settings.to_dict()}
    (checkpoints / "run.json").write_text(json.dumps(run), "utf-8")
    marker = tmp_path / "ran"
    if payload == "pickle":
        torch.save({"step": 2, "model": CreatesMarker(marker)}, checkpoints / where)
    else:
        (checkpoints / where).write_bytes(b"PK\x03\x04 not a checkpoint")

    result = CliRunner().invoke(run_command, ["E", "--resume", str(tmp_path), "--device", "cpu"])
    assert not marker.exists()
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    first = result.stderr.strip().splitlines()[-1]
    assert first.startswith(f"fpinspect run: {checkpoints / where} is a damaged checkpoint: ")
