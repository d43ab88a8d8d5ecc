"""The types of a comparison's report, one declaration for a report made now and a report read
back from its ``--format json`` file (the JSON contract, docs/design.md).

:meth:`~fpinspect.dumps.engine.report.Report.summary` makes a :class:`Summary`, and
:func:`~fpinspect.dumps.runs.runtree.cross_run_summary` a :class:`RunSummary`; a saved report decodes
into :class:`SavedReport` or :class:`SavedRun` (:func:`saved_report`, :func:`saved_run`), so the
page, the exports and the inspector read the same fields by attribute, whichever way the report
came. Field order is the JSON's key order. A field a report made now always has is given a
default only so that a saved report lacking it reads it as absent (``None``, empty); a field only
some reports have (``confirm``) is :data:`msgspec.UNSET` until set, and then left out of the JSON.
Numbers are ``int | float``: a saved ``1`` stays the integer it was, as the page prints it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

Number = int | float


class _Frozen(msgspec.Struct, frozen=True):
    """A part of a report: read by attribute, never changed once made."""


# -- a record, as the page and the CSV read it --------------------------------------------------


class Figure(_Frozen):
    """One distance of a replay's three-way view."""

    red: Number | None = None
    max_ulp: Number | None = None
    verdict: str | None = None


class Standard(_Frozen):
    verdict: str | None = None
    op_class: str | None = None


class Replay(_Frozen):
    """A fused op's replay as an output record carries it (``replay``)."""

    status: str | None = None
    reason: str | None = None
    fidelity: Figure | None = None
    fused_vs_replay: Figure | None = None
    fused_vs_fp64: Figure | None = None
    eager_vs_fp64: Figure | None = None
    closer_to_truth: str | None = None
    standard: Standard | None = None


class Worst(_Frozen):
    """One of a record's worst elements."""

    index: list[int] | int | None = None
    a: Number | None = None
    b: Number | None = None
    abs: Number | None = None
    ulp: Number | None = None
    a_bits: str | None = None
    b_bits: str | None = None


class Ulp(_Frozen):
    share: dict[str, Number] | None = None
    max: Number | None = None
    p50: Number | None = None
    p99: Number | None = None


class Metrics(_Frozen):
    red_eps: Number | None = None
    rmse: Number | None = None
    finite: int | None = None
    nan_mismatch: int | None = None
    inf_mismatch: int | None = None
    ulp: Ulp | None = None
    worst: list[Worst] | None = None


class RecordFields(_Frozen):
    """One record of a report's ``records`` (:meth:`~fpinspect.dumps.engine.report.Report.record_fields`):
    the fields the page and the CSV read."""

    kind: Literal["output", "input"]
    fused_op: str
    fused_index: int
    fused_type: str | None = None
    origin_op: str | None = None
    origin_index: int | None = None
    status: list[str] = []
    cosine: Number | None = None
    max_abs: Number | None = None
    max_rel: Number | None = None
    metrics: Metrics | None = None
    verdict: Literal["pass", "warn", "fail"] | None = None
    reasons: list[str] = []
    message: str | None = None
    conversion: str | None = None
    fused_file: str | None = None
    origin_file: str | None = None
    replay: Replay | None = None


# -- one leaf's summary -------------------------------------------------------------------------


class FirstIntroduced(_Frozen):
    """The first op that introduces an error (:meth:`~fpinspect.dumps.engine.localise.Localisation.first`)."""

    op: str | None = None
    type: str | None = None
    reason: str | None = None
    originals: list[str] = []


class Iteration(_Frozen):
    """The iteration folder read on each side."""

    fusion_on: str | None = None
    fusion_off: str | None = None


class Sources(_Frozen):
    """What a comparison read: the iteration folder of each side, every warning about the inputs
    and the run, and which ops were compared (``fused_types``: the fusion-on graph's fused op types
    and how many of each; ``compared_types``: those compared, after ``--fused-types``;
    ``unfused_ops``: unfused namesakes compared). Its fields are the summary's, in this order."""

    iteration: Iteration
    warnings: list[str]
    fused_types: dict[str, int]
    compared_types: dict[str, int]
    unfused_ops: int


