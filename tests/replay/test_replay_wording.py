"""What a replay says in words never claims a difference the comparison did not find."""

from __future__ import annotations

import os

from fpinspect.dumps import DumpComparison
from fpinspect.replay.evidence import replay_op

SAMPLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "sample_dumps", "regression"))


def test_a_passing_op_fed_by_data_and_constants_is_not_said_to_inherit_a_difference():
    c = DumpComparison(
        f"{SAMPLE}/dumpgraph_af_open/Build.json",
        f"{SAMPLE}/dumpgraph_af_close/Build.json",
        f"{SAMPLE}/datadump_af_open",
        f"{SAMPLE}/datadump_af_close",
    )
    report = c.run(compare_input=True)
    layer_norm = report.localisation.by_name["autofuse_0_LayerNorm"]
    assert layer_norm.verdict == "pass"
    inputs = [r for r in report.records if r.plan.fused_op == layer_norm.name and r.plan.kind == "input"]
    assert inputs and all("SKIPPED_CONST_DATA" in r.status for r in inputs)
    evidence = replay_op(c, layer_norm.name).outputs[0]
    assert evidence.usable
    words = evidence.conclusion()
    assert "reproduces eager" in words and "difference" not in words and "inputs" not in words.split(")")[-1]
