"""Each task's quick profile on the CPU, checked for internal consistency (not for
particular numbers, which depend on the machine)."""

import re

import numpy as np
import pytest

from fpinspect.experiments.events import HistogramEvent, Progress
from fpinspect.experiments.registry import get_task
from fpinspect.experiments.tasks.summation import additions_per_term, chunked_sum_in_dtype, error_bound
from fpinspect.numerics import ulp_diff

pytestmark = [pytest.mark.slow, pytest.mark.needs("torch")]


def verdict(report, topic):
    return next(v for v in report.verdicts if v.topic == topic)


@pytest.mark.parametrize("task_id", ["A", "C1", "C2", "C3"])
def test_report_records_where_and_how_it_ran(quick_report, task_id):
    report = quick_report(task_id)
    settings = get_task(task_id).settings.profile("quick")
    d = report.to_dict()
    assert (d["task"], d["device"], d["profile"]) == (task_id, "cpu", "quick")
    assert d["settings"] == settings.to_dict()
    assert d["dtype"] == settings.dtype and d["seeds"] == {"inputs": settings.seed}
    assert d["torch_version"] == report.environment["torch"]
    assert report.environment["threads"] >= 1 and report.environment["inductor_isa"]
    assert report.verdicts and all(v.agrees in (True, False, None) for v in report.verdicts)
    assert report.histograms and report.tables


@pytest.mark.parametrize("task_id", ["A", "C1", "C2", "C3"])
def test_each_figure_the_task_declares_is_in_its_result(quick_report, task_id):
    assert get_task(task_id).figures.unmatched(quick_report(task_id).to_dict()) == []


def test_a_determinism(quick_report):
    report = quick_report("A")
    d = report.data
    runs = get_task("A").settings.profile("quick").runs
    first, cold = d["rounds"]
    assert d["runs"] == runs
    assert sum(first["output_hashes"].values()) == sum(cold["output_hashes"].values()) == runs
    assert d["unique_output_hashes"] == len(set(first["output_hashes"]) | set(cold["output_hashes"]))
    assert (d["kernel_hash"], d["cold_start_kernel_hash"]) == (first["kernel_hash"], cold["kernel_hash"])
    assert re.fullmatch(r"[0-9a-f]{64}", d["kernel_hash"])
    assert "generated kernel source" in d["kernel_hash_covers"] and isinstance(d["extern_kernels"], list)
    plan = next(t for t in report.tables if t.title.startswith("Plan table"))
    assert all(isinstance(c, int) or c is None for c in plan.rows[1][1:])
    if d["unique_output_hashes"] == 1:
        assert d["max_ulp"] == 0
    assert verdict(report, "one process").agrees == (len(first["output_hashes"]) == 1)
    assert verdict(report, "same kernel after a cold start").agrees == (
        d["kernel_hash"] == d["cold_start_kernel_hash"]
    )
    # the cold round's progress reached the parent through the nested child's stream
    stages = {e.stage for e in quick_report.events["A"] if isinstance(e, Progress)}
    assert stages == {first["label"], cold["label"]}


def test_a_cold_start_compiles_again_in_an_empty_cache(quick_report, inductor_cache):
    first, cold = quick_report("A").data["rounds"]
    assert first["cache_dir"] == str(inductor_cache)
    assert not cold["cache_dir"].startswith(str(inductor_cache))
    assert cold["cache_files_before"] == 0 and cold["cache_files_after"] > 0
    assert cold["compile_counters"]["fx_graph_cache_hits"] == 0
    assert cold["compile_counters"]["fx_graph_cache_misses"] >= 1
    assert verdict(quick_report("A"), "cold start is cold").agrees is True


def test_c1_scalar_paths(quick_report):
    report = quick_report("C1")
    d = report.data
    share = d["ulp_share"]
    assert set(share) == {"0", "1", ">=2"} and sum(share.values()) == pytest.approx(1.0)
    assert d["bit_equal"] == (share["0"] == 1.0)
    assert d["scalar_in_dtype"] != d["scalar"]  # 0.7 is not a float16 number
    for path in d["paths"].values():
        low = path["lowering"]
        assert low["fused_kernels"] and low["fused_kernel_lines"] and low["fused_kernel_inputs"] >= 1
        assert "aten::mul" in low["eager"]["ops"]
        for mode in ("eager", "fused"):
            e = path["vs_fp64"][mode]
            assert 0 <= e["mean_ulp"] <= e["max_ulp"] and sum(e["share"].values()) == pytest.approx(1.0)
    assert "aten::expand" in d["paths"]["B"]["lowering"]["eager"]["ops"]
    main = next(h for h in report.histograms if h.name == "c1_fused_a_vs_b")
    n = int(np.prod(report.settings["shape"]))
    assert sum(main.counts) == n and main.counts[0] / n == pytest.approx(share["0"])
    # the headline isolates the instruction: path B against path A's code with the value equalised
    assert d["value_control"]["vs_path_b"] == {k: d[k] for k in ("bit_equal", "max_ulp")} | {"share": share}
    first = verdict(report, "paths differ in the last bit")
    if d["bit_equal"]:
        assert first.agrees is None and "cannot show an instruction effect" in first.measured
        assert ("lowers both paths the same way" in first.measured) == d["lowered_the_same"]
    assert set(d["raw_ulp_share"]) == {"0", "1", ">=2"}


