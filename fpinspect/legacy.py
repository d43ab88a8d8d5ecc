"""``fusion-precision-analyzer``: a drop-in for the reference ``fusion_precision_analyzer.py``.

Same flags, same console lines, same status codes, so existing scripts keep working; the
numbers come from fpinspect's streaming toolkit (same formulas, bounded memory).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from .dumps.pair import compare_npy, reference_status


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


def run_mode2(npy_a: str, npy_b: str) -> int:
    for path in (npy_a, npy_b):
        if not os.path.isfile(path):
            print(f"fusion-precision-analyzer: {path} does not exist or is not a file.", file=sys.stderr)
            return 2
    res = compare_npy(npy_a, npy_b, worst=0, kl=False)
    print(f"文件A: {npy_a}")
    print(f"文件B: {npy_b}")
    print(f"状态: {reference_status(res.status)}")
    if res.message:
        print(f"fusion-precision-analyzer: {res.message}", file=sys.stderr)
    print(f"余弦相似度: {_fmt(res.cosine, '.10f')}")
    print(f"绝对误差最大值: {_fmt(res.max_abs, '.6e')}")
    print(f"相对误差最大值: {_fmt(res.max_rel, '.6e')}")
    return 0


def _cell(text: str | None, width: int) -> str:
    text = "-" if text is None else str(text)
    return (text[: width - 3] + "..." if len(text) > width else text).ljust(width)


def _row(kind: str, rec) -> str:
    p, r = rec.plan, rec.result
    cells = [
        kind,
        _cell(p.fused_op, 35),
        str(p.fused_index),
        _cell(p.origin_op, 24),
        "-" if p.origin_index is None else str(p.origin_index),
        _fmt(r.cosine if r else None, ".8f"),
        _fmt(r.max_abs if r else None, ".4e"),
        _fmt(r.max_rel if r else None, ".4e"),
        reference_status(rec.status),
    ]
    return " | ".join(cells)


def run_mode1(
    open_graph: str, close_graph: str, open_data: str, close_data: str, *, compare_input: bool
) -> int:
    from .dumps.compare import DumpComparison
    from .dumps.errors import InputError

    print(f"解析开启融合 dump 图: {open_graph}")
    print(f"解析关闭融合 dump 图: {close_graph}")
    try:
        # the reference script's table: the trio and the status, no KL nor worst elements
        cmp = DumpComparison(open_graph, close_graph, open_data, close_data, worst=0, kl=False)
    except InputError as exc:
        print(f"fusion-precision-analyzer: {exc}", file=sys.stderr)
        return 2
    report = cmp.run(compare_input=compare_input)
    outs = [r for r in report.records if r.plan.kind == "output"]
    ins = [r for r in report.records if r.plan.kind == "input"]
    found = f"找到 {len(outs)} 个融合算子输出映射"
    print(found + (f", {len(ins)} 个融合算子输入映射" if compare_input else ""))
    header = " | ".join(
        [
            "类型",
            _cell("融合算子名", 35),
            "索引",
            _cell("原算子名", 24),
            "原索引",
            "余弦相似度",
            "绝对误差最大值",
            "相对误差最大值",
            "状态",
        ]
    )
    print(header)
    print("-" * 131)
    for rec in outs:
        print(_row("输出", rec))
    for rec in ins:
        print(_row("输入", rec))
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
