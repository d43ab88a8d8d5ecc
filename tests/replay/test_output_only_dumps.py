"""Replay where the dumps hold only outputs (GE's default ``dump_mode=output``).

A graph input (``Data``) is the same tensor in both runs, so whichever run dumped it serves
both; a fused op's input comes from its producer's output dump; without the fusion-off inputs
the fidelity of a replay cannot be checked, and it is ``unverified``, not evidence."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from chains import build_chain, cancellation_chain, muls
from chains import compare_with_replay as _compare


def _drop(folder: Path, *patterns: str) -> None:
    for pattern in patterns:
        for f in folder.glob(pattern):
            f.unlink()


def _without(paths: dict[str, Path], side: str, pattern: str, dest: Path) -> dict[str, Path]:
    """``paths`` with the data folder ``side`` copied to ``dest`` less the files ``pattern`` matches."""
    shutil.copytree(paths[side], dest)
    _drop(dest, pattern)
    return dict(paths, **{side: dest})


@pytest.fixture(scope="module")
def issue_case(tmp_path_factory):
    """The cancellation chain fused whole; the fusion-off run dumped outputs only and no
    ``Data`` output; the fusion-on run dumped the fused op's input and output only."""
    paths = build_chain(tmp_path_factory.mktemp("outputs_only"), *cancellation_chain())
    _drop(paths["af_close_data"], "*.input.*", "Data.*")
    _drop(paths["af_open_data"], "Data.*")
    return paths


def test_fused_input_fed_by_data_serves_both_runs(issue_case):
    report = _compare(issue_case)
    summary = report.summary()
    assert summary.more_accurate == ["autofuse_0_Muls_Exp_Adds_Muls"]
    assert summary.introduced == []
    rep = report.to_json()["records"][0]["replay"]
    assert rep["status"] == "ok"
    assert rep["fidelity"]["max_ulp"] <= 1  # checked: the fusion-off output against the eager replay
    assert rep["closer_to_truth"] == "fused"
    assert rep["reason"] == "Data x:0 is the same tensor in both runs: the fusion-on dump serves both"


def test_a_graph_input_dumped_by_neither_run_names_what_was_looked_for(issue_case, tmp_path):
    paths = _without(issue_case, "af_open_data", "*.input.*", tmp_path / "open")
    report = _compare(paths)
    rep = report.to_json()["records"][0]["replay"]
    assert rep["status"] == "missing_inputs"
    assert rep["reason"] == (
        "no dump of Data x:0 (input 0 of Muls_1) in either run: looked for "
        f"autofuse_0_Muls_Exp_Adds_Muls input 0, x output 0 in {paths['af_open_data']}; "
        f"Muls_1 input 0, x output 0 in {issue_case['af_close_data']}"
    )
    finding = report.localisation.by_name["autofuse_0_Muls_Exp_Adds_Muls"]
    assert "threshold rule: no usable replay" in finding.reason


@pytest.fixture(scope="module")
def two_regions(tmp_path_factory):
    """The cancellation region, then a second one fed by it; both runs dumped outputs only."""
    ops, regions = cancellation_chain()
    ops = [*ops, muls("Muls_5", 0.5)]
    regions = [*regions, ("autofuse_1_Muls", ["Muls_5"])]
    paths = build_chain(tmp_path_factory.mktemp("two"), ops, regions)
    _drop(paths["af_close_data"], "*.input.*")
    _drop(paths["af_open_data"], "*.input.*")
    return paths


def test_an_input_from_a_fused_op_is_that_ops_output_dump(two_regions):
    records = _compare(two_regions, replay="all").to_json()["records"]
    second = next(r for r in records if r["fused_op"] == "autofuse_1_Muls")
    assert second["replay"]["status"] == "ok"
    assert second["replay"]["fused_vs_replay"]["max_ulp"] == 0


def test_without_the_fusion_off_input_the_replay_is_unverified(two_regions, tmp_path):
    # the fusion-off run lost Muls_4's output: Muls_5's input cannot be had on that side
    paths = _without(two_regions, "af_close_data", "*.Muls_4.*", tmp_path / "close")
    close = paths["af_close_data"]
    report = _compare(paths, replay="all")
    rec = next(r for r in report.to_json()["records"] if r["fused_op"] == "autofuse_1_Muls")
    rep = rec["replay"]
    assert rep["status"] == "unverified"
    assert rep["reason"] == (
        "fidelity cannot be checked: no fusion-off dump of Muls_4:0 (input 0 of Muls_5): "
        f"looked for Muls_5 input 0, Muls_4 output 0 in {close}"
    )
    assert rep["fidelity"] is None and rep["fused_vs_replay"]["max_ulp"] == 0
    assert rep["standard"] is None and rep["closer_to_truth"] is None
