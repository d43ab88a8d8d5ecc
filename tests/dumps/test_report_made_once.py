"""A comparison's report is not changed once made: warnings, annotations of its records and the
ablation's verdicts found after it make a new report, and the one a caller holds says what it
said."""

from __future__ import annotations

import dataclasses

import pytest

from fpinspect.dumps import DumpComparison
from fpinspect.dumps.engine.report_types import ConfirmSummary
from fpinspect.dumps.runs.sources import resolve


@pytest.fixture(scope="module")
def report():
    s = resolve()  # the bundled sample run
    return DumpComparison(s.open_graph, s.close_graph, s.open_data, s.close_data).run()


def test_a_warning_found_later_makes_a_new_report(report):
    before = report.to_json()
    later = report.with_warnings(["the graph of rank 1 was missing"])
    assert later.summary().warnings == [*report.summary().warnings, "the graph of rank 1 was missing"]
    assert report.to_json() == before


def test_an_annotation_and_the_ablation_make_a_new_report(report):
    output = next(r for r in report.records if r.plan.kind == "output")
    later = report.with_annotation("confirm", {output.plan.key: {"verdict": "confirmed"}}).with_confirm(
        ConfirmSummary(regions={output.plan.fused_op: "confirmed"}, disagreements=[], float64_run_narrower={})
    )
    assert later.record_fields(output)["confirm"] == {"verdict": "confirmed"}
    assert later.to_json()["summary"]["confirm"]["regions"] == {output.plan.fused_op: "confirmed"}
    assert "confirm" not in report.record_fields(output) and "confirm" not in report.to_json()["summary"]


def test_a_report_and_its_summary_cannot_be_changed_in_place(report):
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.sources = None
    with pytest.raises(AttributeError):
        report.summary().look_first = "elsewhere"
    with pytest.raises(AttributeError):
        report.sources.warnings = []
