"""``fusion-precision-analyzer``: a drop-in for the reference ``fusion_precision_analyzer.py``.

Same flags, same console lines (the table's layout and number formats, the WARNING lines),
same status codes, so scripts that parse the reference's output keep working; the numbers
come from fpinspect's streaming toolkit (same formulas, bounded memory). Where it differs, it
is on purpose: a bad argument or a missing file is one sentence on stderr and exit status 2
(the reference prints ``ERROR:`` on stdout and exits 1); a tensor several files hold is read
from the newest (the reference takes the first that ``glob`` lists, in no set order, and
prints their names); an input the fused op's own dump lacks is read from its producer's
output dump, which holds the same tensor (the reference reports FILE_NOT_FOUND).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import dataclass

from .dumps.engine.pair import compare_npy, reference_status


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fusion-precision-analyzer",
        description="融合算子精度定位工具 / fusion operator precision analyzer (fpinspect drop-in)",
    )
    p.add_argument(
        "--mode",
        type=int,
        choices=[1, 2],
        default=1,
        help="1: batch compare dumps (default); 2: two npy files",
    )
    p.add_argument("--af-open-graph", help="dump graph JSON with auto-fusion enabled")
    p.add_argument("--af-close-graph", help="dump graph JSON with auto-fusion disabled")
    p.add_argument("--af-open-data", help="datadump npy folder with auto-fusion enabled")
    p.add_argument("--af-close-data", help="datadump npy folder with auto-fusion disabled")
    p.add_argument("--compare-input", action="store_true", help="also compare fused-op inputs")
    p.add_argument("--npy-a", help="mode 2: first npy file")
    p.add_argument("--npy-b", help="mode 2: second npy file")
    return p


def _fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _layout(desc) -> str | None:
    """A tensor description's layout as the graph JSON writes it (``FRACTAL_Z:16``)."""
    if desc is None or desc.layout is None:
        return None
    return desc.layout if desc.subformat is None else f"{desc.layout}:{desc.subformat}"


#: The producer types whose inputs the reference script skips (SKIPPED_CONST_DATA). GE writes
#: constants and weights as ``Const``, which it does not list: it looks for their dumps and
#: reports FILE_NOT_FOUND, and so does the drop-in.
REFERENCE_SKIPPED = ("Constant", "Data")


@dataclass
class _Row:
    """One line of the reference's table, and the WARNING line it prints while comparing."""

    kind: str
    fused_op: str
    fused_index: int
    origin_op: str | None
    origin_index: int | None
    status: str
    cosine: float | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    warning: str | None = None

    def cells(self) -> list[str]:
        return [
            self.kind,
            self.fused_op,
            str(self.fused_index),
            self.origin_op or "-",
            "-" if self.origin_index is None else str(self.origin_index),
            _fmt(self.cosine, ".10f"),
            _fmt(self.max_abs, ".6e"),
            _fmt(self.max_rel, ".6e"),
            self.status,
        ]


def _warning(status: str, fused: str, origin: str, plan, result) -> str | None:
    """The reference's WARNING line for a pair it could not compare (labels ``op output i``)."""
    if status == "FILE_NOT_FOUND":
        if plan is not None and plan.fused_file is None:
            return f"WARNING: 未找到融合侧 NPY: {fused}"
        return f"WARNING: 未找到原算子侧 NPY: {origin}"
    message = (result.message if result is not None else None) or (plan.message if plan else None) or ""
    if status == "NPY_LOAD_ERROR":
        return f"WARNING: NPY 加载失败 - {fused} / {origin}: {message}"
    if status == "FORMAT_UNSUPPORTED" and plan is not None:
        return (
            f"WARNING: 不支持的 format 转换 - {fused}: {_layout(plan.fused_desc)}"
            f" vs {origin}: {_layout(plan.origin_desc)}"
        )
    if status.endswith("SHAPE_MISMATCH") and result is not None:
        return f"WARNING: shape 不一致且元素数不同 - {fused}: {result.shape_a} vs {origin}: {result.shape_b}"
    if status.endswith("COMPUTE_ERROR"):
        return f"WARNING: 指标计算失败 - {fused} / {origin}: {message}"
    return None


def _row(cmp, rec) -> _Row:
    p, r = rec.plan, rec.result
    kind = "输出" if p.kind == "output" else "输入"
    row = _Row(kind, p.fused_op, p.fused_index, p.origin_op, p.origin_index, reference_status(rec.status))
    if p.kind == "output" and "NO_MAPPING" in p.status:  # the reference keeps neither half of a mapping
        row.origin_op = row.origin_index = None
    fused = f"{p.fused_op} {p.kind} {p.fused_index}"
    origin = f"{p.origin_op} output {p.origin_index}"
    if "SKIPPED_CONST_DATA" in rec.status and cmp.open_model.ops[p.src_op].type not in REFERENCE_SKIPPED:
        return _as_the_reference_compares(cmp, row, fused, origin)
    if r is not None:
        row.cosine, row.max_abs, row.max_rel = r.cosine, r.max_abs, r.max_rel
    if row.cosine is None:
        row.max_abs = row.max_rel = None
    row.warning = _warning(row.status, fused, origin, p, r)
    return row


