"""The pieces of a capture, each on its own: JSON writer, dump writer, storage layouts,
injections, operator table and partitioning. Nothing here compiles."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from fpinspect.capture.choices import DEMO_NAMES
from fpinspect.capture.demos import DEMOS
from fpinspect.capture.dumpwriter import DumpWriter
from fpinspect.capture.errors import CaptureError
from fpinspect.capture.fused import CompiledRegion
from fpinspect.capture.gejson import GraphWriter
from fpinspect.capture.inject import Injection
from fpinspect.capture.optable import OPAQUE, POINTWISE, REDUCTION, check_supported, spec_for
from fpinspect.capture.partition import Region, partition
from fpinspect.capture.storage import describe, store
from fpinspect.capture.trace import build_graph, export
from fpinspect.dumps.formats.datadump import DumpIndex
from fpinspect.dumps.formats.fusion import fused_ops
from fpinspect.dumps.formats.graph import load_graph
from fpinspect.dumps.formats.layouts import convert_layout


def test_demo_names_are_the_demos():
    assert tuple(DEMOS) == DEMO_NAMES


# ---------------------------------------------------------------------- GE JSON


def test_graph_json_reads_back_with_the_dumps_reader(tmp_path):
    x = describe((2, 3), "float16")
    _, desc = store(np.ones((2, 3), np.float16), "float16")
    odd = 'scope/ünïcode "op"'
    w = GraphWriter("Build")
    w.add("x", "Data", [], [], [x], {"index": 0})
    w.add(odd, "Relu", ["x:0"], [x], [desc])
    fused = replace(desc, origin=(odd, 0))
    w.add(
        "autofuse_0_Relu",
        "AscBackend",
        ["x:0"],
        [x],
        [fused],
        {"_datadump_original_op_names": [odd], "_datadump_original_op_types": ["Relu"]},
    )
    w.add("Node_Output", "NetOutput", ["autofuse_0_Relu:0"], [desc], [])
    path = w.write(tmp_path / "Build.json", "m", {"capture_model": "m"})
    model = load_graph(path)
    assert not model.warnings
    assert list(model.ops) == ["x", odd, "autofuse_0_Relu", "Node_Output"]
    assert model.ops[odd].inputs[0].op == "x"
    assert model.ops[odd].output_desc[0].dtype == "DT_FLOAT16"
    assert model.ops[odd].output_desc[0].origin_shape == (2, 3)
    (op,) = fused_ops(model)
    assert (op.outputs[0].origin_op, op.outputs[0].origin_index) == (odd, 0)
    assert op.original_op_names == [odd] and op.original_op_types == ["Relu"]
    assert "id" not in path.read_text().split('"name": "x"')[1].split('"name"')[0]  # proto3 default omitted


# ---------------------------------------------------------------------- dumps and layouts


def test_dump_names_parse_and_long_names_go_through_mapping_csv(tmp_path):
    w = DumpWriter(tmp_path)
    w.write_op("MatMulV2", "mlp.fc1/linear", [np.zeros(3, np.float16)], [np.ones(3, np.float16)])
    long_name = "block/" * 50 + "add"
    w.write_op("Add", long_name, [], [np.full(3, 2, np.float16)])
    assert (tmp_path / "mapping.csv").exists()
    index = DumpIndex.scan(tmp_path)
    assert not index.skipped
    first = index.lookup("mlp.fc1/linear", "output", 0)
    assert first.op_type == "MatMulV2" and first.timestamp == 1_700_000_000_000_001
    assert index.lookup("mlp.fc1/linear", "input", 0) is not None
    assert np.load(index.lookup(long_name, "output", 0).path)[0] == 2


def test_a_0d_tensor_is_dumped_0d(tmp_path):
    DumpWriter(tmp_path).write_op("Sub", "rsub", [np.array(1.0, np.float32)], [np.ones(2, np.float16)])
    path = DumpIndex.scan(tmp_path).lookup("rsub", "input", 0).path
    assert np.load(path).shape == ()


@pytest.mark.parametrize(
    ("shape", "cube", "layout", "storage"),
    [
        ((2, 4, 3, 5), False, "NC1HWC0", (2, 1, 3, 5, 16)),
        ((2, 4, 17, 20), True, "FRACTAL_NZ", (2, 4, 2, 2, 16, 16)),
        ((3, 20), True, "FRACTAL_NZ", (2, 1, 16, 16)),
        ((3, 20), False, "ND", (3, 20)),
    ],
)
def test_ascend_storage_restores_exactly(shape, cube, layout, storage):
    values = np.random.default_rng(0).standard_normal(shape).astype(np.float16)
    data, desc = store(values, "float16", cube=cube, mode="ascend")
    assert (desc.layout, desc.storage_shape, data.shape, desc.shape) == (layout, storage, storage, shape)
    np.testing.assert_array_equal(convert_layout(data, desc.layout, desc.origin_format, shape), values)
    plain, plain_desc = store(values, "float16", cube=cube, mode="plain")
    assert plain_desc.layout == plain_desc.origin_format and plain.shape == shape


def test_bfloat16_is_dumped_as_float32_and_integers_keep_their_layout():
    data, desc = store(np.ones((1, 2, 2, 2), np.float32), "bfloat16", mode="ascend")
    assert data.dtype == np.float32 and desc.ge_dtype == "DT_BF16" and desc.layout == "NC1HWC0"
    data, desc = store(np.ones((1, 2, 2, 2), np.int64), "int64", mode="ascend")
    assert desc.layout == "NCHW" and desc.ge_dtype == "DT_INT64"


# ---------------------------------------------------------------------- injections


def test_injection_parsing_and_effects():
    assert Injection.parse("autofuse_2_Add=scale") == Injection("autofuse_2_Add", "scale")
    assert Injection.parse("2=nan").matches(2, "autofuse_2_Add")
    assert Injection.parse("autofuse_2_Add=nan").matches(2, "autofuse_2_Add")
    for bad in ("2", "=bf16", "2=half"):
        with pytest.raises(CaptureError):
            Injection.parse(bad)
    with pytest.raises(CaptureError, match="bfloat16"):
        Injection.parse("2=bf16").check_dtype(torch.bfloat16)
    t = torch.linspace(-3, 3, 200, dtype=torch.float16)
    assert torch.equal(Injection("0", "scale").after([t])[0], (t.float() * 1.03).half())
    nan = Injection("0", "nan").after([t])[0]
    assert int(nan.isnan().sum()) == 2 and bool(nan[0].isnan()) and bool(nan[-1].isnan())
    bf = Injection("0", "bf16").after([t])[0]
    assert torch.equal(bf, t.bfloat16().half()) and not torch.equal(bf, t)
    ints = torch.arange(4)
    assert Injection("0", "nan").after([ints])[0] is ints


# ---------------------------------------------------------------------- operators and regions


def test_operator_table_and_tag_fallbacks():
    aten = torch.ops.aten
    assert spec_for(aten.softmax.int).type == "SoftmaxV2" and spec_for(aten.softmax.int).kind == REDUCTION
    assert spec_for(aten.linear.default).cube
    assert (spec_for(aten.frac.default).type, spec_for(aten.frac.default).kind) == ("Frac", POINTWISE)
    assert spec_for(aten.argmax.default).kind == REDUCTION
    assert spec_for(aten.cumsum.default).kind == OPAQUE
    with pytest.raises(CaptureError, match="random"):
        check_supported(aten.rand_like.default, ())
    check_supported(aten.dropout.default, (None, 0.1, False))  # inference dropout is the identity


def test_fused_op_naming():
    region = Region(index=7, members=[])
    assert CompiledRegion(region, None, 1).name == "autofuse_7"
    many = CompiledRegion(region, None, 2)
    assert (many.type, many.name) == ("FusedAscBackend", "autofuse_fused_7")


class _Net(torch.nn.Module):
    """x -> a = relu(x) * 2 -> linear -> a + linear(a) (the add must not join a's region:
    the linear between them would make a cycle) -> softmax -> / sum."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        a = torch.relu(x) * 2
        s = (a + self.lin(a)).softmax(-1)
        return s / s.sum(-1, keepdim=True)


