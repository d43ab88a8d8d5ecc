"""Mode 1: mapping, statuses, layouts, verdicts and localisation on real-format dump pairs."""

import json
import shutil

import numpy as np
import pytest
from gefixtures import GraphBuilder, tensor, write_dump
from network import REGIONS, build_network, fused_name
from refscript import reference_trio

from fpinspect.dumps.engine.compare import DumpComparison
from fpinspect.dumps.engine.verdict import ThresholdTable, load_table
from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.layouts import pack_layout


def compare(paths, **kw):
    return DumpComparison(
        str(paths["af_open_graph"]),
        str(paths["af_close_graph"]),
        str(paths["af_open_data"]),
        str(paths["af_close_data"]),
        **kw,
    )


def by_key(report):
    return {(r.plan.fused_op, r.plan.kind, r.plan.fused_index): r for r in report.records}


def test_ordinary_fusion_noise_passes_everywhere(tmp_path):
    report = compare(build_network(tmp_path)).run(compare_input=True)
    s = report.summary()
    assert s.verdicts["fail"] == 0 and s.verdicts["warn"] == 0
    assert s.introduced == [] and s.first_introduced is None
    assert "within thresholds" in s.look_first
    # the fused outputs really differ from eager: this is noise, not identity
    assert all(r.result.metrics.errors.ulp.share.zero < 1 for r in report.records if r.plan.kind == "output")


@pytest.mark.parametrize("kind", ["scale", "bf16", "nan"])
def test_planted_regression_is_the_only_introduced_op(tmp_path, kind):
    where = "R3" if kind == "nan" else "R2"
    report = compare(build_network(tmp_path, inject=f"{where}={kind}")).run()
    s = report.summary()
    assert s.introduced == [fused_name(where)]
    assert s.first_introduced.op == fused_name(where)
    assert s.look_first.startswith(f"Look first at {fused_name(where)}")
    loc = report.localisation.by_name
    later = [r for r in REGIONS if r > where]
    for region in later:
        finding = loc[fused_name(region)]
        assert finding.role in ("inherited", None), (region, finding)
        if finding.verdict == "fail":
            assert finding.role == "inherited"
    assert loc[fused_name("R1")].verdict == "pass"


def test_cosine_alone_would_miss_the_scale_error(tmp_path):
    report = compare(build_network(tmp_path, inject="R2=scale")).run()
    rec = by_key(report)[(fused_name("R2"), "output", 0)]
    assert rec.result.cosine > 0.9999 and rec.verdict == "fail"
    assert any("relative L2 error" in r for r in rec.reasons)


def test_records_follow_topological_order_outputs_before_inputs(tmp_path):
    report = compare(build_network(tmp_path)).run(compare_input=True)
    ops = [r.plan.fused_op for r in report.records]
    assert list(dict.fromkeys(ops)) == [fused_name(r) for r in REGIONS]
    for op in dict.fromkeys(ops):
        kinds = [r.plan.kind for r in report.records if r.plan.fused_op == op]
        assert kinds == sorted(kinds, key=lambda k: k != "output")
    # without --compare-input only outputs are listed (inputs are still used to localise)
    assert {r.plan.kind for r in compare(build_network(tmp_path / "b")).run().records} == {"output"}


def test_numbers_match_the_reference_formulas(tmp_path):
    paths = build_network(tmp_path, inject="R2=scale")
    report = compare(paths).run(compare_input=True)
    for rec in report.records:
        if rec.result is None:
            continue
        a = np.load(rec.plan.fused_file.path)
        b = np.load(rec.plan.origin_file.path)
        cos, mabs, mrel = reference_trio(a, b)
        assert rec.result.cosine == pytest.approx(cos, rel=1e-12)
        assert rec.result.max_abs == mabs and rec.result.max_rel == pytest.approx(mrel, rel=1e-15)


def test_input_records_compare_against_the_original_producer(tmp_path):
    report = compare(build_network(tmp_path)).run(compare_input=True)
    rec = by_key(report)[(fused_name("R4"), "input", 1)]  # R4 reads R1's output: original Add_2
    assert rec.plan.origin_op == "Add_2" and rec.plan.src_op == fused_name("R1")
    assert "Add_2" in rec.plan.origin_file.path
    skipped = by_key(report)[(fused_name("R1"), "input", 0)]
    assert skipped.status == ["SKIPPED_CONST_DATA"] and skipped.verdict is None


