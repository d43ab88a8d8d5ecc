"""Each task's quick profile on the CPU, checked for internal consistency (not for
particular numbers, which depend on the machine)."""

import re

import numpy as np
import pytest

from fpinspect.experiments.events import HistogramEvent, Progress
from fpinspect.experiments.registry import get_task

pytestmark = pytest.mark.slow


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
    cause = verdict(report, "the cause is instruction choice")
    if d["value_control"]["vs_path_b"]["bit_equal"]:
        assert cause.agrees is None and "cannot show" in cause.measured


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
    partial = [e.histogram for e in quick_report.events["C2"] if isinstance(e, HistogramEvent)]
    assert [len(h.bins) for h in partial] == list(range(1, len(sizes) + 2))


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
    assert verdict(report, "iteration variants differ from the framework").agrees == any(
        v > 0 for v in differs.values()
    )
    n = int(np.prod(settings.shape))
    assert all(sum(h.counts) == n for h in report.histograms)
