"""Which numbers of a result are its figures: one declared mapping per task.

A figure is one number a baseline check compares, named by where it sits in ``result.json``
(``layernorm/float16/normal/fused.p99_ulp``: the row of B's ``chains`` table with those key
fields, then the path inside the row). Its :class:`Rule` says which change is a regression:

- ``lower``: an error; a rise beyond noise regresses, a fall is an improvement.
- ``higher``: a share or flag that should stay up; a fall beyond noise regresses.
- ``either``: a measurement with no better side (a final loss against its eager twin);
  any change beyond noise regresses.
- ``exact``: bit-equality, counts of unique hashes; any change at all regresses.

The stated tolerance (``rel`` × |baseline| + ``abs``) is the noise when a baseline holds
one run; several baseline runs give their own spread instead (:mod:`.check`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..dumps.outcomes import VERDICTS


@dataclass(frozen=True)
class Rule:
    direction: str
    rel: float = 0.0
    abs: float = 0.0


EXACT = Rule("exact")
#: ULP errors of a correctly rounded path move by a fraction of an ULP between compiler versions.
ULP = Rule("lower", rel=0.05, abs=0.5)
REL = Rule("lower", rel=0.05)
COUNT = Rule("lower")
SHARE = Rule("either", abs=0.01)
FLAG = Rule("higher")
TRAINING = Rule("either", rel=0.02, abs=1e-3)


@dataclass(frozen=True)
class Rows:
    """Figures of each row of the list ``table``: the row is named by its ``key`` fields,
    each figure by its ``paths`` inside the row (``*`` matches every key or index)."""

    table: str
    key: tuple[str, ...]
    paths: dict[str, Rule]
    #: Row fields left out of the stored table (per-input series that result.json keeps).
    drop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fields:
    """Figures at ``paths`` of the result itself (``*`` matches every key or index)."""

    paths: dict[str, Rule]


@dataclass(frozen=True)
class Whole:
    """The object at ``field`` of the result, kept whole as a one-row table of that name (no
    figures: a history or a report shows it as it was)."""

    field: str


_B_PATHS = {
    f"{path}.{stat}": rule
    for path in ("eager", "fused")
    for stat, rule in (
        ("p50_ulp", ULP),
        ("p99_ulp", ULP),
        ("max_ulp", ULP),
        ("p99_rel", REL),
        ("max_rel", REL),
    )
}

#: The mapping of every task (and of ``compare``): figures and the per-row tables kept whole.
TASK_FIGURES: dict[str, tuple[Rows | Fields | Whole, ...]] = {
    "S": (
        Fields(
            {
                "all_passed": EXACT,
                "arithmetic_rank_matches_sorted_rank": EXACT,
                "error_stats.*.agrees": EXACT,
                "error_stats.*.rounded_max_ulp": ULP,
                "device_rounding.*.differing": COUNT,
            }
        ),
    ),
    "A": (Fields({"unique_output_hashes": EXACT, "max_ulp": EXACT}),),
    "B": (
        Rows(
            "chains",
            ("chain", "dtype", "distribution"),
            {**_B_PATHS, "fused_no_worse": FLAG},
            drop=("per_input_max_ulp",),
        ),
        Fields({"verdict.rows_worse": COUNT}),
    ),
    "C1": (Fields({"ulp_share.*": SHARE, "eager_ulp_share.*": SHARE, "bit_equal": EXACT, "max_ulp": COUNT}),),
    "C2": (
        Fields(
            {
                "ulp_matrix.*.*": EXACT,
                "eager_vs_fused_bit_equal.*": EXACT,
                "self_deterministic.*": EXACT,
            }
        ),
    ),
    "C3": (
        Rows("by_iterations", ("iterations",), {"max_ulp": ULP, "p99_ulp": ULP, "mean_ulp": ULP}),
        Fields({"framework.eager_vs_fused_bit_equal": EXACT}),
    ),
    "D": (
        Rows("table", ("chain", "dtype", "shape"), {"bit_equal": EXACT, "max_ulp": COUNT}),
        Fields({"all_pure_movement_bit_equal": EXACT}),
    ),
    "E": (Fields({"final.*.*": TRAINING, "divergence.size": Rule("lower", rel=0.1)}),),
    "compare": (
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
                "verdict": EXACT,
            },
        ),
        Fields({"summary.verdicts.fail": COUNT, "summary.verdicts.warn": COUNT}),
        Whole("summary"),
    ),
}

#: Verdicts of ``compare`` as numbers: a worse verdict is a larger number.
VERDICT_LEVELS = {v: float(level) for level, v in enumerate(VERDICTS)}


@dataclass(frozen=True)
class Figure:
    name: str
    value: float | None
    rule: Rule


def _number(value: Any) -> float | None:
    """A figure's value: booleans as 0/1, verdicts by :data:`VERDICT_LEVELS`, the strings
    :func:`~fpinspect.experiments.results.jsonable` writes for non-finite floats as floats;
    NaN and anything else as None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        v = float(value)
    elif isinstance(value, str) and value in VERDICT_LEVELS:
        v = VERDICT_LEVELS[value]
    elif isinstance(value, str) and value in ("Infinity", "-Infinity"):
        v = math.inf if value == "Infinity" else -math.inf
    else:
        return None
    return None if math.isnan(v) else v


def _walk(data: Any, parts: list[str], name: str):
    """``(name, value)`` for every match of the dotted path ``parts`` in ``data``."""
    if not parts:
        yield name, data
        return
    head, rest = parts[0], parts[1:]
    if isinstance(data, dict):
        items = data.items() if head == "*" else ([(head, data[head])] if head in data else [])
    elif isinstance(data, list) and head == "*":
        items = enumerate(data)
    else:
        items = []
    for key, value in items:
        yield from _walk(value, rest, f"{name}.{key}" if name else str(key))


def _row_name(row: dict[str, Any], key: tuple[str, ...]) -> str:
    def text(v: Any) -> str:
        return "x".join(map(str, v)) if isinstance(v, list) else str(v)

    return "/".join(text(row.get(k)) for k in key)


def _rows(result: dict[str, Any], table: str) -> list[dict[str, Any]]:
    rows = result.get(table)
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def extract(kind: str, result: dict[str, Any]) -> list[Figure]:
    """The figures of ``result`` (a ``result.json`` object, or compare's JSON for ``compare``)
    by the mapping of ``kind``; none for a kind without one."""
    out: list[Figure] = []
    for part in TASK_FIGURES.get(kind, ()):
        if isinstance(part, Rows):
            for row in _rows(result, part.table):
                prefix = _row_name(row, part.key)
                for path, rule in part.paths.items():
                    for name, value in _walk(row, path.split("."), ""):
                        out.append(Figure(f"{prefix}/{name}", _number(value), rule))
        elif isinstance(part, Fields):
            for path, rule in part.paths.items():
                for name, value in _walk(result, path.split("."), ""):
                    out.append(Figure(name, _number(value), rule))
    return out


def tables(kind: str, result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The per-row tables the mapping of ``kind`` reads, and the objects it keeps whole (as
    one-row tables), for histories and reports."""
    out: dict[str, list[dict[str, Any]]] = {}
    for part in TASK_FIGURES.get(kind, ()):
        if isinstance(part, Rows):
            out[part.table] = [
                {k: v for k, v in row.items() if k not in part.drop} for row in _rows(result, part.table)
            ]
        elif isinstance(part, Whole) and isinstance(result.get(part.field), dict):
            out[part.field] = [result[part.field]]
    return out