# -- statuses ------------------------------------------------------------------------------


def small_pair(tmp_path, on_outputs, off_outputs, on_arrays, off_arrays, on_type="AscBackend"):
    """One fused op ``F`` (inputs from Data ``x``) against original ops listed in off_outputs."""
    on = GraphBuilder().op("x", "Data", outputs=[tensor([4])])
    on.fused(
        "F", inputs=["x:0"], outputs=on_outputs, original=[(n, "Mul") for n in off_outputs], type=on_type
    )
    off = GraphBuilder().op("x", "Data", outputs=[tensor([4])])
    for name, desc in off_outputs.items():
        off.op(name, "Mul", inputs=["x:0"], outputs=[desc])
    paths = {
        "af_open_graph": on.write(tmp_path / "on.json"),
        "af_close_graph": off.write(tmp_path / "off.json"),
        "af_open_data": tmp_path / "open",
        "af_close_data": tmp_path / "close",
    }
    (tmp_path / "open").mkdir(exist_ok=True)
    (tmp_path / "close").mkdir(exist_ok=True)
    for i, arr in enumerate(on_arrays):
        if arr is not None:
            write_dump(paths["af_open_data"], on_type, "F", "output", i, arr)
    for name, arr in off_arrays.items():
        write_dump(paths["af_close_data"], "Mul", name, "output", 0, arr)
    return paths


def statuses(paths, **kw):
    report = compare(paths, **kw).run()
    return [r.status for r in report.records], report


def test_status_codes_for_each_kind_of_bad_pair(tmp_path):
    h = np.arange(4, dtype=np.float16)
    outs = [
        tensor([4]),  # 0: no mapping
        tensor([4], origin_name="A", origin_index=0),  # 1: file missing on the fused side
        tensor([4], origin_name="GONE", origin_index=0),  # 2: origin not in the fusion-off graph
        tensor([4], origin_name="B", origin_index=0),  # 3: dtype differs
        tensor([4], origin_name="C", origin_index=0),  # 4: same count, other shape
        tensor([4], origin_name="D", origin_index=0),  # 5: other count
        tensor([4], origin_name="E", origin_index=0),  # 6: corrupt file
        tensor([4], origin_name="G", origin_index=0),  # 7: non-numeric data
    ]
    off = {n: tensor([4]) for n in "ABCDEG"}
    off["B"] = tensor([4], dtype="DT_FLOAT")  # the graphs disagree on the dtype, too
    on_arrays = [h, None, h, h, h, h, h, np.array(["a", "b"])]
    off_arrays = {
        "A": h,
        "B": h.astype(np.float32),
        "C": h.reshape(2, 2),
        "D": np.arange(5, dtype=np.float16),
        "E": h,
        "G": np.array(["a", "b"]),
    }
    paths = small_pair(tmp_path, outs, off, on_arrays, off_arrays)
    bad = next((tmp_path / "close").glob("Mul.E.*"))
    bad.write_bytes(bad.read_bytes()[:-3])  # a truncated download
    got, report = statuses(paths)
    assert got[0] == ["NO_MAPPING"]
    assert got[1] == ["FILE_NOT_FOUND"]
    assert got[2] == ["ORIGIN_NOT_FOUND"]
    assert got[3] == ["DTYPE_CAST"]
    assert got[4] == ["SHAPE_FLATTENED"]
    assert got[5] == ["SHAPE_MISMATCH"]
    assert got[6] == ["NPY_LOAD_ERROR"] and "truncated" in report.records[6].to_json()["message"]
    assert got[7] == ["COMPUTE_ERROR"]
    # one bad pair never stops the others: the clean ones were still compared
    assert report.records[3].verdict == "pass"


