"""Localisation by evidence: the op blamed is the one that differs from its own eager replay
and is not closer to float64 than eager; an op that is the closer side is more accurate."""

from __future__ import annotations

import time

import numpy as np
import pytest
from chains import F32, adds, build_chain, cancellation_chain, muls, square
from chains import compare_with_replay as _compare

from fpinspect.dumps import DumpComparison


@pytest.fixture(scope="module")
def amplification(tmp_path_factory):
    """R0 (+0.1, *0.9, +0.1, *0.9) passes at ~0.58 eps; R1 squares it (condition number 2) to
    ~1.14 eps, a fail it did not make; R2 (*1.3) is computed 0.3% too large: the regression."""
    ops = [
        adds("Adds_1", 0.1),
        muls("Muls_2", 0.9),
        adds("Adds_3", 0.1),
        muls("Muls_4", 0.9),
        square("Square_5"),
        muls("Muls_6", 1.3),
    ]
    regions = [
        ("autofuse_0_Adds_Muls", ["Adds_1", "Muls_2", "Adds_3", "Muls_4"]),
        ("autofuse_1_Square", ["Square_5"]),
        ("autofuse_2_Muls", ["Muls_6"]),
    ]
    return build_chain(
        tmp_path_factory.mktemp("amp"), ops, regions, inject={"autofuse_2_Muls": lambda v: v * F32(1.003)}
    )


def test_amplification_blames_only_the_planted_regression(amplification):
    report = _compare(amplification)
    loc = report.localisation.by_name
    assert loc["autofuse_0_Adds_Muls"].verdict == "pass"
    assert loc["autofuse_1_Square"].verdict == "fail"
    assert loc["autofuse_1_Square"].role == "inherited"
    assert "reproduces eager on its own inputs" in loc["autofuse_1_Square"].reason
    summary = report.summary()
    assert summary.introduced == ["autofuse_2_Muls"]
    assert summary.more_accurate == []
    assert summary.look_first.startswith("Look first at autofuse_2_Muls")
    square_rec = next(r for r in report.to_json()["records"] if r["fused_op"] == "autofuse_1_Square")
    rep = square_rec["replay"]
    assert rep["status"] == "ok" and rep["fidelity"]["max_ulp"] <= 1
    assert rep["fused_vs_replay"]["verdict"] == "pass" and rep["fused_vs_replay"]["max_ulp"] == 0


def test_without_replay_the_threshold_rule_blames_the_amplifier(amplification):
    report = _compare(amplification, replay="none")
    summary = report.summary()
    assert summary.introduced[0] == "autofuse_1_Square"  # the wrong op: what replay fixes
    assert "autofuse_2_Muls" not in summary.introduced
    assert (
        "threshold rule: no usable replay of output 0, not replayed"
        in report.localisation.by_name["autofuse_1_Square"].reason
    )


@pytest.fixture(scope="module")
def cancellation(tmp_path_factory):
    """:func:`~chains.cancellation_chain`, dumped with inputs and outputs."""
    return build_chain(tmp_path_factory.mktemp("cancel"), *cancellation_chain())


def test_cancellation_chain_is_more_accurate_not_introduced(cancellation):
    report = _compare(cancellation)
    summary = report.summary()
    assert summary.introduced == []
    assert summary.more_accurate == ["autofuse_0_Muls_Exp_Adds_Muls"]
    rec = report.to_json()["records"][0]
    assert rec["verdict"] == "fail"
    rep = rec["replay"]
    assert rep["closer_to_truth"] == "fused"
    assert (
        rep["fused_vs_fp64"]["red"] < 0.3 and rep["eager_vs_fp64"]["red"] > 10 * rep["fused_vs_fp64"]["red"]
    )
    assert rep["fused_vs_replay"]["verdict"] == "fail"
    assert "closer to fp64 than eager" in report.localisation.by_name["autofuse_0_Muls_Exp_Adds_Muls"].reason
    assert "more accurate" in summary.look_first


def test_an_unreplayable_op_keeps_the_threshold_rule_and_says_so(cancellation, tmp_path):
    import json

    graph = json.loads(cancellation["af_close_graph"].read_text())
    for op in graph["graph"][0]["op"]:
        if op["name"] == "Exp_2":
            op["type"] = "FancyExp"
    moved = dict(cancellation, af_close_graph=tmp_path / "Build.json")
    moved["af_close_graph"].write_text(json.dumps(graph))
    report = _compare(moved)
    finding = report.localisation.by_name["autofuse_0_Muls_Exp_Adds_Muls"]
    assert finding.role == "introduced"
    assert "threshold rule: no usable replay" in finding.reason and "FancyExp" in finding.reason
    rep = report.to_json()["records"][0]["replay"]
    assert rep["status"] == "unsupported" and rep["unsupported"] == ["FancyExp"]


def test_replay_none_leaves_replay_null(cancellation):
    rec = _compare(cancellation, replay="none").to_json()["records"][0]
    assert rec["replay"] is None
    assert np.isfinite(rec["cosine"])


def test_replays_on_threads_are_the_replays_of_one(amplification):
    """``--jobs N`` replays: each thread takes the next op; every op is replayed once, with the
    evidence one thread finds, and the progress counts each."""
    from fpinspect.inspection.pipeline import Inspection

    c = DumpComparison(
        *(str(amplification[k]) for k in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data"))
    )
    c.compute_all()
    names = [op.name for op in c.fused]
    one = {e.name: e.replay for e in Inspection(c).replays(names)}
    events = list(Inspection(c, jobs=3).replays(names))
    three = {e.name: e.replay for e in events}
    assert list(three) == names and [(e.done, e.total) for e in events] == [
        (i, len(names)) for i in range(1, len(names) + 1)
    ]

    def evidence(replays):
        return {n: {i: e.to_json() for i, e in r.outputs.items()} for n, r in replays.items()}

    assert evidence(three) == evidence(one) and any(e for e in evidence(one).values())


def test_replays_on_threads_come_in_the_order_of_the_ops(amplification, monkeypatch):
    """Threads take the ops in turn and each returns its own in the order it took them; the
    replays come back in the order of the ops asked for, however the threads interleaved (here:
    the second op is slow, so the first thread takes the third while the second replays it)."""
    from fpinspect.inspection.pipeline import Inspection
    from fpinspect.replay import evidence

    c = DumpComparison(
        *(str(amplification[k]) for k in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data"))
    )
    names = [op.name for op in c.fused]
    assert len(names) >= 3
    delays = {names[0]: 0.1, names[1]: 0.4}
    replay = evidence.replay_op

    def slow(comparison, name, *args):
        time.sleep(delays.get(name, 0))
        return replay(comparison, name, *args)

    monkeypatch.setattr(evidence, "replay_op", slow)
    assert [e.name for e in Inspection(c, jobs=2).replays(names)] == names
