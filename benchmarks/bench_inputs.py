"""Reading real Ascend inputs without CANN: ge_proto text graphs against their JSON, raw dumps against .npy.

    .venv/bin/python benchmarks/bench_inputs.py [--full] [--dir TMP]

[1] A text graph of ~130 MB (``--full``; default ~5 MB): the sample Transformer graph's ops
    repeated under new names, written by GE's printer form, and the same model as atc's JSON.
    Measured in fresh processes: ``load_graph`` on each (time, peak RSS), and the ``protobuf``
    package's own text-format parser on the default size (its MB/s explains the fast reader).
[2] A raw dump folder of ~1 GiB (``--full``; default 64 MiB): 64 raw files, each one float16
    output, and its ``fpinspect convert`` .npy folder. Measured: indexing the folder and
    streaming every tensor through fpinspect's chunk reader, raw against .npy.
Ratios are against the baseline measured in the same run (JSON, .npy).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_numerics import MiB, child

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_dumps" / "regression" / "dumpgraph_af_open" / "Build.json"

LOAD = """
import sys
from fpinspect.dumps.formats.graph import load_graph
m = load_graph(sys.argv[1])
print(len(m.ops))
"""

TEXT_FORMAT = """
import sys
from fpinspect.dumps.formats.ge_text import parse_text_graph
with open(sys.argv[1], encoding="utf-8") as f:
    print(len(parse_text_graph(f)["graph"][0]["op"]))
"""

STREAM = """
import sys
from fpinspect.dumps.formats.datadump import DumpIndex
from fpinspect.dumps.formats.tensors import open_dump
from fpinspect.numerics.chunks import iter_chunks
index = DumpIndex.scan(sys.argv[1])
total = 0.0
for f in index.files:
    for _, (chunk,) in iter_chunks(open_dump(f)):
        total += float(chunk.astype("float32").sum())
print(len(index.files), total)
"""


def write_text_graph(path: Path, target_bytes: int) -> int:
    """Repeat the sample graph's ops (renamed ``name_c{k}``) until the text reaches ``target_bytes``."""
    from fpinspect.dumps.formats.ge_text import format_text_graph

    model = json.loads(SAMPLE.read_text(encoding="utf-8"))
    names = {op["name"] for op in model["graph"][0]["op"]}
    text = format_text_graph(model).splitlines(keepends=True)
    first = next(i for i, line in enumerate(text) if line == "  op {\n")
    end = next(i for i in range(first, len(text)) if text[i] == "}\n")  # the end of graph[0]
    head, ops, tail = "".join(text[:first]), "".join(text[first:end]), "".join(text[end:])
    quoted = re.compile(
        r'"(' + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r')(:-?\d+)?"'
    )
    copies = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        written = len(head)
        while written < target_bytes:
            block = quoted.sub(lambda m, k=copies: f'"{m.group(1)}_c{k}{m.group(2) or ""}"', ops)
            f.write(block)
            written += len(block)
            copies += 1
        f.write(tail)
    return copies * len(names)


def bench_text_graph(tmp: Path, full: bool) -> None:
    from fpinspect.dumps.formats.ge_text import read_text_graph

    text, as_json = tmp / "ge_proto_00000001_graph_1_Build.txt", tmp / "Build.json"
    ops = write_text_graph(text, (130 if full else 5) * 10**6)
    model = read_text_graph(str(text))
    assert len(model["graph"][0]["op"]) == ops
    with open(as_json, "w", encoding="utf-8") as f:
        json.dump(model, f)
    del model
    mb_text, mb_json = text.stat().st_size / 1e6, as_json.stat().st_size / 1e6
    print(f"[1] dump graph of {ops} ops: text {mb_text:.0f} MB, the same model as atc JSON {mb_json:.0f} MB")
    jt, jm, _ = child(LOAD, str(as_json))
    tt, tm, _ = child(LOAD, str(text))
    print(f"  load_graph(JSON)  : {jt:6.1f} s  peak RSS {jm / MiB:6.0f} MiB   (baseline)")
    print(
        f"  load_graph(text)  : {tt:6.1f} s  peak RSS {tm / MiB:6.0f} MiB   -> time x{tt / jt:.2f}, memory x{tm / jm:.2f}"
    )
    if not full:
        pt, pm, _ = child(TEXT_FORMAT, str(text))
        print(
            f"  protobuf text_format + walk: {pt:6.1f} s ({mb_text / pt:.1f} MB/s), peak RSS {pm / MiB:.0f} MiB "
            f"-> the printer-form reader is x{pt / tt:.1f} faster"
        )


def write_raw_folder(folder: Path, files: int, elements: int) -> None:
    from fpinspect.dumps.formats.rawdump import RawPayload, write_raw_dump

    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(files):
        data = rng.standard_normal(elements, dtype=np.float32).astype(np.float16)
        write_raw_dump(
            folder / f"AscBackend.autofuse_{i}.{i}.0.{1700000000000000 + i}",
            f"autofuse_{i}",
            [],
            [RawPayload(data, "DT_FLOAT16", "ND", (elements,))],
        )


def bench_raw_folder(tmp: Path, full: bool) -> None:
    from fpinspect.dumps.formats.convert import convert_folder

    files, elements = 64, (8 if full else 0.5) * MiB
    raw, npy = tmp / "raw", tmp / "npy"
    write_raw_folder(raw, files, int(elements))
    t0 = time.perf_counter()
    convert_folder(raw, npy)
    convert = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in raw.iterdir()) / MiB
    print(
        f"[2] raw dump folder: {files} files, {size:.0f} MiB; fpinspect convert -> .npy took {convert:.1f} s"
    )
    child(STREAM, str(npy))  # warm the page cache for both, so neither pays the first read
    child(STREAM, str(raw))
    nt, nm, nout = child(STREAM, str(npy))
    rt, rm, rout = child(STREAM, str(raw))
    same = nout.split() == rout.split()
    print(f"  index + stream .npy : {nt:6.1f} s  peak RSS {nm / MiB:6.0f} MiB   (baseline)")
    print(
        f"  index + stream raw  : {rt:6.1f} s  peak RSS {rm / MiB:6.0f} MiB   -> time x{rt / nt:.2f}, "
        f"memory x{rm / nm:.2f}; same sums: {same}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="the 130 MB text graph and the 1 GiB raw folder")
    p.add_argument("--dir", default=None, help="folder for the generated files (needs ~2.5 GB with --full)")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        bench_text_graph(Path(tmp), args.full)
        bench_raw_folder(Path(tmp), args.full)


if __name__ == "__main__":
    main()