def test_duplicate_dumps_use_the_latest_and_say_so(tmp_path):
    h = np.arange(4, dtype=np.float16)
    paths = small_pair(
        tmp_path, [tensor([4], origin_name="A", origin_index=0)], {"A": tensor([4])}, [h], {"A": h}
    )
    write_dump(paths["af_close_data"], "Mul", "A", "output", 0, h + 1, timestamp=1783906987170000)  # older
    got, report = statuses(paths)
    assert got[0] == ["MULTIPLE_DUMPS"] and report.records[0].result.max_abs == 0


def test_storage_layouts_are_converted_and_padding_ignored(tmp_path):
    rng = np.random.default_rng(0)
    nchw = rng.standard_normal((2, 20, 3, 5)).astype(np.float16)  # C=20: padded to 32 in NC1HWC0
    fused = pack_layout(nchw, "NCHW", "NC1HWC0")
    fused[:, 1, :, :, 4:] = np.float16(7)  # garbage in the padding must not matter
    outs = [
        tensor(
            fused.shape,
            layout="NC1HWC0",
            origin_format="NCHW",
            origin_shape=nchw.shape,
            origin_name="A",
            origin_index=0,
        )
    ]
    paths = small_pair(tmp_path, outs, {"A": tensor(nchw.shape, layout="NCHW")}, [fused], {"A": nchw})
    got, report = statuses(paths)
    rec = report.records[0]
    assert got[0] == ["FORMAT_CONVERTED"] and rec.result.max_abs == 0 and rec.verdict == "pass"
    assert "NC1HWC0->NCHW" in rec.conversion


def test_both_sides_padded_are_both_restored(tmp_path):
    rng = np.random.default_rng(1)
    nd = rng.standard_normal((5, 17, 33)).astype(np.float16)
    a = pack_layout(nd, "ND", "FRACTAL_NZ")
    b = pack_layout(nd, "ND", "FRACTAL_NZ")
    # NZ is (batch, column blocks, row blocks, 16, C0): m=17 pads rows 17..31, n=33 pads columns 33..47
    b[:, :, 1, 1:, :] = np.float16(-3)
    b[:, 2, :, :, 1:] = np.float16(-3)
    desc = dict(layout="FRACTAL_NZ", origin_format="ND", origin_shape=nd.shape)
    outs = [tensor(a.shape, origin_name="A", origin_index=0, **desc)]
    paths = small_pair(tmp_path, outs, {"A": tensor(b.shape, **desc)}, [a], {"A": b})
    got, report = statuses(paths)
    assert got[0] == ["FORMAT_CONVERTED"] and report.records[0].result.max_abs == 0
    assert report.records[0].result.shape_a == nd.shape


def test_unknown_and_impossible_layouts(tmp_path):
    h = np.arange(32, dtype=np.float16).reshape(2, 16)
    outs = [
        tensor([2, 16], layout="FRACTAL_ZN_LSTM", origin_name="A", origin_index=0),
        tensor(
            [2, 16],
            layout="NC1HWC0",
            origin_format="NCHW",
            origin_shape=[1, 4, 2, 2],
            origin_name="B",
            origin_index=0,
        ),
    ]
    off = {"A": tensor([2, 16], layout="NCHW"), "B": tensor([1, 4, 2, 2], layout="NCHW")}
    paths = small_pair(tmp_path, outs, off, [h, h], {"A": h, "B": np.zeros((1, 4, 2, 2), np.float16)})
    got, _ = statuses(paths)
    assert got == [["FORMAT_UNSUPPORTED"], ["FORMAT_CONVERSION_ERROR"]]


def test_fused_ops_in_subgraphs_are_compared(tmp_path):
    h = np.arange(4, dtype=np.float16)
    on = GraphBuilder().op("x", "Data", outputs=[tensor([4])]).op("call", "PartitionedCall", inputs=["x:0"])
    on.subgraph("body").op("arg", "Data", outputs=[tensor([4])])
    on.fused(
        "F_sub",
        inputs=["arg:0"],
        outputs=[tensor([4], origin_name="A", origin_index=0)],
        original=[("A", "Mul")],
    )
    off = (
        GraphBuilder()
        .op("x", "Data", outputs=[tensor([4])])
        .op("A", "Mul", inputs=["x:0"], outputs=[tensor([4])])
    )
    write_dump(tmp_path / "open", "AscBackend", "F_sub", "output", 0, h)
    write_dump(tmp_path / "close", "Mul", "A", "output", 0, h)
    paths = {
        "af_open_graph": on.write(tmp_path / "on.json"),
        "af_close_graph": off.write(tmp_path / "off.json"),
        "af_open_data": tmp_path / "open",
        "af_close_data": tmp_path / "close",
    }
    report = compare(paths).run()
    assert [r.plan.fused_op for r in report.records] == ["F_sub"] and report.records[0].verdict == "pass"


