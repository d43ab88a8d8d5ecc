"""Ops of the same name but different types in the two graphs are not the same op: their pairs
are TYPE_MISMATCH, with no verdict, and never blamed."""

import numpy as np
from gefixtures import GraphBuilder, tensor, write_dump

from fpinspect.dumps.engine.compare import DumpComparison


def _namesake_run(root):
    """Fusion on: ``x -> Mul_2 (a Relu fusion left alone) -> autofuse_0``; fusion off, the
    ``Mul_2`` is a ``Mul`` (the one fusion took into ``autofuse_0``)."""
    t = [4, 8]
    on = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor(t)])
        .op("Mul_2", "Relu", inputs=["x:0"], outputs=[tensor(t)])
        .fused(
            "autofuse_0",
            inputs=["Mul_2:0"],
            outputs=[tensor(t, origin_name="Add_3", origin_index=0)],
            original=[("Add_3", "Add")],
        )
    )
    off = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor(t)])
        .op("Mul_2", "Mul", inputs=["x:0"], outputs=[tensor(t)])
        .op("Add_3", "Add", inputs=["Mul_2:0"], outputs=[tensor(t)])
    )
    on_graph = on.write(root / "on.json")
    off_graph = off.write(root / "off.json")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(t).astype(np.float16)
    write_dump(root / "on", "Relu", "Mul_2", "output", 0, np.maximum(x, 0))
    write_dump(root / "on", "AscBackend", "autofuse_0", "output", 0, np.maximum(x, 0) + 1)
    write_dump(root / "off", "Mul", "Mul_2", "output", 0, x * 3)
    write_dump(root / "off", "Add", "Add_3", "output", 0, np.maximum(x, 0) + 1)
    return [str(p) for p in (on_graph, off_graph, root / "on", root / "off")]


def test_a_namesake_of_another_type_is_a_type_mismatch_not_a_verdict(tmp_path):
    report = DumpComparison(*_namesake_run(tmp_path), compare_unfused=True).run(compare_input=True)
    by_pair = {(r.plan.fused_op, r.plan.kind): r for r in report.records}
    for key in (("Mul_2", "output"), ("autofuse_0", "input")):
        record = by_pair[key]
        assert "TYPE_MISMATCH" in record.status and record.verdict is None, key
        assert "Relu" in record.fields()["message"] and "Mul" in record.fields()["message"]
    assert by_pair[("autofuse_0", "output")].verdict == "pass"
    summary = report.summary()
    assert "Mul_2" not in summary.introduced and "Mul_2" not in summary.inherited


def test_namesakes_of_the_same_type_are_still_compared(tmp_path):
    args = _namesake_run(tmp_path)
    (tmp_path / "off.json").write_text((tmp_path / "off.json").read_text().replace('"Mul"', '"Relu"'))
    report = DumpComparison(*args, compare_unfused=True).run(compare_input=True)
    mul2 = next(r for r in report.records if r.plan.fused_op == "Mul_2")
    assert "TYPE_MISMATCH" not in mul2.status and mul2.verdict == "fail"
