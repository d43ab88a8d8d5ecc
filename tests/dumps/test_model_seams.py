"""The seams of the comparison model other front ends plug into: the planner without a
fusion-off side, the loaded sides of one op, the sweep's order, evidence that revises a role,
and extra summary entries."""

from __future__ import annotations

from queue import LifoQueue

import numpy as np
import pytest
from network import build_network, fused_name

from fpinspect.dumps import DumpComparison, DumpIndex, fused_ops, load_graph, plan_pairs
from fpinspect.dumps.engine.localise import OpFinding, OpRecords
from fpinspect.dumps.formats.npyio import load_npy


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return build_network(tmp_path_factory.mktemp("net"), inject="R2=scale")


def comparison(paths) -> DumpComparison:
    return DumpComparison(
        *(str(paths[k]) for k in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data"))
    )


def test_browsing_plans_name_the_fusion_on_dumps_and_no_status(paths):
    model = load_graph(paths["af_open_graph"])
    pairs = plan_pairs(fused_ops(model), DumpIndex.scan(str(paths["af_open_data"])))
    full = comparison(paths).pairs
    assert [p.key for p in pairs.all] == [p.key for p in full.all]
    for browse, compared in zip(pairs.all, full.all):
        assert browse.status == [] and browse.origin_file is None and browse.fused_file is not None
        if compared.fused_file is not None:
            assert browse.fused_file == compared.fused_file


def test_op_sides_are_the_tensors_compare_compares(paths):
    cmp = comparison(paths)
    name = fused_name("R2")
    loaded = cmp.op_sides(name)
    assert sorted(loaded.outputs) == [0] and sorted(loaded.inputs) == [0] and not loaded.problems
    out = loaded.outputs[0]
    plan = cmp.outputs[name][0]
    assert np.array_equal(np.asarray(load_npy(plan.fused_file.path)), _whole(out.fused))
    assert np.array_equal(np.asarray(load_npy(plan.origin_file.path)), _whole(out.original))
    rec = cmp.compute(plan)
    assert rec.conversion == out.conversion and rec.result.shape_a == tuple(out.fused.shape)


def _whole(x) -> np.ndarray:
    return x.read(0, x.size).reshape(x.shape) if hasattr(x, "read") else np.asarray(x)


def test_the_sweep_computes_demanded_pairs_first_and_each_once(paths):
    cmp = comparison(paths)
    plans = [p for p in cmp.plans if p.comparable]
    demand: LifoQueue = LifoQueue()
    late = plans[-1]
    demand.put(late)
    seen = [(rec.plan.key, demanded) for rec, demanded in cmp.sweep(plans, demand=demand)]
    assert seen[0] == (late.key, True)
    assert sorted(k for k, _ in seen) == sorted(p.key for p in plans)
    threaded = cmp.sweep(plans, jobs=3)
    assert sorted(rec.plan.key for rec, _ in threaded) == sorted(
        p.key for p in plans
    ) and threaded.done == len(plans)


class _Replayed:
    """Evidence that the fused op is the side closer to the truth."""

    def revise(self, finding: OpFinding, records: OpRecords) -> None:
        assert records.op.name == finding.name and records.outputs
        finding.role, finding.reason = "more_accurate", "closer to float64 than the fusion-off run"


def test_evidence_revises_a_role_and_the_summary_lists_it(paths):
    cmp = comparison(paths)
    name = fused_name("R2")
    plain = cmp.run()
    assert plain.summary().introduced == [name]
    report = cmp.run(evidence={name: _Replayed()})
    assert report.localisation.by_name[name].role == "more_accurate"
    assert report.summary().introduced == []
    assert report.to_json()["summary"]["more_accurate"] == [name]


def test_one_by_one_each_record_is_computed_as_the_one_before_is_taken(paths):
    """The inspector's sweep (no ``jobs``): nothing is computed ahead of the caller, so what it
    does between two records (answering a key, putting pairs on demand) comes first."""
    cmp = comparison(paths)
    plans = [p for p in cmp.plans if p.comparable]
    called = []

    def call(fn, plan):
        called.append(plan.key)
        return fn(plan)

    demand: LifoQueue = LifoQueue()
    sweep = iter(cmp.sweep(plans, demand=demand, call=call))
    first, demanded = next(sweep)
    assert (first.plan.key, demanded) == (plans[0].key, False) and called == [plans[0].key]
    demand.put(plans[-2])
    demand.put(plans[-1])  # the newest first
    assert [(r.plan.key, d) for r, d in (next(sweep), next(sweep))] == [
        (plans[-1].key, True),
        (plans[-2].key, True),
    ]
    assert called == [plans[0].key, plans[-1].key, plans[-2].key]
    rest = [r.plan.key for r, _ in sweep]
    assert sorted([*called[:3], *rest]) == sorted(called) == sorted(p.key for p in plans)


def test_threads_take_demanded_pairs_too_and_compute_each_once(paths):
    cmp = comparison(paths)
    plans = [p for p in cmp.plans if p.comparable]
    called = []
    demand: LifoQueue = LifoQueue()
    demand.put(plans[-1])
    sweep = cmp.sweep(plans, demand=demand, jobs=2, call=lambda fn, p: called.append(p.key) or fn(p))
    seen = [(rec.plan.key, demanded) for rec, demanded in sweep]
    assert called.index(plans[-1].key) < 2  # taken before any other plan (by one of the two threads)
    assert (plans[-1].key, True) in seen
    assert sorted(called) == sorted(k for k, _ in seen) == sorted(p.key for p in plans)
    assert sweep.done == sweep.total == len(plans)
