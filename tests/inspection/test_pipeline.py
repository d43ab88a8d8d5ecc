"""One inspection pipeline: what ``fpinspect compare`` writes is what an :class:`Inspection`
reports, step by step, and every front end goes through it."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.inspection.pipeline import Inspection, Localised, RecordsComputed, Replayed, Reported
from fpinspect.inspection.runs import run_inputs
from fpinspect.inspection.settings import CompareSettings

SAMPLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "sample_dumps", "regression"))


def _inspection(settings: CompareSettings | None = None, **options) -> Inspection:
    inputs = run_inputs(SAMPLE)
    return Inspection.load(inputs.graphs, inputs.data, settings, **options)


def _compare(*args: str) -> dict:
    result = CliRunner().invoke(main, ["compare", SAMPLE, "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_compare_writes_what_the_inspection_reports():
    report = _inspection().report()
    assert json.loads(json.dumps(report.to_json())) == _compare()


def test_the_steps_come_in_order_and_the_last_is_the_report():
    events = list(_inspection().events())
    kinds = [type(e) for e in events]
    assert kinds[-2:] == [Localised, Reported]
    computed = [e for e in events if isinstance(e, RecordsComputed)]
    replayed = [e for e in events if isinstance(e, Replayed)]
    assert computed and kinds.index(Replayed) > max(i for i, k in enumerate(kinds) if k is RecordsComputed)
    assert computed[-1].done == computed[-1].total > 0
    # every pair's record comes in one of them, once
    inspection_plans = {r.plan.key for e in computed for r in e.records}
    assert len(inspection_plans) == sum(len(e.records) for e in computed) == computed[-1].total
    # the replays are those of the failing and warned ops, counted one by one
    summary = events[-1].report.summary()
    flagged = {r.plan.fused_op for r in events[-1].report.records if r.verdict in ("fail", "warn")}
    assert {e.name for e in replayed} == flagged
    assert [(e.done, e.total) for e in replayed] == [(i, len(replayed)) for i in range(1, len(replayed) + 1)]
    assert summary.introduced == [o.name for o in events[-2].localisation.introduced] != []


def test_the_settings_reach_every_step():
    """--replay none: no op is replayed, and the introduced op is named by the threshold rule
    alone (as compare says with the same option)."""
    settings = CompareSettings(replay="none")
    events = list(_inspection(settings).events())
    assert not [e for e in events if isinstance(e, Replayed)]
    assert json.loads(json.dumps(events[-1].report.to_json())) == _compare("--replay", "none")


def test_records_on_worker_processes_are_the_records_of_one():
    """--jobs 2: the records come from forked workers, in batches, and the report is the same."""
    one = _inspection().report()
    two = _inspection(jobs=2)
    events = list(two.events())
    assert sum(len(e.records) for e in events if isinstance(e, RecordsComputed)) == events[0].total
    assert json.dumps(events[-1].report.to_json()) == json.dumps(one.to_json())


def test_replays_done_already_are_kept_not_done_again():
    """The inspector hands over the replays it did: they are used as they are."""
    first = _inspection()
    done = {e.name: e.replay for e in first.events() if isinstance(e, Replayed)}
    assert done
    again = [e for e in _inspection().events(known=done) if isinstance(e, Replayed)]
    assert again == []