class ConfirmDisagreement(_Frozen):
    """Where the ablation and the localisation disagree on a region."""

    op: str
    report: str
    ablation: str


class ConfirmSummary(_Frozen):
    """The ablation of ``compare --confirm`` (:func:`~fpinspect.capture.confirm.annotate`): each
    region's verdict, where the ablation and the localisation disagree, and what the float64 run
    could not run in float64."""

    regions: dict[str, str]
    disagreements: list[ConfirmDisagreement]
    float64_run_narrower: dict[str, Any]


class Summary(_Frozen):
    """A report's ``summary``: counts of records by verdict and status, the localisation's lists
    of fused op names, the op to look at first, what was read (:class:`Sources`' fields), the
    thresholds applied, and the ablation's ``confirm`` where one ran."""

    fused_ops: int | None = None
    records: int | None = None
    verdicts: dict[str, int] = {}
    statuses: dict[str, int] = {}
    introduced: list[str] = []
    inherited: list[str] = []
    unverified: list[str] = []
    more_accurate: list[str] = []
    first_introduced: FirstIntroduced | None = None
    look_first: str | None = None
    compared: int | None = None
    iteration: Iteration | None = None
    warnings: list[str] = []
    fused_types: dict[str, int] = {}
    compared_types: dict[str, int] = {}
    unfused_ops: int | None = None
    thresholds: dict[str, Any] = {}
    confirm: ConfirmSummary | UnsetType = UNSET


class SavedReport(_Frozen):
    """One leaf's report: its ``records`` and ``summary``."""

    records: list[RecordFields]
    summary: Summary | None = None


# -- a whole run's summary ----------------------------------------------------------------------


class ComparedPair(_Frozen):
    """A leaf pair of a whole run compared: its labels and the two leaves' folders."""

    rank: str | None = None
    graph: str | None = None
    step: str | None = None
    fusion_on: str | None = None
    fusion_off: str | None = None


class Skipped(_Frozen):
    """What of a run was left out, and why."""

    what: str = ""
    why: str = ""


class RunScope(_Frozen):
    compared: list[ComparedPair] = []
    skipped: list[Skipped] = []


class Introduced(_Frozen):
    """A fused op introduced in some leaf of a run: its graph, the ranks it was introduced on,
    whether that is every rank compared (``everywhere``), and the earliest step."""

    op: str
    graph: str | None = None
    ranks: list[str] = []
    everywhere: bool = False
    first_step: str | None = None


class RunSummary(_Frozen):
    """A whole run's ``summary`` (:func:`~fpinspect.dumps.runs.runtree.cross_run_summary`)."""

    scope: RunScope | None = None
    runs: int | None = None
    unreadable: int | None = None
    verdicts: dict[str, int] = {}
    introduced: list[Introduced] = []
    warnings: list[str] = []


class LeafReport(_Frozen):
    """One leaf pair of a whole run's ``runs``: its labels and folders, then its records and
    summary, or the ``error`` saying why it was not compared."""

    rank: str | None = None
    graph: str | None = None
    step: str | None = None
    fusion_on: str | None = None
    fusion_off: str | None = None
    error: str | None = None
    records: list[RecordFields] = []
    summary: Summary | None = None


class SavedRun(_Frozen):
    """A whole run's report: each leaf pair's, then the run's summary."""

    runs: list[LeafReport] = []
    summary: RunSummary | None = None


def saved_report(report: dict) -> SavedReport:
    """``report`` (one leaf's JSON object) as its types; raises :class:`msgspec.ValidationError`
    naming the first field that is not as the contract says."""
    return msgspec.convert(report, SavedReport)


def saved_run(report: dict) -> SavedRun:
    """``report`` (a whole run's JSON object) as its types; raises :class:`msgspec.ValidationError`."""
    return msgspec.convert(report, SavedRun)
