"""The fusion-off subgraph of a fused op, and evaluating it whole or in row blocks."""

from __future__ import annotations

import numpy as np
import pytest
from gefixtures import GraphBuilder, chain_pair, tensor

from fpinspect.dumps.formats.fusion import fused_op
from fpinspect.dumps.formats.graph import load_graph
from fpinspect.replay import evaluate as ev
from fpinspect.replay.evaluate import EAGER, FP64, evaluate
from fpinspect.replay.subgraph import extract


def _models(tmp_path, on: GraphBuilder, off: GraphBuilder):
    return load_graph(on.write(tmp_path / "on.json")), load_graph(off.write(tmp_path / "off.json"))


def test_internal_edges_and_boundary_inputs(tmp_path):
    on, off = _models(tmp_path, *chain_pair())
    sub = extract(off, fused_op(on, "autofuse_0_Mul_Add"))
    assert [op.name for op in sub.ops] == ["Mul_1", "Add_2"]
    assert [(b.producer, b.index, b.consumer, b.consumer_index) for b in sub.boundary] == [
        ("x", 0, "Mul_1", 0),
        ("w", 0, "Mul_1", 1),
    ]
    assert sub.uses == {("Mul_1", 0): 1}
    assert sub.missing == []
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    w = np.full((2, 3), 0.5, np.float16)
    got = evaluate(sub, {("x", 0): x, ("w", 0): w}, EAGER, [("Add_2", 0)]).outputs[("Add_2", 0)]
    assert got.dtype == np.float16 and np.array_equal(got, x * w + x)


def test_originals_missing_from_the_fusion_off_graph_are_listed(tmp_path):
    on, off = chain_pair()
    off.graphs[0]["op"] = [op for op in off.graphs[0]["op"] if op["name"] != "Mul_1"]
    on_model, off_model = _models(tmp_path, on, off)
    assert extract(off_model, fused_op(on_model, "autofuse_0_Mul_Add")).missing == ["Mul_1"]


def _wide_chain(tmp_path, rows=64, cols=48):
    t = [rows, cols]
    off = (
        GraphBuilder("off")
        .op("x", "Data", outputs=[tensor(t)])
        .op("b", "Const", outputs=[tensor([cols])])
        .op("Muls_1", "Muls", inputs=["x:0"], outputs=[tensor(t)], attrs={"value": 0.05})
        .op("Exp_2", "Exp", inputs=["Muls_1:0"], outputs=[tensor(t)])
        .op("Add_3", "Add", inputs=["Exp_2:0", "b:0"], outputs=[tensor(t)])
    )
    on = GraphBuilder("on").fused(
        "f",
        inputs=["x:0", "b:0"],
        outputs=[tensor(t, origin_name="Add_3", origin_index=0)],
        original=[("Muls_1", "Muls"), ("Exp_2", "Exp"), ("Add_3", "Add")],
    )
    on_model, off_model = _models(tmp_path, on, off)
    return extract(off_model, fused_op(on_model, "f"))


@pytest.mark.parametrize("mode", [EAGER, FP64])
def test_row_blocks_give_the_whole_result(tmp_path, monkeypatch, mode):
    sub = _wide_chain(tmp_path)
    rng = np.random.default_rng(1)
    bound = {
        ("x", 0): rng.standard_normal((64, 48)).astype(np.float16),
        ("b", 0): rng.standard_normal(48).astype(np.float16),
    }
    whole = evaluate(sub, bound, mode, [("Add_3", 0)]).outputs[("Add_3", 0)]
    monkeypatch.setattr(ev, "BLOCK", 100)  # about two rows per block
    assert ev._blockable(sub, bound, [("Add_3", 0)]) == 64
    blocked = evaluate(sub, bound, mode, [("Add_3", 0)]).outputs[("Add_3", 0)]
    assert blocked.dtype == whole.dtype == (np.float16 if mode == EAGER else np.float32)
    assert np.array_equal(blocked, whole)


def test_fp64_truth_keeps_float64_for_float32_tensors():
    assert ev.truth_dtype(np.dtype(np.float32)) == np.float64
    assert ev.truth_dtype(np.dtype(np.float16)) == np.float32


def _norm_chain(tmp_path, begin: int, rows=64, cols=48):
    t = [rows, cols]
    off = (
        GraphBuilder("off")
        .op("x", "Data", outputs=[tensor(t)])
        .op("g", "Const", outputs=[tensor([cols])])
        .op("b", "Const", outputs=[tensor([cols])])
        .op("Adds_1", "Adds", inputs=["x:0"], outputs=[tensor(t)], attrs={"value": 0.5})
        .op(
            "ln_2",
            "LayerNorm",
            inputs=["Adds_1:0", "g:0", "b:0"],
            outputs=[tensor(t)],
            attrs={"begin_norm_axis": begin, "begin_params_axis": begin, "epsilon": 1e-5},
        )
        .op("Softmax_3", "SoftmaxV2", inputs=["ln_2:0"], outputs=[tensor(t)], attrs={"axes": [-1]})
    )
    on = GraphBuilder("on").fused(
        "f",
        inputs=["x:0", "g:0", "b:0"],
        outputs=[tensor(t, origin_name="Softmax_3", origin_index=0)],
        original=[("Adds_1", "Adds"), ("ln_2", "LayerNorm"), ("Softmax_3", "SoftmaxV2")],
    )
    on_model, off_model = _models(tmp_path, on, off)
    return extract(off_model, fused_op(on_model, "f"))


@pytest.mark.parametrize("mode", [EAGER, FP64])
def test_norms_and_softmax_over_the_last_axis_are_blocked_by_rows(tmp_path, monkeypatch, mode):
    sub = _norm_chain(tmp_path, begin=1)
    rng = np.random.default_rng(2)
    bound = {
        ("x", 0): rng.standard_normal((64, 48)).astype(np.float16),
        ("g", 0): rng.standard_normal(48).astype(np.float16),
        ("b", 0): rng.standard_normal(48).astype(np.float16),
    }
    whole = evaluate(sub, bound, mode, [("Softmax_3", 0)]).outputs[("Softmax_3", 0)]
    monkeypatch.setattr(ev, "BLOCK", 100)
    assert ev._blockable(sub, bound, [("Softmax_3", 0)]) == 64
    assert np.array_equal(evaluate(sub, bound, mode, [("Softmax_3", 0)]).outputs[("Softmax_3", 0)], whole)


def test_a_norm_over_axis_0_is_evaluated_whole(tmp_path, monkeypatch):
    sub = _norm_chain(tmp_path, begin=0)
    monkeypatch.setattr(ev, "BLOCK", 100)
    assert ev._blockable(sub, {}, [("Softmax_3", 0)]) is None
