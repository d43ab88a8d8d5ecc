"""A comparison's figures (``compare --record`` and the inspector's ``b``): its report is a type
of :mod:`fpinspect.dumps`, the layer beneath the store, so they are declared here. Loaded only
when a comparison is recorded: the tasks declare theirs with :mod:`.figures`, and a task's
child process loads no dumps layer."""

from __future__ import annotations

from ..dumps.engine.outcomes import VERDICTS
from .figures import COUNT, REL, ULP, Fields, Figures, Rows, Rule, Whole

#: Each record's statistics and verdict, the counts of failed and warned records, the summary
#: kept whole.
COMPARE_FIGURES = Figures(
    Rows(
        "records",
        ("fused_op", "kind", "fused_index"),
        {
            "cosine": Rule("higher", abs=1e-6),
            "max_abs": REL,
            "max_rel": REL,
            "metrics.red_eps": REL,  # the relative L2 error (in eps) that decides verdicts
            "metrics.ulp.p50": ULP,
            "metrics.ulp.p99": ULP,
            "metrics.ulp.max": ULP,
            "verdict": Rule("exact", levels=VERDICTS),
        },
    ),
    Fields({"summary.verdicts.fail": COUNT, "summary.verdicts.warn": COUNT}),
    Whole("summary"),
)