def test_c2_reduction_order(quick_report):
    report = quick_report("C2")
    d = report.data
    sizes = d["chunk_sizes"]
    labels = [str(c) for c in sizes]
    for name in ("ulp_matrix", "accumulator_ulp_matrix"):
        m = np.array(d[name])
        assert (
            m.shape == (len(sizes), len(sizes))
            and (m == m.T).all()
            and (np.diag(m) == 0).all()
            and (m >= 0).all()
        )
    assert set(d["self_deterministic"]) == set(d["vs_fp64"]) == {*labels, "sum"}
    assert set(d["framework_vs_chunks"]) == set(labels)
    for v in d["vs_fp64"].values():
        assert v["within_bound"] == (v["accumulator_abs_error"] <= v["accumulator_bound"])
        assert v["ulp_error"] >= 0 and v["accumulator_ulp_error"] >= 0
    off = [d["ulp_matrix"][i][j] for i in range(len(sizes)) for j in range(len(sizes)) if i != j]
    assert verdict(report, "chunk sizes differ in the last bit").agrees == (min(off) >= 1)
    assert verdict(report, "each version is self-consistent").agrees == all(d["self_deterministic"].values())
    charts = [e.histogram for e in quick_report.events["C2"] if isinstance(e, HistogramEvent)]
    partial = [h for h in charts if h.name == "c2_error_vs_fp64"]
    assert [len(h.bins) for h in partial] == list(range(1, len(sizes) + 2))
    assert [h.name for h in report.histograms] == ["c2_error_vs_fp64", "c2_storage_accumulation_error"]
    # every version really ran through a generated (fused) kernel
    assert set(d["kernels"]) == {*labels, "sum"} and all(n >= 1 for n in d["kernels"].values())
    assert "own code" in d["chunked_orders_are"]


def test_c2_framework_order_fallback(quick_report):
    report = quick_report("C2")
    order = report.data["framework_order"]
    settings = get_task("C2").settings.profile("quick")
    assert [r["label"] for r in order["shape"]][:2] == [f"shape [1, {settings.n}]", f"shape [{settings.n}]"]
    assert len(order["compiler"]) == (4 if report.environment["threads"] > 1 else 2)
    for rows in order.values():
        assert rows[0]["accumulator_ulp_vs_first"] == 0 and all(r["kernels"] >= 1 for r in rows)
        for r in rows:
            assert (r["accumulator_ulp_vs_first"] == 0) == (r["accumulator"] == rows[0]["accumulator"])
    changed = any(len({r["accumulator"] for r in rows}) > 1 for rows in order.values())
    assert verdict(report, "the framework's own order changes").agrees == (True if changed else None)


def _square(m):
    m = np.array(m)
    return m.shape[0] == m.shape[1] and (m == m.T).all() and (np.diag(m) == 0).all() and (m >= 0).all()


