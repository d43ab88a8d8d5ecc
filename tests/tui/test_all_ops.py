"""The inspector lists every op on demand (counts by type, attributes, tensors, dumps) and compares
an op fusion left alone with its namesake when it is highlighted."""

from __future__ import annotations

from pathlib import Path

import pytest
from gefixtures import fusion_kinds_run
from harness import app_for, drive, settle
from protofixtures import real_ge

from fpinspect.inspection import CompareSettings
from fpinspect.tui.widgets.banner import Banner
from fpinspect.tui.widgets.op_list import OpList


def _text(widget) -> str:
    return str(widget.render())


def _matmul_run(root: Path) -> Path:
    """conv1 (UB-fused with bn1) -> mm (unfused MatMul, diverging) -> autofuse_0, as a run folder."""
    fusion_kinds_run(root, shift_matmul=True)
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


@pytest.mark.parametrize(
    ("name", "fused", "every"),
    [
        ("ge_proto_00046_afterUBMatch.txt", 53, 234),
        ("ge_proto_origin.txt", 0, 4),
        ("atc_om_model.json", 2, 19),
    ],
)
def test_real_graphs_list_their_ops(name, fused, every):
    app = app_for(str(real_ge(name)))

    async def scenario(pilot):
        insp = app.screen.inspection
        assert len(insp.fused_rows) == fused
        if fused:
            await pilot.press("a")
            await settle(pilot)
        assert insp.showing_all and len(app.screen.query_one(OpList).shown) == every
        assert "Attributes" in _text(app.screen.query_one("#detail-info"))
        needle = insp.rows[-1].op.type.lower()  # search by type
        await pilot.press("slash", *needle)
        await settle(pilot)
        shown = app.screen.query_one(OpList).shown
        assert shown and all(needle in insp.by_name[n].haystack for n in shown)

    drive(app, scenario)
    assert app.return_code in (None, 0), app.return_value


def test_open_narrows_fused_types_and_compares_unfused_ops(tmp_path):
    app = app_for(
        _matmul_run(tmp_path), compare=CompareSettings(fused_types=("AscBackend",), compare_unfused=True)
    )

    async def scenario(pilot):
        insp = app.screen.inspection
        assert app.screen.query_one(OpList).shown == ["mm", "autofuse_0"]
        assert [f.name for f in insp.localisation.introduced] == ["mm"]  # the divergence starts at the MatMul
        assert "mm" in _text(app.screen.query_one(Banner))

    drive(app, scenario)
