"""A 100 000-op GE graph converted for Google's Model Explorer (``fpinspect[explorer]``).

    .venv/bin/python benchmarks/bench_explorer.py [--ops N] [--repeat R] [--dir TMP]

The graph: the sample Transformer block's ops (``capture``'s ``Build.json``: every op with its
tensor descriptions and attributes) repeated under new names until it has N ops (default
100 000), as atc's JSON. Each case runs in a fresh process, R times (default 3), the fastest
kept; its phases are timed inside the process (Model Explorer's import, which imports torch where
it is installed, is timed apart):

- ``load_graph`` alone: fpinspect's reader, the baseline;
- the adapter's conversion to Model Explorer's ``graph_builder`` classes (``GeAdapter.convert``,
  the reader included), the collector paused as the adapter pauses it;
- what ``fpinspect explore`` serves: those graphs as JSON text (msgspec);
- what ``model-explorer GRAPH --extensions=fpinspect.explorer`` does with the adapter's answer:
  Model Explorer's own ``convert_adapter_response`` (``dataclasses.asdict``) and ``json.dumps``.

Ratios are against ``load_graph`` in the same run. Model Explorer's conversion of a comparable
TFLite or ONNX model needs a model of that size, which this machine does not have.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_numerics import MiB, child  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fpinspect" / "sample_dumps" / "regression" / "dumpgraph_af_open" / "Build.json"

CASE = """
import gc, json, sys, time
t0 = time.perf_counter()
import model_explorer
from fpinspect.explorer.main import GeAdapter
from fpinspect.dumps.formats.graph import load_graph
t1 = time.perf_counter()
times = {"import": t1 - t0}
case, path = sys.argv[1], sys.argv[2]
if case == "load":
    gc.disable()  # as compare and the adapter do
    load_graph(path)
    times["run"] = time.perf_counter() - t1
else:
    graphs = GeAdapter().convert(path, {})
    t2 = time.perf_counter()
    times["convert"] = t2 - t1
    if case == "explore":
        import msgspec
        text = msgspec.json.encode(graphs)
        times["serialise"] = time.perf_counter() - t2
    elif case == "server":
        from model_explorer.utils import convert_adapter_response
        text = json.dumps(convert_adapter_response(graphs))
        times["serialise"] = time.perf_counter() - t2
    times["run"] = time.perf_counter() - t1
print(json.dumps(times))
"""


def write_graph(path: Path, ops: int) -> int:
    """The sample block's ops repeated (copy ``k`` named ``NAME_c{k}``, its inputs renamed
    alike) until there are ``ops``; returns the number written."""
    model = json.loads(SAMPLE.read_text(encoding="utf-8"))
    block = model["graph"][0]["op"]
    out: list[dict] = []
    k = 0
    while len(out) < ops:
        for op in block[: ops - len(out)]:
            copy = dict(op, name=f"{op['name']}_c{k}")
            if "input" in op:
                copy["input"] = [
                    f"{name}_c{k}:{index}" for name, _, index in (i.rpartition(":") for i in op["input"])
                ]
            out.append(copy)
        k += 1
    model["graph"][0]["op"] = out
    path.write_text(json.dumps(model), encoding="utf-8")
    return len(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default=None, help="where to write the graph (default: a temporary folder)")
    args = p.parse_args()
    print("load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        graph = Path(tmp) / "Build.json"
        n = write_graph(graph, args.ops)
        print(f"{n} ops, {graph.stat().st_size / MiB:.0f} MiB of atc JSON")
        rows = {}
        for case in ("load", "convert", "explore", "server"):
            runs = []
            for _ in range(args.repeat):
                _, rss, out = child(CASE, case, str(graph))
                runs.append((json.loads(out), rss))
            rows[case] = min(runs, key=lambda r: r[0]["run"])
        base = rows["load"][0]["run"]
        print(f"{'case':<52} {'seconds':>8} {'x load':>7} {'peak RSS':>9}")
        for case, label in (
            ("load", "load_graph (baseline)"),
            ("convert", "adapter: load + convert to graph_builder classes"),
            ("explore", "fpinspect explore: + JSON (msgspec)"),
            ("server", "model-explorer --extensions: + asdict + json.dumps"),
        ):
            times, rss = rows[case]
            parts = ", ".join(f"{k} {v:.2f}" for k, v in times.items() if k not in ("import", "run"))
            print(
                f"{label:<52} {times['run']:>8.2f} {times['run'] / base:>7.2f} {rss / MiB:>7.0f} MiB  {parts}"
            )
        print(f"import of model_explorer and the adapter: {rows['convert'][0]['import']:.2f} s")
    print("load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