def test_c2_storage_dtype_accumulation(quick_report):
    report = quick_report("C2")
    d = report.data
    settings = get_task("C2").settings.profile("quick")
    f = d["storage_dtype_accumulation"]
    sizes = d["chunk_sizes"]
    labels = [str(c) for c in sizes]
    dtype = np.dtype(settings.dtype)
    u = 2.0 ** -(np.finfo(dtype).nmant + 1)
    assert f["accumulation_dtype"] == settings.dtype
    m = f["ulp_matrix"]
    assert len(m) == len(sizes) and _square(m)
    assert list(f["self_deterministic"]) == list(f["vs_fp64"]) == labels
    values = {k: np.array([v["value"]], dtype) for k, v in f["vs_fp64"].items()}
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            # the matrix is the ULP distance between the sums reported against float64
            assert m[i][j] == int(ulp_diff(values[a], values[b]).max())
            assert (m[i][j] == 0) == (values[a] == values[b]).all()
    for c, v in zip(sizes, f["vs_fp64"].values()):
        assert v["abs_error"] == pytest.approx(abs(v["value"] - d["reference"]))
        assert v["normwise_error_u"] == pytest.approx(v["abs_error"] / d["abs_sum"] / u)
        assert v["bound_factor"] == additions_per_term(settings.n, c)
        assert v["bound"] == pytest.approx(error_bound(settings.n, c, d["abs_sum"], u))
        assert v["within_bound"] == (v["abs_error"] <= v["bound"])
        assert v["ulp_error"] >= 0
    tr = f["trials"]
    assert tr["inputs"] == settings.trials and tr["seeds"] == [
        settings.seed,
        settings.seed + settings.trials - 1,
    ]
    share = tr["differ_share"]
    assert _square(share) and all(0 <= x <= 1 for row in share for x in row)
    for i in range(len(sizes)):
        for j in range(len(sizes)):
            # the task's own input is the first of the trials
            assert share[i][j] >= (m[i][j] > 0) / tr["inputs"]
    mean, worst = tr["mean_normwise_error_u"], tr["max_normwise_error_u"]
    for k in labels:
        assert 0 <= mean[k] <= worst[k] and f["vs_fp64"][k]["normwise_error_u"] <= worst[k] * (1 + 1e-12)
    ordered = sorted(sizes)
    assert [(t["from"], t["to"]) for t in tr["trend"]] == list(zip(ordered, ordered[1:]))
    for t in tr["trend"]:
        assert t["measured_ratio"] == pytest.approx(mean[str(t["to"])] / mean[str(t["from"])])
        assert t["typical_ratio"] == pytest.approx(t["bound_ratio"] ** 0.5)
    follows = all((t["measured_ratio"] > 1) == (t["bound_ratio"] > 1) for t in tr["trend"])
    assert (
        verdict(report, "float16 accumulation: error against chunk size follows the bound").agrees == follows
    )
    off = [m[i][j] for i in range(len(sizes)) for j in range(len(sizes)) if i != j]
    assert verdict(report, "float16 accumulation: chunk sizes differ in the last bit").agrees == (
        min(off) >= 1 and all(f["self_deterministic"].values())
    )
    chart = next(h for h in report.histograms if h.name == "c2_storage_accumulation_error")
    assert chart.bins == tuple(str(c) for c in ordered)
    assert chart.counts == pytest.approx([mean[str(c)] for c in ordered])
    assert any(
        t.title.startswith("ULP matrix of the float16 sums with float16 accumulation") for t in report.tables
    )


def _documented_order_in_numpy(x: np.ndarray, chunk: int) -> np.ndarray:
    """The order of the module docstring, one float16 addition at a time."""
    chunk_sums = []
    for start in range(0, x.size, chunk):
        level = list(x[start : start + chunk])
        while len(level) > 1:
            half = len(level) // 2
            level = [np.add(level[i], level[i + half], dtype=x.dtype) for i in range(half)]
        chunk_sums.append(level[0])
    acc = chunk_sums[0]
    for s in chunk_sums[1:]:
        acc = np.add(acc, s, dtype=x.dtype)
    return np.array([acc], x.dtype)


@pytest.mark.parametrize("chunk", [1, 4, 64, 256])
def test_chunked_sum_in_dtype_rounds_every_addition_in_the_documented_order(chunk):
    import torch

    from fpinspect.experiments.tensors import from_numpy, to_numpy

    x = np.random.default_rng(chunk).uniform(0, 1, 256).astype(np.float16)
    got = to_numpy(chunked_sum_in_dtype(from_numpy(x).reshape(1, -1), chunk))
    assert (
        got.dtype == np.float16
        and (got.view(np.uint16) == _documented_order_in_numpy(x, chunk).view(np.uint16)).all()
    )
    assert chunked_sum_in_dtype(torch.ones(1, 4096, dtype=torch.float16), 4096).item() == 4096
    # one element per chunk is recursive summation: float16 stalls at 2048 (2048 + 1 rounds to 2048)
    assert chunked_sum_in_dtype(torch.ones(1, 4096, dtype=torch.float16), 1).item() == 2048


def test_c3_rsqrt_iterations(quick_report):
    report = quick_report("C3")
    d = report.data
    settings = get_task("C3").settings.profile("quick")
    rows = d["by_iterations"]
    assert [r["iterations"] for r in rows] == list(settings.iterations)
    for r in rows:
        assert set(r) == {"iterations", "max_ulp", "mean_ulp", "p99_ulp"}
        assert 0 <= r["mean_ulp"] <= r["max_ulp"] and 0 <= r["p99_ulp"] <= r["max_ulp"]
    means, maxes = [r["mean_ulp"] for r in rows], [r["max_ulp"] for r in rows]
    monotone = all(a >= b for a, b in zip(means, means[1:])) and all(a >= b for a, b in zip(maxes, maxes[1:]))
    assert verdict(report, "more iterations, smaller error").agrees == (monotone and means[-1] < means[0])
    differs = d["newton"]["share_differing_from_framework"]
    assert verdict(report, "iteration variants differ from the framework").agrees == all(
        v > 0 for v in differs.values()
    )
    # every variant really ran through a generated (fused) kernel
    assert all(n >= 1 for n in d["kernels"].values())
    fb = d["fallback"]
    assert 0 <= fb["numpy_float32"]["share_differing_from_framework"] <= 1
    assert list(fb["compiler_variants"]) == [f"scalar code on {report.environment['threads']} threads"]
    assert "own code" in verdict(report, "iteration variants differ from the framework").expectation
    n = int(np.prod(settings.shape))
    assert all(sum(h.counts) == n for h in report.histograms)
