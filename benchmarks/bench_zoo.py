"""The model zoo's verdict table: each real ``transformers`` architecture (fpinspect/capture/zoo.py)
captured clean and with a planted ``scale`` fault, compared with replay, and confirmed by
ablation. Prints one Markdown row per architecture x dtype x capture:

    model | dtype | capture | introduced | first named | more accurate | inherited | confirm agrees

``confirm agrees`` runs ``fpinspect confirm``'s ablation on every region and checks that the
regions it confirms are exactly the ones the comparison calls introduced.

    .venv/bin/python benchmarks/bench_zoo.py [--models hf-llama,hf-gpt2] [--dtypes bfloat16,float16]
        [--seeds 0] [--plant none|middle|reaching|all] [--no-confirm]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault(
    "TORCHINDUCTOR_CACHE_DIR", str(Path(tempfile.gettempdir()) / "fpinspect-bench-inductor")
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "capture"))
from zoocases import ZooCase, planted_regions, zoo_capture  # noqa: E402

from fpinspect.capture.choices import ZOO_NAMES  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(ZOO_NAMES))
    ap.add_argument("--dtypes", default="bfloat16,float16")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--plant", choices=("none", "middle", "reaching", "all"), default="middle")
    ap.add_argument("--no-confirm", action="store_true")
    args = ap.parse_args(argv)
    print(
        "| model | dtype | seed | capture | introduced | named first | more accurate | inherited | confirmed | agree | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            for dtype in args.dtypes.split(","):
                for seed in (int(s) for s in args.seeds.split(",")):
                    start = time.perf_counter()
                    cap = zoo_capture(model, dtype, seed)
                    plants = [] if args.plant == "none" else planted_regions(cap, args.plant)
                    for planted in [None, *plants]:
                        t0 = time.perf_counter()
                        case = ZooCase(cap, Path(tmp) / f"{model}-{dtype}-{seed}-{planted}", planted)
                        row = case.run(confirm_all=not args.no_confirm)
                        took = time.perf_counter() - (start if planted is None else t0)
                        bad += not row.ok
                        print(row.markdown(model, dtype, seed, took), flush=True)
    print(f"\n{bad} row(s) where a verdict is wrong or confirm disagrees", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
