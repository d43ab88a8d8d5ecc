"""Reductions, normalisations and data movement against float64 oracles, and the shape
inference that stands in for the constants a structure-only graph does not hold."""

from __future__ import annotations

import numpy as np
import pytest
from opcase import make_op, values

from fpinspect.numerics import ulp_diff
from fpinspect.replay.evaluate import EAGER, FP64, run_op
from fpinspect.replay.ops import Unsupported, reduced_axes

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3, 4, 5)).astype(np.float16)
X64 = X.astype(np.float64)
M = RNG.standard_normal((6, 8)).astype(np.float16)
M64 = M.astype(np.float64)


def check(op, inputs, truths):
    got = run_op(op, values(inputs), FP64)
    for g, t in zip(got, truths):
        np.testing.assert_allclose(g, t, rtol=1e-6, atol=1e-6)
    eager = run_op(op, values(inputs), EAGER)
    for g, t in zip(eager, truths):
        if g.dtype == np.float16:
            assert int(ulp_diff(g, np.asarray(t).astype(np.float16)).max(initial=0)) <= 1


@pytest.mark.parametrize(
    "typ,fn",
    [
        ("ReduceSum", np.sum),
        ("ReduceMean", np.mean),
        ("ReduceMax", np.max),
        ("ReduceMin", np.min),
        ("ReduceSumD", np.sum),
        ("ReduceMeanD", np.mean),
    ],
)
def test_reductions_with_axes_attribute(typ, fn):
    op = make_op(typ, [X], [(2, 1, 4, 1)], attrs={"axes": [1, -1], "keep_dims": True})
    check(op, [X], [fn(X64, axis=(1, 3), keepdims=True)])


def test_reduction_axes_from_an_input_value():
    op = make_op("ReduceSum", [X, np.array([0, 2], np.int64)], [(3, 5)])
    check(op, [X, np.array([0, 2], np.int64)], [X64.sum(axis=(0, 2))])


def test_reduction_axes_inferred_from_shapes():
    check(make_op("ReduceSum", [M], [(6, 1)]), [M], [M64.sum(axis=1, keepdims=True)])
    check(make_op("ReduceMean", [X], [(2, 3)]), [X], [X64.mean(axis=(2, 3))])


@pytest.mark.parametrize(
    "shape_in,shape_out,axes,kept",
    [
        ((6, 8), (6, 1), (1,), True),
        ((6, 8), (8,), (0,), False),
        ((2, 3, 4, 5), (2, 3), (2, 3), False),
        ((2, 1, 4), (2,), (2,), False),  # dropping the size-1 dim too changes nothing
        ((2, 3, 4), (2, 3, 4), (), True),
    ],
)
def test_reduced_axes(shape_in, shape_out, axes, kept):
    assert reduced_axes(shape_in, shape_out, "t") == (axes, kept)


@pytest.mark.parametrize(
    "shape_in,shape_out,message",
    [
        ((4, 4), (4,), "could reduce any of"),
        ((4, 3), (5,), "is not a reduction"),
        ((4, 3), (4, 2), "is not a reduction"),
    ],
)
def test_reduced_axes_says_when_it_cannot_tell(shape_in, shape_out, message):
    with pytest.raises(Unsupported, match=message):
        reduced_axes(shape_in, shape_out, "ReduceSum r")


def test_softmax_and_log_softmax():
    e = np.exp(M64 - M64.max(axis=-1, keepdims=True))
    soft = e / e.sum(axis=-1, keepdims=True)
    check(make_op("SoftmaxV2", [M], [M.shape]), [M], [soft])
    check(
        make_op("SoftmaxV2", [M], [M.shape], attrs={"axes": [0]}),
        [M],
        [np.exp(M64) / np.exp(M64).sum(axis=0, keepdims=True)],
    )
    check(make_op("LogSoftmaxV2", [M], [M.shape]), [M], [np.log(soft)])


def _layer_norm_oracle(x, g, b, eps, axes):
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b, mu, var


