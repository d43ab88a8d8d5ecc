"""A comparison recorded in the results store (:mod:`fpinspect.store`), as ``compare --record``
and the inspector's ``b`` record it: the same settings and environment, so that either can be
checked against a baseline tagged from the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..dumps.engine.report import Report
from ..store import ResultsDB
from ..store.comparison import COMPARE_FIGURES


def compare_settings(
    thresholds: dict[str, Any],
    amplification: float,
    replay: str,
    fused_types: tuple[str, ...] | list[str],
    compare_unfused: bool,
) -> dict[str, Any]:
    """The options that change a comparison's verdicts: what the recorded run's settings hash covers."""
    return {
        "thresholds": thresholds,
        "amplification": amplification,
        "replay": replay,
        "fused_types": fused_types,
        "compare_unfused": compare_unfused,
    }


def record_compare(store: ResultsDB, report: Report, settings: dict[str, Any], inputs: dict[str, str]) -> int:
    """Store a ``compare`` report (as its ``--format json`` object); the compared folders are part
    of its environment (a new compiler's dumps sit elsewhere). Returns the run's id."""
    from .. import __version__

    environment = {"fpinspect": __version__, "inputs": {k: str(Path(v).resolve()) for k, v in inputs.items()}}
    return store.record(
        "compare",
        report.to_json(),
        task="compare",
        settings=settings,
        environment=environment,
        device="dumps",
        figures=COMPARE_FIGURES,
    )
