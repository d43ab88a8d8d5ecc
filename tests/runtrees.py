"""Dump trees of a whole run for tests: the bundled sample's dumps as GE datadump leaves of two
ranks and two steps, fusion on and fusion off."""

from __future__ import annotations

import shutil
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "fpinspect" / "sample_dumps" / "regression"
CULPRIT = "autofuse_2_Add_LayerNorm"
STAMP = "20261203101010"


def _heal(folder: Path) -> None:
    """Make the culprit's fused outputs equal to the eager outputs they stand for (this rank's
    fused kernel is then exact)."""
    close = SAMPLE / "datadump_af_close"
    for out, original in ((0, "Add.add.19"), (1, "LayerNorm.ln2_layer_norm_1.20")):
        fused = next(folder.glob(f"AscBackend.{CULPRIT}.*.output.{out}.npy"))
        shutil.copyfile(next(close.glob(f"{original}.*.output.0.npy")), fused)


def write_trees(root: Path) -> Path:
    """Fusion-on and fusion-off GE trees under ``root/on`` and ``root/off``: ranks 0 and 1, steps 0
    and 1, one graph; rank 1's culprit is exact at step 0. Returns ``root``."""
    for side, src in (("on", "datadump_af_open"), ("off", "datadump_af_close")):
        for rank in (0, 1):
            for step in (0, 1):
                leaf = root / side / STAMP / str(rank) / "ge_default_1" / "1" / str(step)
                shutil.copytree(SAMPLE / src, leaf)
                if side == "on" and rank == 1 and step == 0:
                    _heal(leaf)
    return root


def write_adump_trees(root: Path) -> Path:
    """Fusion-on and fusion-off adump dump-stream trees under ``root/on`` and ``root/off``: one
    folder per device (ranks 0 and 1) of files named ``type.name.dump_number.task.stream.timestamp``.
    Returns ``root``."""
    for side, src in (("on", "datadump_af_open"), ("off", "datadump_af_close")):
        for rank in (0, 1):
            folder = root / side / str(rank)
            folder.mkdir(parents=True)
            dumps: dict[str, int] = {}
            for file in sorted((SAMPLE / src).glob("*.npy")):
                op_type, name, rest = file.name.split(".", 2)
                number = dumps.setdefault(f"{op_type}.{name}", len(dumps))
                shutil.copyfile(file, folder / f"{op_type}.{name}.{number}.{rest}")
    return root


def write_run(root: Path) -> Path:
    """A run folder whose data folders are :func:`write_trees`' trees: the sample's graphs in
    ``dumpgraph_af_open/`` and ``dumpgraph_af_close/``, ``datadump_af_open/`` and
    ``datadump_af_close/`` trees of ranks 0 and 1, steps 0 and 1. Returns ``root``."""
    write_trees(root / "trees")
    for side, tree in (("open", "on"), ("close", "off")):
        shutil.copytree(SAMPLE / f"dumpgraph_af_{side}", root / f"dumpgraph_af_{side}")
        (root / "trees" / tree).rename(root / f"datadump_af_{side}")
    (root / "trees").rmdir()
    return root
