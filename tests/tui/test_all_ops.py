"""The inspector lists every op on demand (counts by type, attributes, tensors, dumps) and compares
an op fusion left alone with its namesake when it is highlighted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gefixtures import GraphBuilder, tensor, write_dump
from harness import app_for, drive, settle
from protofixtures import real_ge

from fpinspect.tui.widgets.banner import Banner
from fpinspect.tui.widgets.op_list import OpList

T = [4, 8]


def _text(widget) -> str:
    return str(widget.render())


def _matmul_run(root: Path) -> Path:
    """conv1 (UB-fused with bn1) -> mm (unfused MatMul, diverging) -> autofuse_0, as a run folder."""
    on = (GraphBuilder()
          .op("x", "Data", outputs=[tensor(T)])
          .op("conv1", "Conv2D", inputs=["x:0"], outputs=[tensor(T, origin_name="bn1", origin_index=0)],
              attrs={"_datadump_original_op_names": ["conv1", "bn1"], "strides": [1, 1]})
          .op("mm", "MatMul", inputs=["conv1:0"], outputs=[tensor(T)], attrs={"transpose_x1": False})
          .fused("autofuse_0", inputs=["mm:0"], outputs=[tensor(T, origin_name="relu", origin_index=0)],
                 original=[("relu", "Relu")]))  # fmt: skip
    off = (GraphBuilder()
           .op("x", "Data", outputs=[tensor(T)])
           .op("conv1", "Conv2D", inputs=["x:0"], outputs=[tensor(T)])
           .op("bn1", "BatchNorm", inputs=["conv1:0"], outputs=[tensor(T)])
           .op("mm", "MatMul", inputs=["bn1:0"], outputs=[tensor(T)])
           .op("relu", "Relu", inputs=["mm:0"], outputs=[tensor(T)]))  # fmt: skip
    on.write(root / "dumpgraph_af_open" / "Build.json")
    off.write(root / "dumpgraph_af_close" / "Build.json")
    rng = np.random.default_rng(0)
    bn, mm = (rng.standard_normal(T).astype(np.float16) for _ in range(2))
    on_data, off_data = root / "datadump_af_open", root / "datadump_af_close"
    write_dump(on_data, "Conv2D", "conv1", "output", 0, bn)
    write_dump(on_data, "MatMul", "mm", "output", 0, mm * np.float16(1.5))
    write_dump(on_data, "AscBackend", "autofuse_0", "output", 0, np.maximum(mm * np.float16(1.5), 0))
    write_dump(off_data, "BatchNorm", "bn1", "output", 0, bn)
    write_dump(off_data, "MatMul", "mm", "output", 0, mm)
    write_dump(off_data, "Relu", "relu", "output", 0, np.maximum(mm, 0))
    return root


def test_a_lists_every_op_with_counts_and_details(tmp_path):
    app = app_for(_matmul_run(tmp_path))

    async def scenario(pilot):
        ops = app.screen.query_one(OpList)
        assert ops.shown == ["conv1", "autofuse_0"]  # every fusion kind: the UB-fused Conv2D too
        await pilot.press("a")
        await settle(pilot)
        assert ops.shown == ["x", "conv1", "mm", "autofuse_0"]
        note = _text(app.screen.query_one(Banner))
        assert "All 4 ops, 2 fused" in note and "Conv2D 1 (1 fused)" in note and "MatMul 1" in note
        assert app.screen.query_one(OpList).move_to("mm")
        await settle(pilot)
        info = _text(app.screen.query_one("#detail-info"))
        assert "Inputs (1)" in info and "← conv1:0" in info and "transpose_x1" in info
        assert "MatMul.mm." in info  # its dump file
        record = app.screen.inspection.record(app.screen.inspection.plans("mm")[0])
        assert record is not None and record.verdict == "fail"  # compared with its namesake on demand
        await pilot.press("a")
        await settle(pilot)
        assert ops.shown == ["conv1", "autofuse_0"] and "All 4 ops" not in _text(app.screen.query_one(Banner))
        assert not app.screen.query_one("#detail-info").display

    drive(app, scenario)


@pytest.mark.parametrize(("name", "fused", "every"), [("ge_proto_00046_afterUBMatch.txt", 53, 234),
                                                     ("ge_proto_origin.txt", 0, 4)])
def test_real_graphs_list_their_ops(name, fused, every):
    app = app_for(str(real_ge(name)))

    async def scenario(pilot):
        insp = app.screen.inspection
        assert len(insp.fused_rows) == fused
        if fused:
            assert insp.rows[0].op.type == "Conv2D"
            await pilot.press("a")
            await settle(pilot)
        assert insp.showing_all and len(app.screen.query_one(OpList).shown) == every
        assert "Attributes" in _text(app.screen.query_one("#detail-info"))
        await pilot.press("slash", *"conv")
        await settle(pilot)
        shown = app.screen.query_one(OpList).shown
        assert shown and all("conv" in insp.by_name[n].haystack for n in shown)

    drive(app, scenario)
    assert app.return_code in (None, 0), app.return_value


def test_open_narrows_fused_types_and_compares_unfused_ops(tmp_path):
    app = app_for(_matmul_run(tmp_path), fused_types=["AscBackend"], compare_unfused=True)

    async def scenario(pilot):
        insp = app.screen.inspection
        assert app.screen.query_one(OpList).shown == ["mm", "autofuse_0"]
        assert [f.name for f in insp.localisation.introduced] == ["mm"]  # the divergence starts at the MatMul
        assert "mm" in _text(app.screen.query_one(Banner))

    drive(app, scenario)
