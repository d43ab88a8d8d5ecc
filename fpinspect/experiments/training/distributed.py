"""Several training processes: the ``torchrun`` launch, the process group inside a rank,
and why a launch failed.

A launch is ``python -m torch.distributed.run --standalone --nproc-per-node N
--max-restarts 0 -m fpinspect.experiments.child ...``: torchrun's agent starts the ranks,
watches them every :data:`MONITOR_INTERVAL_S` seconds, and when one exits non-zero stops
the others and exits non-zero itself — so a dead rank ends the launch instead of leaving
the others waiting. Collectives carry a timeout as well (``init_process_group(timeout=)``),
for a rank that hangs rather than dies.

The process group's backend follows the device: gloo on cpu, nccl on cuda, hccl on npu.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

#: Process-group backend per device.
PG_BACKENDS = {"cpu": "gloo", "cuda": "nccl", "npu": "hccl"}
MONITOR_INTERVAL_S = 0.2


def torchrun_launcher(nproc: int) -> list[str]:
    """The command prefix that starts ``nproc`` ranks of a Python module on this machine
    (a free rendezvous port, no restarts)."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "--max-restarts=0",
        f"--monitor-interval={MONITOR_INTERVAL_S}",
    ]


@dataclass(frozen=True)
class Ranks:
    """This process's place among the training processes (rank 0 of 1 without torchrun)."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def leader(self) -> bool:
        """Rank 0: the one that writes events, checkpoints and results."""
        return self.rank == 0

    def mean(self, t: Any) -> Any:
        """``t`` averaged over the ranks (``t`` itself with one rank)."""
        if self.world == 1:
            return t
        import torch.distributed as dist

        t = t.clone()
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t / self.world

    def barrier(self) -> None:
        if self.world > 1:
            import torch.distributed as dist

            dist.barrier()


@contextmanager
def process_group(device: str, timeout_s: float) -> Iterator[Ranks]:
    """Join the process group torchrun set up (``WORLD_SIZE`` > 1 in the environment), bind
    this rank to its accelerator, and leave the group on the way out."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        yield Ranks()
        return
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ["LOCAL_RANK"])
    if device == "cuda":
        torch.cuda.set_device(local_rank)
    elif device == "npu":
        torch.npu.set_device(local_rank)
    dist.init_process_group(PG_BACKENDS[device], timeout=timedelta(seconds=timeout_s))
    try:
        yield Ranks(dist.get_rank(), dist.get_world_size(), local_rank)
    finally:
        dist.destroy_process_group()


_ROOT_CAUSE = re.compile(
    r"Root Cause.*?rank\s*:\s*(?P<rank>\d+).*?exitcode\s*:\s*(?P<code>-?\d+)"
    r"(?:.*?traceback\s*:\s*(?P<why>[^\n]*))?",
    re.DOTALL,
)


@dataclass(frozen=True)
class RankFailure:
    """The first rank torchrun saw fail: its rank, exit code (negative: killed by that
    signal) and torchrun's one-line reason."""

    rank: int
    exitcode: int
    reason: str

    def describe(self) -> str:
        if self.exitcode < 0:
            how = f"was killed by signal {-self.exitcode}"
        else:
            how = f"exited with status {self.exitcode}"
        return f"rank {self.rank} {how}"


def root_cause(torchrun_log: str) -> RankFailure | None:
    """The first failure in the summary torchrun writes when a rank fails ("Root Cause
    (first observed failure)"); None when the log holds no such summary."""
    m = _ROOT_CAUSE.search(torchrun_log)
    if m is None:
        return None
    return RankFailure(int(m["rank"]), int(m["code"]), (m["why"] or "").strip())