def test_whole_input_problems_raise_one_sentence(tmp_path):
    paths = build_network(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InputError, match="broken.json"):
        compare({**paths, "af_open_graph": broken})
    with pytest.raises(InputError, match="does not exist"):
        compare({**paths, "af_close_data": tmp_path / "nowhere"})


def test_thresholds_can_be_overridden(tmp_path):
    paths = build_network(tmp_path, inject="R2=bf16")
    strict = compare(paths).run()
    assert strict.summary().introduced == [fused_name("R2")]
    loose = compare(
        paths,
        thresholds=load_table(None, ("red_fail=5", "red_warn=4", "ulp2_share_fail=1", "ulp2_share_warn=1")),
    ).run()
    assert loose.summary().verdicts["fail"] == 0
    cfg = tmp_path / "t.json"
    cfg.write_text(json.dumps({"float16": {"red_fail": 5, "ulp2_share_fail": 1}}))
    table = load_table(str(cfg))
    assert table.for_format("float16").red_fail == 5 and table.for_format("float32").red_fail == 256
    with pytest.raises(ValueError):
        ThresholdTable().apply("nonsense=1")


def test_missing_input_dumps_fall_back_to_the_producer_output(tmp_path):
    paths = build_network(tmp_path, inject="R2=scale")
    for f in paths["af_open_data"].glob("*.input.*"):
        f.unlink()
    report = compare(paths).run(compare_input=True)
    assert report.summary().introduced == [fused_name("R2")]


def test_unverifiable_ops_are_not_blamed(tmp_path):
    paths = build_network(tmp_path, inject="R3=scale")
    for f in list(paths["af_open_data"].glob("*autofuse_3*input*")) + list(
        paths["af_open_data"].glob("*autofuse_2*output*")
    ):
        f.unlink()
    shutil.rmtree(tmp_path / "unused", ignore_errors=True)
    report = compare(paths).run()
    loc = report.localisation.by_name
    assert loc[fused_name("R3")].role == "unverified"
    assert report.summary().introduced == []
    assert "No fused op is confirmed" in report.summary().look_first


def test_grouped_weights_are_refused_not_misread(tmp_path):
    w = np.zeros((4, 16, 16, 16), np.float16)  # FRACTAL_Z storage of a grouped conv weight
    outs = [
        tensor(
            w.shape,
            layout="FRACTAL_Z:2",
            origin_format="NCHW",
            origin_shape=[16, 8, 2, 2],
            origin_name="A",
            origin_index=0,
        )
    ]
    paths = small_pair(
        tmp_path,
        outs,
        {"A": tensor([16, 8, 2, 2], layout="NCHW")},
        [w],
        {"A": np.zeros((16, 8, 2, 2), np.float16)},
    )
    got, _ = statuses(paths)
    assert got == [["FORMAT_UNSUPPORTED"]]


def test_bfloat16_stored_as_float32_is_judged_as_bfloat16(tmp_path):
    # msaccucmp convert saves bfloat16 tensors as float32; the graphs still say DT_BF16
    import ml_dtypes

    rng = np.random.default_rng(2)
    ref = rng.standard_normal(4096).astype(ml_dtypes.bfloat16)
    noisy = (ref.astype(np.float32) * (1 + rng.uniform(-4e-3, 4e-3, 4096))).astype(ml_dtypes.bfloat16)
    outs = [tensor([4096], dtype="DT_BF16", origin_name="A", origin_index=0)]
    paths = small_pair(
        tmp_path,
        outs,
        {"A": tensor([4096], dtype="DT_BF16")},
        [noisy.astype(np.float32)],
        {"A": ref.astype(np.float32)},
    )
    got, report = statuses(paths)
    rec = report.records[0]
    assert got[0] == ["OK"] and rec.result.metrics.errors.ulp.dtype == "bfloat16"
    assert rec.verdict == "pass" and rec.score < 1  # in float32 eps this would be ~ 10^4
    assert "compared as declared bfloat16" in rec.conversion


