"""Whether a refactor kept every report the same, byte for byte: this tree against another one.

    .venv/bin/python benchmarks/same_outputs.py --before SRC [--dir TMP]

Both trees write, with this checkout's Python and samples: ``compare --format json`` and ``--format csv`` of
each bundled sample case (``sample_dumps/*``), and ``diff --format json`` with ``--jobs 1`` and
``2`` of a few generated pairs (float16 of 3 Mi elements: several chunks, KL read again; float32
against float64; NaN and inf; int64; a 5 Mi float32 against float64 pair past the exact-percentile
cap). Prints each output that differs and exits 1 if any does. ``SRC``: another tree, e.g.
``git archive REV | tar -x -C SRC``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent


def _pairs(folder: Path) -> list[tuple[str, str]]:
    rng = np.random.default_rng(5)
    ref = rng.standard_normal(3_000_000)
    x = ref[:40_000].astype(np.float16)
    y = (ref[:40_000] * 1.01).astype(np.float16)
    x[5], y[7] = np.nan, np.inf
    arrays = {
        "big_a": (ref * 1.0003).astype(np.float16),
        "big_b": ref.astype(np.float16),
        "f32": (ref[:50_000] * 1.0000001).astype(np.float32),
        "f64": ref[:50_000],
        "special_a": x,
        "special_b": y,
        "int_a": np.arange(1000, dtype=np.int64),
        "int_b": np.arange(1000, dtype=np.int64) * 3 // 2,
        "sketch_a": (rng.standard_normal(5_000_000) * 1e-3).astype(np.float32),
        "sketch_b": rng.standard_normal(5_000_000) * 1e-3,
    }
    for name, a in arrays.items():
        np.save(folder / f"{name}.npy", a)
    return [
        ("big_a", "big_b"),
        ("f32", "f64"),
        ("special_a", "special_b"),
        ("int_a", "int_b"),
        ("sketch_a", "sketch_b"),
    ]


def _outputs(tree: Path, out: Path, data: Path, pairs) -> None:
    out.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    run = [sys.executable, "-m", "fpinspect"]
    # this checkout's samples for both trees, named alike: the reports name their files
    for case in sorted(
        p.relative_to(HERE) for p in (HERE / "sample_dumps").iterdir() if (p / "datadump_af_open").is_dir()
    ):
        sides = [
            f"--af-{s}-{k}={case}/{d}_af_{s}"
            for s in ("open", "close")
            for k, d in (("graph", "dumpgraph"), ("data", "datadump"))
        ]
        for fmt in ("json", "csv"):
            subprocess.run(
                [
                    *run,
                    "compare",
                    *sides,
                    "--no-record",
                    "--format",
                    fmt,
                    "-o",
                    str(out / f"{case.name}.{fmt}"),
                ],
                env=env,
                cwd=tree,
                capture_output=True,
                check=False,
            )
    for a, b in pairs:
        for jobs in (1, 2):
            with open(out / f"diff_{a}_{jobs}.json", "wb") as f:
                subprocess.run(
                    [
                        *run,
                        "diff",
                        str(data / f"{a}.npy"),
                        str(data / f"{b}.npy"),
                        "--format",
                        "json",
                        "--jobs",
                        str(jobs),
                    ],
                    env=env,
                    cwd=tree,
                    stdout=f,
                    stderr=subprocess.DEVNULL,
                    check=False,
                )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", required=True, help="the other tree")
    p.add_argument("--dir", default=None, help="folder for the generated pairs and the outputs")
    args = p.parse_args()
    if not (Path(args.before) / "fpinspect" / "__init__.py").is_file():
        p.error(f"--before {args.before} is not a source tree of fpinspect (no fpinspect/__init__.py in it)")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp = Path(tmp)
        (tmp / "data").mkdir()
        pairs = _pairs(tmp / "data")
        _outputs(Path(args.before).resolve(), tmp / "before", tmp / "data", pairs)
        _outputs(HERE, tmp / "after", tmp / "data", pairs)
        names = sorted(os.listdir(tmp / "after"))
        _, differ, missing = filecmp.cmpfiles(tmp / "before", tmp / "after", names, shallow=False)
        for name in names:
            size = (tmp / "after" / name).stat().st_size
            state = "DIFFERS" if name in differ else "missing before" if name in missing else "same"
            print(f"  {name:<28} {size:>8} bytes  {state if size else 'EMPTY (the command failed)'}")
        empty = [n for n in names if not (tmp / "after" / n).stat().st_size]
        print(f"{len(names) - len(differ) - len(missing)} of {len(names)} outputs the same bytes")
        return 1 if differ or missing or empty else 0


if __name__ == "__main__":
    sys.exit(main())