def test_layer_norm_attrs_and_inference_from_gamma():
    g, b = RNG.standard_normal(5).astype(np.float16), RNG.standard_normal(5).astype(np.float16)
    eps = float(np.float32(1e-5))
    y, mu, var = _layer_norm_oracle(X64, g.astype(np.float64), b.astype(np.float64), eps, (3,))
    with_attrs = make_op(
        "LayerNorm",
        [X, g, b],
        [X.shape, (2, 3, 4, 1), (2, 3, 4, 1)],
        attrs={"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-5},
    )
    check(with_attrs, [X, g, b], [y, mu, var])
    # no begin_norm_axis: the mean output's size-1 dims say it, or gamma's rank
    check(make_op("LayerNorm", [X, g, b], [X.shape], attrs={"epsilon": 1e-5}), [X, g, b], [y])
    y3, mu3, var3 = _layer_norm_oracle(X64, 1.0, 0.0, float(np.float32(1e-5)), (2, 3))
    v3 = make_op(
        "LayerNormV3",
        [X, (4, 5), (4, 5)],
        [X.shape, (2, 3, 1, 1), (2, 3, 1, 1)],
        attrs={"begin_norm_axis": 2},
    )
    check(v3, [X, (4, 5), (4, 5)], [y3, mu3, 1 / np.sqrt(var3 + float(np.float32(1e-5)))])


def test_layer_norm_epsilon_default_is_ge_s():
    g, b = np.ones(5, np.float16), np.zeros(5, np.float16)
    flat = np.zeros((1, 5), np.float16)  # variance 0: y = 0 whatever epsilon, rstd = 1/sqrt(eps)
    op = make_op(
        "LayerNormV3", [flat, g, b], [(1, 5), (1, 1), (1, 1)], out_dtypes=[np.float16, np.float32, np.float32]
    )
    rstd = run_op(op, [flat, g, b], FP64)[2]
    assert rstd[0, 0] == pytest.approx(1 / np.sqrt(float(np.float32(1e-5))))


def test_rms_norm():
    g = RNG.standard_normal(5).astype(np.float16)
    eps = float(np.float32(1e-6))
    rstd = 1 / np.sqrt((X64**2).mean(axis=-1, keepdims=True) + eps)
    op = make_op("RmsNorm", [X, g], [X.shape, (2, 3, 4, 1)], out_dtypes=[np.float16, np.float32])
    check(op, [X, g], [X64 * rstd * g.astype(np.float64), rstd])


@pytest.mark.parametrize(
    "typ,attrs,layout",
    [
        ("BatchNorm", {"epsilon": 1e-5, "data_format": "NCHW"}, "ND"),
        ("BatchNorm", {"epsilon": 1e-5}, "NCHW"),
        ("BNInfer", {"epsilon": 1e-5}, "NCHW"),
    ],
)
def test_batch_norm_inference(typ, attrs, layout):
    c = X.shape[1]
    scale, offset, mean = (RNG.standard_normal(c).astype(np.float16) for _ in range(3))
    var = (RNG.random(c) + 0.5).astype(np.float16)
    ins = [X, scale, offset, mean, var]

    def r(v):
        return v.astype(np.float64).reshape(1, c, 1, 1)

    y = r(scale) * (X64 - r(mean)) / np.sqrt(r(var) + float(np.float32(1e-5))) + r(offset)
    check(make_op(typ, ins, [X.shape], attrs=attrs, layouts={0: layout}), ins, [y])


def test_batch_norm_in_training_mode_is_unsupported():
    ins = [X] + [np.ones(3, np.float16)] * 4
    with pytest.raises(Unsupported, match="is_training=true"):
        run_op(make_op("BatchNorm", ins, [X.shape], attrs={"is_training": True}), ins, EAGER)


def test_movement():
    check(make_op("Reshape", [X], [(6, 20)]), [X], [X64.reshape(6, 20)])
    check(make_op("Transpose", [X], [(5, 2, 3, 4)]), [X], [X64.transpose(3, 0, 1, 2)])  # perm inferred
    check(make_op("TransposeD", [M], [(8, 6)], attrs={"perm": [1, 0]}), [M], [M64.T])
    check(make_op("BroadcastTo", [M[:1]], [(6, 8)]), [M[:1]], [np.broadcast_to(M64[:1], (6, 8))])
    check(make_op("ConcatD", [M, M[:2]], [(8, 8)]), [M, M[:2]], [np.concatenate([M64, M64[:2]])])
    check(
        make_op("ConcatV2", [M, M, np.array(1)], [(6, 16)], attrs={"N": 2}),
        [M, M, np.array(1)],
        [np.concatenate([M64, M64], axis=1)],
    )
    parts = np.split(M64, [2, 5], axis=0)
    check(make_op("SplitV", [M], [(2, 8), (3, 8), (1, 8)]), [M], parts)
    check(
        make_op("StridedSliceD", [M], [(3, 4)], attrs={"begin": [1, 4], "end": [6, 8], "strides": [2, 1]}),
        [M],
        [M64[1:6:2, 4:8]],
    )
    begin, end = np.array([0, 4]), np.array([6, 8])
    check(
        make_op("StridedSlice", [M, begin, end, np.array([1, 1])], [(6, 4)]),
        [M, begin, end, np.array([1, 1])],
        [M64[:, 4:]],
    )
    check(
        make_op(
            "StridedSliceD",
            [M],
            [(8,)],
            attrs={"begin": [2, 0], "end": [3, 8], "strides": [1, 1], "shrink_axis_mask": 1},
        ),
        [M],
        [M64[2]],
    )
    check(make_op("SliceD", [M], [(2, 3)], attrs={"offsets": [1, 2], "size": [2, 3]}), [M], [M64[1:3, 2:5]])
    idx = np.array([[0, 2], [5, 1]], np.int32)
    check(make_op("GatherV2", [M, idx], [(2, 2, 8)]), [M, idx], [np.take(M64, idx, axis=0)])
    check(make_op("Pack", [M, M], [(6, 2, 8)], attrs={"axis": 1}), [M, M], [np.stack([M64, M64], axis=1)])
    check(make_op("Squeeze", [M[:, None]], [(6, 8)]), [M[:, None]], [M64])


@pytest.mark.parametrize(
    "typ,inputs,outs,message",
    [
        ("Transpose", [M[:4, :4]], [(4, 4)], "allows 2 perms"),
        ("StridedSlice", [M], [(3, 8)], "begin / end are not in the graph"),  # which half of a rotary split?
        ("ConcatD", [M, M], [(6, 16)], None),
        ("ConcatD", [M[:, :6], M[:, :6]], [(12, 6)], None),
        ("ConcatD", [M[:6, :6], M[:6, :6]], [(6, 6)], "do not fit"),
        ("GatherV2", [M[:, :6], np.array([1, 2])], [(2, 6)], None),
        ("GatherV2", [M[:6, :6], np.array([1, 2, 3, 4, 5, 0])], [(6, 6)], "fit several axes"),
    ],
)
def test_inference_says_when_it_cannot_tell(typ, inputs, outs, message):
    op = make_op(typ, inputs, outs)
    if message is None:
        run_op(op, values(inputs), EAGER)
    else:
        with pytest.raises(Unsupported, match=message):
            run_op(op, values(inputs), EAGER)