def test_kl_left_out_changes_nothing_else(tmp_path):
    """``kl=False`` (compare's table and CSV, the drop-in) drops the second pass and only that."""
    paths = build_network(tmp_path, inject="R2=scale")
    with_kl, without = (compare(paths, kl=kl).run(compare_input=True) for kl in (True, False))
    a, b = with_kl.to_json(), without.to_json()
    assert all(r["metrics"]["kl"] is not None for r in a["records"] if r["verdict"] is not None)
    for r in a["records"]:
        r["metrics"].pop("kl", None)
    assert a == b


def _not_plain(value, where="record") -> list[str]:
    """Where ``value`` holds something other than JSON's own types (dicts with string keys, lists,
    tuples, strings, Python ints, floats and bools, ``None``), by exact type."""
    kind = type(value)
    if kind is dict:
        return [f"{where} key {k!r}" for k in value if type(k) is not str] + [
            p for k, v in value.items() for p in _not_plain(v, f"{where}.{k}")
        ]
    if kind in (list, tuple):
        return [p for i, v in enumerate(value) for p in _not_plain(v, f"{where}[{i}]")]
    return [] if kind in (str, int, float, bool, type(None)) else [f"{where}: {kind.__name__}"]


def test_report_records_are_plain_for_the_writer(tmp_path):
    """The report writer encodes records as they are (``indented_json(plain=True)``): every record
    field, replay evidence included, holds JSON's own types only, whatever was compared — special
    values, worst elements, a cast, a flattening, integers, a 2-D shape, pairs that failed — and
    is written as ``json.dumps`` writes it cleaned."""
    from fpinspect.cli.output import indented_json
    from fpinspect.dumps.engine.pair import json_clean
    from fpinspect.inspection.pipeline import Inspection
    from fpinspect.inspection.settings import CompareSettings

    h = np.array([0.0, 1.0, np.nan, np.inf], dtype=np.float16)
    outs = [
        tensor([4]),  # no mapping
        tensor([4], origin_name="A", origin_index=0),  # NaN on one side, inf against a number
        tensor([4], dtype="DT_INT32", origin_name="B", origin_index=0),  # integers
        tensor([4], origin_name="C", origin_index=0),  # flattened against a 2-D shape
        tensor([4], origin_name="D", origin_index=0),  # other count
        tensor([2, 2], origin_name="E", origin_index=0),  # 2-D, cast against float32
    ]
    off = {n: tensor([4]) for n in "ABCD"}
    off["B"] = tensor([4], dtype="DT_INT32")
    off["E"] = tensor([2, 2], dtype="DT_FLOAT")
    on_arrays = [h, h, np.array([1, 2, 3, 4], dtype=np.int32), h, h, h.reshape(2, 2)]
    off_arrays = {
        "A": np.array([0.0, 1.5, 1.0, 2.0], dtype=np.float16),
        "B": np.array([1, 2, 5, 4], dtype=np.int32),
        "C": np.array([[0.0, 0.0], [np.nan, np.inf]], dtype=np.float16),
        "D": np.arange(5, dtype=np.float16),
        "E": np.array([[0.0, 1.0], [2.0, np.inf]], dtype=np.float32),
    }
    small = compare(small_pair(tmp_path / "small", outs, off, on_arrays, off_arrays)).run(compare_input=True)
    net = Inspection(
        compare(build_network(tmp_path / "net", inject="R3=nan")), CompareSettings(replay="all")
    ).report(compare_input=True)
    records = [rec for report in (small, net) for rec in report.json_fields()[0][1]]
    assert any((r.get("replay") or {}).get("status") == "ok" for r in records)
    assert any(r["metrics"].get("worst") for r in records) and any(r["verdict"] is None for r in records)
    for rec in records:
        assert _not_plain(rec) == []
        assert indented_json(rec, plain=True) == json.dumps(json_clean(rec), indent=2)
