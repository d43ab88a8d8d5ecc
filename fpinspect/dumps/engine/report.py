"""The report of one comparison: the records shown, the localisation, and the summary of the
``--format json`` contract (docs/design.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

import msgspec

from .localise import Localisation
from .pair import json_clean
from .records import Record
from .report_types import UNSET, ConfirmSummary, FirstIntroduced, Sources, Summary, UnsetType
from .verdict import VERDICTS, ThresholdTable


@dataclass(frozen=True)
class Report:
    """What ``fpinspect compare`` prints and the inspector exports.

    ``records`` are those shown (outputs only, or inputs too), in record order; the
    localisation always saw the inputs. A report is not changed once made: evidence found after
    it (warnings, annotations of records, the ablation's ``confirm``) makes a new one
    (:meth:`with_warnings`, :meth:`with_annotation`, :meth:`with_confirm`).
    """

    records: list[Record]
    localisation: Localisation
    fused_ops: int  #: fused ops in the fusion-on graph
    thresholds: ThresholdTable
    #: what was read, and which ops were compared
    sources: Sources
    #: more fields of records from evidence beyond the dumps: ``{field: {record key: value}}``;
    #: every output record carries each field (``None`` where it has no value), and ``replay``
    #: always (the records contract)
    annotations: Mapping[str, Mapping] = field(default_factory=dict)
    #: the ablation of ``compare --confirm``, where one ran
    confirm: ConfirmSummary | UnsetType = UNSET

    @property
    def compared(self) -> int:
        """Records with a verdict: 0 means nothing could be compared, which is never "clean"."""
        return sum(1 for r in self.records if r.verdict is not None)

    def with_warnings(self, warnings: Iterable[str]) -> Report:
        """This report with ``warnings`` after its own (the summary's ``warnings``)."""
        warnings = list(warnings)
        if not warnings:
            return self
        sources = msgspec.structs.replace(self.sources, warnings=[*self.sources.warnings, *warnings])
        return replace(self, sources=sources)

    def with_annotation(self, name: str, values: Mapping[tuple, object]) -> Report:
        """This report with field ``name`` added to its output records, ``values`` by record key
        (``plan.key``)."""
        return replace(self, annotations={**self.annotations, name: dict(values)})

    def with_confirm(self, confirm: ConfirmSummary) -> Report:
        """This report with the ablation's ``confirm`` in its summary."""
        return replace(self, confirm=confirm)

    def summary(self) -> Summary:
        """Counts of records by verdict and status, the localisation's lists of fused op
        names (topological order), the op to look at first, what was read, and the thresholds
        applied."""
        recs = self.records
        verdicts = {v: sum(1 for r in recs if r.verdict == v) for v in VERDICTS}
        verdicts["none"] = sum(1 for r in recs if r.verdict is None)
        statuses: dict[str, int] = {}
        for r in recs:
            for s in r.status:
                statuses[s] = statuses.get(s, 0) + 1
        loc = self.localisation
        first = loc.first()
        src = self.sources
        return Summary(
            fused_ops=self.fused_ops,
            records=len(recs),
            verdicts=verdicts,
            statuses=dict(sorted(statuses.items())),
            introduced=[o.name for o in loc.introduced],
            inherited=[o.name for o in loc.inherited],
            unverified=[o.name for o in loc.unverified],
            more_accurate=[o.name for o in loc.more_accurate],
            first_introduced=None if first is None else FirstIntroduced(**first),
            look_first=self._look_first(),
            compared=self.compared,
            iteration=src.iteration,
            warnings=list(src.warnings),
            fused_types=src.fused_types,
            compared_types=src.compared_types,
            unfused_ops=src.unfused_ops,
            thresholds=self.thresholds.to_json(),
            confirm=self.confirm,
        )

    def _look_first(self) -> str:
        """The localisation's advice; when ``--fused-types`` left no op to compare in a graph that
        has fused ops, that is what it says, with the types there are."""
        available = self.sources.fused_types
        if self.localisation.ops or not available or self.sources.compared_types:
            return self.localisation.advice()
        listed = ", ".join(f"{n} {t}" for t, n in available.items())
        return (
            f"Nothing was compared: --fused-types matched none of the fusion-on graph's fused ops ({listed})."
        )

    def to_json(self) -> dict:
        """The ``--format json`` object: ``{"records": [...], "summary": {...}}``."""
        return {"records": [self.record_json(r) for r in self.records], "summary": json_clean(self.summary())}

    def json_fields(self) -> list[tuple[str, object]]:
        """The fields of :meth:`to_json` in order, ``records`` as an iterator: a writer can then
        encode one record at a time instead of holding every record's dict and text at once.
        The records' numbers are as they are (:meth:`record_fields`, NaN and infinities
        included: the writer makes them ``null``), and every value is plain (dicts with string
        keys, lists, strings, Python numbers, ``None``): the writer encodes them without
        cleaning them first (:func:`~fpinspect.cli.output.indented_json`'s ``plain``)."""
        return [("records", (self.record_fields(r) for r in self.records)), ("summary", self.summary())]

    def record_json(self, record: Record) -> dict:
        """One record of :meth:`to_json`: :meth:`record_fields`, JSON-safe."""
        return json_clean(self.record_fields(record))

    def record_fields(self, record: Record) -> dict:
        """A record's own fields (:meth:`~.records.Record.fields`) with the annotations of output
        records."""
        out = record.fields()
        if record.plan.kind == "output":
            for name in dict.fromkeys(("replay", *self.annotations)):
                out[name] = self.annotations.get(name, {}).get(record.plan.key)
        return out
