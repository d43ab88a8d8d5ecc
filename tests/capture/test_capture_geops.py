"""What each exported ATen call becomes in the GE graph: type, operand order and the
attributes the replay reads (``geops``). Nothing here compiles: torch.export only."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fpinspect.capture.demos import RotaryBlock
from fpinspect.capture.errors import CaptureError
from fpinspect.capture.gejson import GraphWriter, attr_value
from fpinspect.capture.geops import GE_DATATYPE
from fpinspect.capture.storage import describe
from fpinspect.capture.trace import build_graph, export
from fpinspect.dumps.formats.ge_decode import decode_attr_value
from fpinspect.dumps.formats.graph import load_graph


def _ops(module: nn.Module, *inputs: torch.Tensor) -> dict:
    """Kernel name -> op of the traced graph."""
    graph = build_graph(export(module.eval(), inputs), inputs)
    return {op.name: op for op in graph.ops if not op.is_source}, graph


class _Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _one(fn, *inputs: torch.Tensor):
    """The single kernel ``fn`` traces to (with the graph, for const operands)."""
    ops, graph = _ops(_Lambda(fn), *inputs)
    assert len(ops) == 1, list(ops)
    return next(iter(ops.values())), graph


X = torch.randn(2, 3, 4)


def test_the_two_halves_of_a_rotary_embedding_differ_by_their_slice_attributes():
    ops, _ = _ops(RotaryBlock(), torch.randn(2, 8, 32))
    slices = [op for op in ops.values() if op.type == "StridedSliceD"]
    halves = [op for op in slices if op.inputs[0].op.endswith("transpose")]
    assert len(halves) == 2
    first, second = sorted(halves, key=lambda op: op.attrs["begin"][-1])
    assert (first.attrs["begin"], first.attrs["end"]) == ([0, 0, 0, 0], [2, 2, 8, 8])
    assert (second.attrs["begin"], second.attrs["end"]) == ([0, 0, 0, 8], [2, 2, 8, 16])  # end was 2**63-1
    assert first.attrs["strides"] == [1, 1, 1, 1]
    assert all(first.attrs[m] == 0 for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask"))
    table = next(op for op in ops.values() if op.type == "StridedSliceD" and op.inputs[0].op == "cos")
    assert (table.attrs["begin"], table.attrs["end"]) == ([0, 0], [8, 16])  # cos[:s] of a 16-row table
    cat = next(op for op in ops.values() if op.type == "ConcatD")
    assert cat.attrs == {"concat_dim": 3, "N": 2}  # dim=-1 written non-negative


#: (one-kernel function of X, its GE type, its attributes)
CASES = [
    (lambda x: x.mean(-1, keepdim=True), "ReduceMeanD", {"axes": [2], "keep_dims": True}),
    (lambda x: x.sum((0, 2)), "ReduceSumD", {"axes": [0, 2], "keep_dims": False}),
    (lambda x: x.sum(), "ReduceSumD", {"axes": [0, 1, 2], "keep_dims": False}),
    (lambda x: x.amax(1), "ReduceMaxD", {"axes": [1], "keep_dims": False}),
    (lambda x: x.softmax(1), "SoftmaxV2", {"axes": [1], "half_to_float": False}),
    (lambda x: x.log_softmax(-1), "LogSoftmaxV2", {"axes": [2]}),
    (lambda x: F.gelu(x), "GeluV2", {"approximate": "none"}),
    (lambda x: F.gelu(x, approximate="tanh"), "Gelu", {}),
    (lambda x: F.leaky_relu(x), "LeakyRelu", {"negative_slope": 0.01}),  # GE's default is 0
    (lambda x: F.silu(x), "Swish", {"scale": 1.0}),
    (lambda x: x * 0.1, "Muls", {"value": 0.1}),
    (lambda x: x + 2, "Adds", {"value": 2.0}),
    (lambda x: x - 1, "Adds", {"value": -1.0}),
    (lambda x: x**3.0, "Pow", {"exponent": 3.0}),
    (lambda x: x.clamp(-0.5, 0.5), "ClipByValue", {"clip_value_min": -0.5, "clip_value_max": 0.5}),
    (lambda x: x.permute(2, 0, 1), "TransposeD", {"perm": [2, 0, 1]}),
    (lambda x: x.transpose(-1, 0), "TransposeD", {"perm": [2, 1, 0]}),
    (lambda x: x.unsqueeze(-1), "Unsqueeze", {"axes": [3]}),
    (lambda x: x.expand(5, 2, 3, 4), "BroadcastToD", {"shape": [5, 2, 3, 4]}),
    (lambda x: x.to(torch.float16), "Cast", {"dst_type": 1}),
]


@pytest.fixture(scope="module")
def case_ops():
    """The kernels of all CASES, traced as one model (one export is what costs time)."""
    ops, _ = _ops(_Lambda(lambda x: tuple(fn(x) for fn, _, _ in CASES)), X)
    return list(ops.values())


@pytest.mark.parametrize("case", range(len(CASES)))
def test_attributes_as_ge_names_them(case, case_ops):
    _, ge_type, attrs = CASES[case]
    op = case_ops[case]
    assert (op.type, op.attrs) == (ge_type, attrs)


def test_select_is_a_strided_slice_that_shrinks_its_axis():
    op, _ = _one(lambda x: x[:, -1], X)
    assert op.type == "StridedSliceD"
    assert (op.attrs["begin"], op.attrs["end"], op.attrs["shrink_axis_mask"]) == ([0, 2, 0], [2, 3, 4], 0b10)


def test_split_stack_and_squeeze():
    ops, _ = _ops(_Lambda(lambda x: x.split([1, 3], dim=-1)), torch.randn(2, 3, 4))
    split = next(op for op in ops.values() if op.type == "SplitVD")
    assert split.attrs == {"size_splits": [1, 3], "split_dim": 2, "num_split": 2}
    ops, _ = _ops(_Lambda(lambda x: torch.stack([x, x], 1).squeeze()), torch.randn(2, 1, 4))
    types = {op.type: op.attrs for op in ops.values()}
    assert types["Pack"] == {"axis": 1, "N": 2}
    assert types["Squeeze"] == {"axis": [2]}  # the size-1 dim of the (2, 2, 1, 4) stack


def test_a_number_without_an_attribute_form_is_a_float32_const_operand():
    op, graph = _one(lambda x: 1 - x, X.half())
    assert op.type == "Sub" and op.inputs[1].op == "xs_0"  # rsub: other - input, GE's operand order
    const = graph.sources[op.inputs[0].op]
    assert op.inputs[0].op == f"{op.name}/other" and const.dtype == torch.float32 and float(const) == 1.0
    op, graph = _one(lambda x: x / 3.0, X.half())
    assert op.type == "RealDiv" and float(graph.sources[op.inputs[1].op]) == 3.0  # not rounded to fp16


def test_norms_carry_their_axes_and_epsilon():
    norms = nn.Sequential(nn.LayerNorm(4, elementwise_affine=False), nn.RMSNorm([3, 4])).half()
    ops, graph = _ops(norms, X.half())
    ln = next(op for op in ops.values() if op.type == "LayerNorm")
    assert ln.attrs == {"begin_norm_axis": 2, "begin_params_axis": 2, "epsilon": 1e-5}
    gamma, beta = (graph.sources[ref.op] for ref in ln.inputs[1:])  # no weights: ones and zeros
    assert torch.equal(gamma, torch.ones(4)) and torch.equal(beta, torch.zeros(4))
    rms = next(op for op in ops.values() if op.type == "RmsNorm")
    # eps=None: ATen adds the epsilon of float32, the type it computes fp16 in
    assert rms.attrs == {"epsilon": torch.finfo(torch.float32).eps}
    conv_bn = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3, eps=1e-3))
    ops, _ = _ops(conv_bn, torch.randn(1, 2, 4, 4))
    bn = next(op for op in ops.values() if op.type == "BatchNorm")
    assert bn.attrs == {"epsilon": 1e-3, "data_format": "NCHW", "is_training": False}
    assert len(bn.inputs) == 5  # x, scale, offset, mean, variance


def test_float_attributes_are_written_as_float32_and_read_back():
    assert attr_value(0.1) == {"f": "0.1"}
    assert attr_value(1 / 128**0.5) == {"f": "0.088388346"}  # %g would write 0.0883883
    assert decode_attr_value(attr_value([0.5, 2])) == [0.5, 2.0]
    assert decode_attr_value(attr_value([0, -3])) == [0, -3]


def test_attributes_reach_the_graph_json(tmp_path):
    w = GraphWriter("Build")
    x = describe((2, 3), "float16")
    w.add("x", "Data", [], [], [x], {"index": 0})
    w.add("mul", "Muls", ["x:0"], [x], [x], {"value": 0.05})
    w.add("slice", "StridedSliceD", ["mul:0"], [x], [x], {"begin": [0, 1], "end": [2, 3], "strides": [1, 1]})
    model = load_graph(w.write(tmp_path / "Build.json", "m", {}))
    assert model.ops["mul"].attrs["value"] == 0.05
    assert model.ops["slice"].attrs["begin"] == [0, 1]


def test_cast_targets_follow_the_ge_datatype_enum():
    assert (GE_DATATYPE[torch.float32], GE_DATATYPE[torch.float16], GE_DATATYPE[torch.bfloat16]) == (0, 1, 27)
    assert GE_DATATYPE[torch.int64] == 9 and GE_DATATYPE[torch.bool] == 12


class _SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


def test_attention_without_dropout_is_accepted_and_with_dropout_refused():
    x = torch.randn(1, 4, 8)
    ops, _ = _ops(_SelfAttention(), x)  # eval: scaled_dot_product_attention gets dropout_p=0
    assert any(op.type == "FlashAttentionScore" for op in ops.values())
    encoder = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, batch_first=True)
    assert any(op.type == "LayerNorm" for op in _ops(encoder, x)[0].values())
    training = _SelfAttention().train()
    with pytest.raises(CaptureError, match="draws random numbers"):
        build_graph(export(training, (x,)), (x,))