def _as_the_reference_compares(cmp, row: _Row, fused: str, origin: str) -> _Row:
    """An input fed by a producer fpinspect skips and the reference does not (a Const): the
    fused op's own input dump against the producer's fusion-off output dump."""
    fused_file = cmp.open_index.lookup(row.fused_op, "input", row.fused_index)
    origin_file = cmp.close_index.lookup(row.origin_op, "output", row.origin_index) if row.origin_op else None
    if fused_file is None or origin_file is None:
        row.status = "FILE_NOT_FOUND"
        side = "融合侧" if fused_file is None else "原算子侧"
        row.warning = f"WARNING: 未找到{side} NPY: {fused if fused_file is None else origin}"
        return row
    res = compare_npy(fused_file.path, origin_file.path, worst=0, kl=False)
    row.status = reference_status(res.status)
    if res.cosine is not None:
        row.cosine, row.max_abs, row.max_rel = res.cosine, res.max_abs, res.max_rel
    row.warning = _warning(row.status, fused, origin, None, res)
    return row


def run_mode2(npy_a: str, npy_b: str) -> int:
    for path in (npy_a, npy_b):
        if not os.path.isfile(path):
            print(f"fusion-precision-analyzer: {path} does not exist or is not a file.", file=sys.stderr)
            return 2
    res = compare_npy(npy_a, npy_b, worst=0, kl=False)
    status = reference_status(res.status)
    warning = _warning(status, npy_a, npy_b, None, res)
    if warning:
        print(warning)
    print(f"文件A: {npy_a}")
    print(f"文件B: {npy_b}")
    print(f"状态: {status}")
    if res.cosine is not None:
        print(f"余弦相似度: {res.cosine:.10f}")
        print(f"绝对误差最大值: {_fmt(res.max_abs, '.6e')}")
        print(f"相对误差最大值: {_fmt(res.max_rel, '.6e')}")
    return 0


HEADERS = (
    "类型",
    "融合算子名",
    "索引",
    "原算子名",
    "原索引",
    "余弦相似度",
    "绝对误差最大值",
    "相对误差最大值",
    "状态",
)


def format_table(rows: list[_Row]) -> str:
    """The reference's table: each column as wide as its widest cell (in characters), cells
    left-justified and joined by `` | ``, a ``-+-`` rule under the header."""
    cells = [r.cells() for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(HEADERS)]

    def line(row) -> str:
        return " | ".join(c.ljust(widths[i]) for i, c in enumerate(row))

    return "\n".join([line(HEADERS), "-+-".join("-" * w for w in widths), *(line(c) for c in cells)])


def run_mode1(
    open_graph: str, close_graph: str, open_data: str, close_data: str, *, compare_input: bool
) -> int:
    from .dumps.engine.compare import DumpComparison
    from .dumps.errors import InputError

    print(f"解析开启融合 dump 图: {open_graph}")
    try:
        # the reference script's table: the trio and the status, no KL nor worst elements
        cmp = DumpComparison(open_graph, close_graph, open_data, close_data, worst=0, kl=False)
    except InputError as exc:
        print(f"fusion-precision-analyzer: {exc}", file=sys.stderr)
        return 2
    for p in cmp.plans:
        if p.kind == "output" and "NO_MAPPING" in p.status:
            print(
                f"WARNING: 融合算子 {p.fused_op} 输出 {p.fused_index} 缺少 "
                "_datadump_origin_name 或 _datadump_origin_output_index，跳过"
            )
    print(f"解析关闭融合 dump 图: {close_graph}")
    report = cmp.run(compare_input=compare_input)
    outs = [r for r in report.records if r.plan.kind == "output"]
    ins = [r for r in report.records if r.plan.kind == "input"]
    found = f"找到 {len(outs)} 个融合算子输出映射"
    print((found + (f", {len(ins)} 个融合算子输入映射" if compare_input else "")) + "\n")
    rows = [_row(cmp, rec) for rec in [*outs, *ins]]
    for row in rows:
        if row.warning:
            print(row.warning)
    print(format_table(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.mode == 2:
        if not args.npy_a or not args.npy_b:
            parser.error("mode 2 needs --npy-a and --npy-b")
        return run_mode2(args.npy_a, args.npy_b)
    missing = [
        f
        for f in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data")
        if not getattr(args, f)
    ]
    if missing:
        parser.error("mode 1 needs " + ", ".join("--" + m.replace("_", "-") for m in missing))
    return run_mode1(
        args.af_open_graph,
        args.af_close_graph,
        args.af_open_data,
        args.af_close_data,
        compare_input=args.compare_input,
    )


def console_main() -> None:
    try:
        code = main()
        sys.stdout.flush()
    except KeyboardInterrupt:
        sys.stderr.write("fusion-precision-analyzer: interrupted\n")
        sys.stderr.flush()
        os._exit(130)  # worker threads are not waited for
    except OSError as exc:  # stdout on a full disk or a closed pipe
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.stderr.write(f"fusion-precision-analyzer: cannot write the report ({exc.strerror or exc})\n")
        code = 2
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    console_main()
