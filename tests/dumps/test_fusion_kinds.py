"""Every fusion kind counts: autofuse ops and any op whose _datadump_original_op_names names others."""

from gefixtures import GraphBuilder, tensor
from protofixtures import real_ge

from fpinspect.dumps.formats.fusion import fused_ops, fused_type_counts, is_fused
from fpinspect.dumps.formats.graph import load_graph


def _ub_graph(tmp_path):
    g = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor([1, 4, 2, 2])])
        .op(
            "conv1",
            "Conv2D",
            inputs=["x:0"],
            outputs=[tensor([1, 4, 2, 2], origin_name="scale_conv1", origin_index=0)],
            attrs={"_datadump_original_op_names": ["scale_conv1", "conv1", "bn_conv1"]},
        )
        .op(
            "relu",
            "Relu",
            inputs=["conv1:0"],
            outputs=[tensor([1, 4, 2, 2])],
            attrs={"_datadump_original_op_names": ["relu"]},
        )  # only itself: not fused
        .op(
            "cast",
            "Cast",
            inputs=["relu:0"],
            outputs=[tensor([1, 4, 2, 2])],
            attrs={"_datadump_original_op_names": []},
        )  # empty: not fused
        .fused(
            "autofuse_0_Mul",
            inputs=["cast:0"],
            outputs=[tensor([1, 4, 2, 2], origin_name="mul", origin_index=0)],
            original=[("mul", "Mul")],
        )
        .op("fused_by_type", "FusedAscBackend", inputs=["autofuse_0_Mul:0"], outputs=[tensor([1, 4, 2, 2])])
    )
    return load_graph(g.write(tmp_path / "g.json"))


def test_ub_fused_ops_count_and_types_narrow(tmp_path):
    model = _ub_graph(tmp_path)
    assert [is_fused(model.ops[n]) for n in ("conv1", "relu", "cast")] == [True, False, False]
    assert [op.name for op in fused_ops(model)] == ["conv1", "autofuse_0_Mul", "fused_by_type"]
    assert fused_type_counts(model) == {"AscBackend": 1, "Conv2D": 1, "FusedAscBackend": 1}
    assert [op.name for op in fused_ops(model, types=["Conv2D"])] == ["conv1"]
    conv = fused_ops(model)[0]
    assert conv.original_op_names == ["scale_conv1", "conv1", "bn_conv1"]
    assert (conv.outputs[0].origin_op, conv.outputs[0].origin_index) == ("scale_conv1", 0)


def test_inputs_fed_by_a_ub_fused_op_trace_to_its_origin(tmp_path):
    g = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor([4])])
        .op(
            "conv1",
            "Conv2D",
            inputs=["x:0"],
            outputs=[tensor([4], origin_name="bn_conv1", origin_index=0)],
            attrs={"_datadump_original_op_names": ["conv1", "bn_conv1"]},
        )
        .fused(
            "autofuse_0",
            inputs=["conv1:0"],
            outputs=[tensor([4], origin_name="relu", origin_index=0)],
            original=[("relu", "Relu")],
        )
    )
    model = load_graph(g.write(tmp_path / "h.json"))
    inp = fused_ops(model, types=["AscBackend"])[0].inputs[0]
    assert (inp.src_op, inp.origin_op, inp.origin_index) == ("conv1", "bn_conv1", 0)


def test_real_ub_fusion_graph_lists_its_fused_convolutions():
    model = load_graph(real_ge("ge_proto_00046_afterUBMatch.txt"))
    fused = fused_ops(model)
    assert fused_type_counts(model) == {"Conv2D": 53} and len(fused) == 53
    for op in fused:
        assert len(op.original_op_names) >= 2
        assert all(o.origin_op in op.original_op_names for o in op.outputs)


def test_unfused_ops_present_in_both_runs_are_compared_by_name(tmp_path):
    from gefixtures import chain_pair

    from fpinspect.dumps.formats.fusion import compared_ops

    on, off = chain_pair()
    on_model, off_model = (
        load_graph(on.write(tmp_path / "on.json")),
        load_graph(off.write(tmp_path / "off.json")),
    )
    assert [op.name for op in compared_ops(on_model, off_model)] == ["autofuse_0_Mul_Add"]
    walked = compared_ops(on_model, off_model, unfused=True)
    assert [op.name for op in walked] == ["autofuse_0_Mul_Add", "Relu_3"]  # not x, w (data), out (NetOutput)
    relu = walked[1]
    assert [(o.origin_op, o.origin_index) for o in relu.outputs] == [("Relu_3", 0)]
    assert [(i.src_op, i.origin_op) for i in relu.inputs] == [("autofuse_0_Mul_Add", "Add_2")]
    assert [op.name for op in compared_ops(on_model, off_model, types=["Relu"], unfused=True)] == ["Relu_3"]
