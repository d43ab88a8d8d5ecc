"""Capture -> compare on both demos: mapping, clean verdicts, localisation, storage layouts."""

import json

import numpy as np
import pytest
import torch
from capturecases import INJECTED_REGION, compare

from fpinspect.dumps.formats.datadump import DumpIndex
from fpinspect.dumps.formats.fusion import fused_ops
from fpinspect.dumps.formats.graph import load_graph

pytestmark = pytest.mark.slow  # the session's captures compile with Inductor


def test_transformer_regions_follow_the_fusion_rules(transformer_capture):
    # pointwise chains with trailing reductions; matmuls and reshapes stay plain ops
    names = [r.name for r in transformer_capture.regions]
    assert names == [
        "autofuse_0_LayerNorm",
        "autofuse_1_Muls_SoftmaxV2",
        "autofuse_2_Add_LayerNorm",
        "autofuse_3_GeluV2",
        "autofuse_4_Add",
    ]
    plain = {op.type for op in transformer_capture.graph.ops} - {
        op.type for r in transformer_capture.regions for op in r.region.members
    }
    assert {"MatMulV2", "BatchMatMulV2", "Reshape", "TransposeD"} <= plain
    assert all(r.kernels >= 1 for r in transformer_capture.regions)


@pytest.mark.parametrize("case", ["transformer_clean", "conv_clean"])
def test_every_fused_output_maps_to_the_original_op_it_replaces(case, request):
    pair, _ = request.getfixturevalue(case)
    on, off = load_graph(pair.open_graph), load_graph(pair.close_graph)
    on_data, off_data = DumpIndex.scan(pair.open_data), DumpIndex.scan(pair.close_data)
    fused = fused_ops(on)
    assert fused
    for op in fused:
        assert set(op.original_op_names) <= set(off.ops)
        assert op.original_op_types == [off.ops[n].type for n in op.original_op_names]
        for out in op.outputs:
            assert out.origin_op in op.original_op_names
            origin_desc = off.ops[out.origin_op].output_desc[out.origin_index]
            assert (out.desc.dtype, out.desc.shape) == (origin_desc.dtype, origin_desc.shape)
            a = np.load(on_data.lookup(op.name, "output", out.index).path).astype(np.float64)
            b = np.load(off_data.lookup(out.origin_op, "output", out.origin_index).path).astype(np.float64)
            cosine = (a * b).sum() / np.sqrt((a * a).sum() * (b * b).sum())
            assert cosine > 0.9999, (op.name, out.origin_op)


@pytest.mark.parametrize("case", ["transformer_clean", "conv_clean"])
def test_without_injection_every_record_passes(case, request):
    _, report = request.getfixturevalue(case)
    compared = [r for r in report.records if r.verdict is not None]
    assert compared and all(r.verdict == "pass" for r in compared), [
        (r.plan.fused_op, r.plan.kind, r.plan.fused_index, r.reasons) for r in compared if r.verdict != "pass"
    ]
    skipped = [r for r in report.records if r.verdict is None]
    assert all(r.status == ["SKIPPED_CONST_DATA"] for r in skipped)  # model inputs and weights only
    summary = report.summary()
    assert summary.introduced == [] and summary.inherited == []


def test_injected_region_is_the_only_one_introduced(transformer_injected):
    _, report = transformer_injected
    summary = report.summary()
    assert summary.introduced == [INJECTED_REGION]
    failing = {o.name for o in report.localisation.ops if o.verdict == "fail"}
    assert set(summary.inherited) == failing - {INJECTED_REGION}
    assert summary.inherited == ["autofuse_3_GeluV2", "autofuse_4_Add"]
    names = [o.name for o in report.localisation.ops]
    upstream = report.localisation.ops[: names.index(INJECTED_REGION)]
    assert upstream and all(o.verdict == "pass" for o in upstream)


def test_graphs_record_nothing_about_the_injection(transformer_clean, transformer_injected):
    clean, injected = transformer_clean[0], transformer_injected[0]
    assert clean.open_graph.read_bytes() == injected.open_graph.read_bytes()
    assert clean.close_graph.read_bytes() == injected.close_graph.read_bytes()


def test_ascend_storage_layouts_compare_exactly_as_plain(transformer_injected, transformer_injected_ascend):
    (_, plain), (pair, ascend) = transformer_injected, transformer_injected_ascend
    layouts = {d.layout for op in load_graph(pair.open_graph).ops.values() for d in op.output_desc}
    assert {"NC1HWC0", "FRACTAL_NZ"} <= layouts
    assert any("FORMAT_CONVERTED" in r.status for r in ascend.records)
    assert len(plain.records) == len(ascend.records)
    for p, a in zip(plain.records, ascend.records):
        assert (
            p.plan.key,
            p.verdict,
            p.score,
            p.result and p.result.cosine,
            p.result and p.result.max_abs,
        ) == (a.plan.key, a.verdict, a.score, a.result and a.result.cosine, a.result and a.result.max_abs)
    assert plain.summary().introduced == ascend.summary().introduced
    assert plain.summary().inherited == ascend.summary().inherited


def test_dump_files_follow_the_msaccucmp_naming(transformer_clean):
    pair, _ = transformer_clean
    index = DumpIndex.scan(pair.close_data)
    assert not index.skipped
    assert all(f.candidates == 1 for f in index.files)
    graph = json.loads(pair.close_graph.read_text())
    ops = {op["name"]: op for op in graph["graph"][0]["op"]}
    assert ops["x"]["type"] == "Data" and ops["ln1.weight"]["type"] == "Const"
    assert index.lookup("ln2/layer_norm_1", "output", 0) is not None  # '/' normalised to '_'
    assert index.lookup("x", "output", 0) is None  # data and weights are fed, not dumped


@pytest.mark.gpu
@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is false)"
)
def test_capture_on_cuda_compares_clean(tmp_path):
    from fpinspect.capture import Capture, load_model

    module, inputs = load_model("transformer", seed=0)
    cap = Capture(module, inputs, dtype="float16", device="cuda", name="transformer")
    report = compare(cap.write(tmp_path))
    assert all(r.verdict in ("pass", None) for r in report.records)
    assert report.summary().introduced == []


class _Numbers(torch.nn.Module):
    """Numbers without an attribute form (``1 - x``, ``/ 3``): float32 Const inputs of a region."""

    def forward(self, x):
        return (1 - torch.relu(x)) / 3.0


def test_numbers_as_const_inputs_compile_dump_and_replay(tmp_path):
    from fpinspect.capture import Capture

    cap = Capture(_Numbers(), (torch.randn(4, 8),), dtype="float16", name="numbers")
    (region,) = cap.regions
    assert [op.type for op in region.region.members] == ["Relu", "Sub", "RealDiv"]
    pair = cap.write(tmp_path)
    (fused,) = fused_ops(load_graph(pair.open_graph))
    consts = [ref.op for ref in load_graph(pair.open_graph).ops[fused.name].inputs if ref.op != "x"]
    assert consts == ["rsub/other", "div/other"]
    on = DumpIndex.scan(pair.open_data)
    assert [float(np.load(on.lookup(fused.name, "input", k).path)) for k in (1, 2)] == [1.0, 3.0]
    report = compare(pair, replay="all").to_json()
    (out,) = [r for r in report["records"] if r["kind"] == "output"]
    assert out["verdict"] == "pass" and out["replay"]["status"] == "ok", out["replay"]
    assert out["replay"]["fidelity"]["max_ulp"] == 0
