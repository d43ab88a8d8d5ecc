"""One :class:`Record` per planned pair: the ``records`` contract of docs/design.md (many of
them are computed by :mod:`.executing`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .pair import PairResult, finish_status, json_clean
from .plan import PairPlan


@dataclass(slots=True)
class Record:
    """One row of the comparison (the ``records`` contract of docs/design.md): the plan, the
    comparison of its two sides (``None`` when the plan had nothing to compare), and the
    judgement of :func:`~.verdict.judge`."""

    plan: PairPlan
    result: PairResult | None
    verdict: str | None = None  #: "pass" / "warn" / "fail"; None when nothing was compared
    reasons: tuple[str, ...] = ()  #: why the verdict is not "pass"
    score: float | None = None  #: severity: ``red`` in eps of the measured format, or of ``budget``
    conversion: str | None = None  #: the conversions made before comparing, e.g. "fused NC1HWC0->NCHW"
    #: the narrower format the output was judged in (:func:`~.plan.budget_format`), where one applied
    budget: str | None = None

    @property
    def status(self) -> list[str]:
        """The planning codes, then the comparison's, each once; ``["OK"]`` when there are none."""
        codes = list(self.plan.status) + (self.result.status if self.result else [])
        return finish_status(list(dict.fromkeys(codes)))

    def fields(self) -> dict:
        """The record's fields of the ``records`` contract, its numbers as they are (NaN and
        infinities included), every value plain (Python numbers, strings, lists, dicts with string
        keys, ``None``): :meth:`to_json` makes them JSON's, and the report writer
        (:func:`~fpinspect.cli.output.indented_json`) encodes them as they are."""
        p, r = self.plan, self.result
        return {
            "kind": p.kind,
            "fused_op": p.fused_op,
            "fused_type": p.fused_type,
            "fused_index": p.fused_index,
            "origin_op": p.origin_op,
            "origin_index": p.origin_index,
            "status": self.status,
            "cosine": r.cosine if r else None,
            "max_abs": r.max_abs if r else None,
            "max_rel": r.max_rel if r else None,
            "metrics": {
                **(r.metrics_json() if r else {}),
                "worst": r.worst if r else [],
                "red_eps": self.score,
                **({"budget_format": self.budget} if self.budget else {}),
            },
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "message": p.message or (r.message if r else None),
            "conversion": self.conversion,
            "fused_file": p.fused_file.path if p.fused_file else None,
            "origin_file": p.origin_file.path if p.origin_file else None,
        }

    def to_json(self) -> dict:
        """:meth:`fields`, JSON-safe (:func:`~.pair.json_clean`)."""
        return json_clean(self.fields())
