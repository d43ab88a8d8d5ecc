"""Which numbers of a result are its figures, and the words to declare them in.

Each kind of result declares its figures next to its type: every task of the test plan has a
``FIGURES`` beside its result class (``fpinspect/experiments/tasks/``, handed over as
``Task.figures`` by whoever records a run), and a comparison's are in :mod:`.comparison`
(its report is a type of :mod:`fpinspect.dumps`, beneath the store). A declaration that
names a field its result does not have is caught by :meth:`Figures.unmatched`, which each
task's tests run on a real result.

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


@dataclass(frozen=True)
class Rule:
    direction: str
    rel: float = 0.0
    abs: float = 0.0
    #: Words a figure of this rule may hold for a number: each word's place in ``levels``
    #: (a comparison's verdicts, least severe first: a worse verdict is a larger number).
    levels: tuple[str, ...] = ()


EXACT = Rule("exact")
#: ULP errors of a correctly rounded path move by a fraction of an ULP between compiler versions.
ULP = Rule("lower", rel=0.05, abs=0.5)
REL = Rule("lower", rel=0.05)
COUNT = Rule("lower")
SHARE = Rule("either", abs=0.01)
FLAG = Rule("higher")


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


#: The part of a declaration: per-row figures, figures of the result itself, an object kept whole.
Part = Rows | Fields | Whole


@dataclass(frozen=True)
class Figure:
    name: str
    value: float | None
    rule: Rule


def _number(value: Any, levels: tuple[str, ...] = ()) -> float | None:
    """A figure's value: booleans as 0/1, a word of ``levels`` (:attr:`Rule.levels`) by its
    place, the strings :func:`~fpinspect.experiments.results.jsonable` writes for non-finite
    floats as floats; NaN and anything else as None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        v = float(value)
    elif isinstance(value, str) and value in levels:
        v = float(levels.index(value))
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


def _found(data: Any, parts: list[str], levels: tuple[str, ...]) -> bool:
    """Whether the dotted path ``parts`` leads to a figure somewhere in ``data``: to a number
    (or a value :func:`_number` reads), or to a null on the way (the field is there, this
    result has no value in it)."""
    if data is None:
        return True
    if not parts:
        return not isinstance(data, (dict, list)) and (_number(data, levels) is not None or data == "NaN")
    head, rest = parts[0], parts[1:]
    if isinstance(data, dict):
        values = list(data.values()) if head == "*" else ([data[head]] if head in data else [])
    elif isinstance(data, list) and head == "*":
        values = data
    else:
        values = []
    return any(_found(v, rest, levels) for v in values)


@dataclass(frozen=True, init=False)
class Figures:
    """The figures of one kind of result, as :class:`Rows`, :class:`Fields` and :class:`Whole`
    parts; :meth:`~fpinspect.store.ResultsDB.record` reads them from each result it stores."""

    parts: tuple[Part, ...]

    def __init__(self, *parts: Part):
        object.__setattr__(self, "parts", parts)

    def extract(self, result: dict[str, Any]) -> list[Figure]:
        """The figures of ``result`` (a ``result.json`` object, or compare's JSON)."""
        out: list[Figure] = []
        for part in self.parts:
            if isinstance(part, Rows):
                for row in _rows(result, part.table):
                    prefix = _row_name(row, part.key)
                    for path, rule in part.paths.items():
                        for name, value in _walk(row, path.split("."), ""):
                            out.append(Figure(f"{prefix}/{name}", _number(value, rule.levels), rule))
            elif isinstance(part, Fields):
                for path, rule in part.paths.items():
                    for name, value in _walk(result, path.split("."), ""):
                        out.append(Figure(name, _number(value, rule.levels), rule))
        return out

    def tables(self, result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """The per-row tables the declaration reads, and the objects it keeps whole (as
        one-row tables), for histories and reports."""
        out: dict[str, list[dict[str, Any]]] = {}
        for part in self.parts:
            if isinstance(part, Rows):
                out[part.table] = [
                    {k: v for k, v in row.items() if k not in part.drop} for row in _rows(result, part.table)
                ]
            elif isinstance(part, Whole) and isinstance(result.get(part.field), dict):
                out[part.field] = [result[part.field]]
        return out

    def unmatched(self, result: dict[str, Any]) -> list[str]:
        """The declared fields ``result`` does not have, as ``table[].path`` or ``path``: a row
        table with no rows, a key, figure or dropped field no row has, a figure path that leads
        to no number, an object kept whole that is not one. Empty for a result whose every
        declared field is there (a renamed field would otherwise record nothing, silently)."""
        missing: list[str] = []
        for part in self.parts:
            if isinstance(part, Rows):
                rows = _rows(result, part.table)
                if not rows:
                    missing.append(f"{part.table}[]")
                    continue
                wanted = [*part.key, *part.drop]
                missing += [f"{part.table}[].{k}" for k in wanted if not any(k in row for row in rows)]
                missing += [
                    f"{part.table}[].{path}"
                    for path, rule in part.paths.items()
                    if not any(_found(row, path.split("."), rule.levels) for row in rows)
                ]
            elif isinstance(part, Fields):
                missing += [
                    p for p, rule in part.paths.items() if not _found(result, p.split("."), rule.levels)
                ]
            elif not isinstance(result.get(part.field), dict):
                missing.append(part.field)
        return missing