def test_partition_rules():
    x = torch.randn(4, 8)
    net = _Net().eval()
    graph = build_graph(export(net, (x,)), (x,))
    units = partition(graph)
    regions = [u for u in units if isinstance(u, Region)]
    members = [[op.type for op in r.members] for r in regions]
    assert members == [["Relu", "Muls"], ["Add", "SoftmaxV2", "ReduceSumD"], ["RealDiv"]]
    assert [r.index for r in regions] == [0, 1, 2]
    plain = [u.type for u in units if not isinstance(u, Region)]
    assert plain == ["MatMulV2"]
    # the softmax output is read by the division outside its region, so it is an output
    assert [ref.op for ref in regions[1].outputs] == ["softmax", "sum_1"]
    assert {ref.op for ref in regions[2].inputs} == {"softmax", "sum_1"}


def test_every_fusable_type_the_table_and_converters_emit_has_a_replay_semantic():
    from fpinspect.capture import geops, optable
    from fpinspect.replay.ops import OPS as REPLAYED

    fusable = {spec.type for spec in optable.OPS.values() if spec.kind in optable.FUSABLE}
    x = torch.randn(2, 3)
    refined = set()  # the types converters choose from a call's arguments (Muls, GeluV2, ...)
    for fn in (
        lambda t: t * 2.0,
        lambda t: t + 1.0,
        lambda t: 1 - t,
        lambda t: torch.nn.functional.gelu(t),
        lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
        lambda t: t.clamp(min=0.0),
        lambda t: t.clamp(max=0.0),
        lambda t: t.to(torch.float16),
        lambda t: t.clone(),
        lambda t: t + 2 * t.exp(),
        lambda t: t // 2.0,
    ):
        refined |= {op.type for op in build_graph(export(_Fn(fn), (x,)), (x,)).ops if not op.is_source}
    missing = sorted((fusable | refined) - set(REPLAYED) - {"Data", "Const"})
    assert not missing, f"capture emits {missing} into fusion regions, which the replay cannot evaluate"
    assert {"Muls", "Adds", "GeluV2", "Gelu", "Maximum", "Minimum", "Cast", "Identity"} <= refined
    assert geops.CONVERTERS.keys() <= optable.OPS.keys()  # every converted operator has its kind


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)
