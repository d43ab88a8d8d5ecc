"""``fpinspect warm``: compile the numerics kernels into numba's disk cache now, not on a first
comparison."""

from __future__ import annotations

import time

import click


@click.command("warm")
def warm_command() -> None:
    """Compile (or load) every statistics kernel for each supported format, and say how long it took."""
    from ..numerics import warmup

    start = time.perf_counter()
    names = warmup.warm()
    click.echo(
        f"fpinspect: numerics kernels ready for {len(names)} formats in {time.perf_counter() - start:.1f} s"
    )
