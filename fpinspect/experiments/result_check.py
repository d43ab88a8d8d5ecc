"""Check a ``result.json`` read back from disk before anything is built from it.

A result may come from another machine or another version, or be damaged: every field the
report and the result view use is checked for its type here, and the first bad one is named
by its path (``histograms[0].counts[2]``) in :class:`ResultFieldError`. Task data beside
the common keys is the task's own and is not checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: How ``jsonable`` writes the non-finite floats a number field may hold.
NON_FINITE = ("NaN", "Infinity", "-Infinity")


class ResultFieldError(ValueError):
    """``str()`` names the field and what is wrong with it."""


def _what(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"a {type(value).__name__}"


def _text(where: str, v: Any) -> None:
    if not isinstance(v, str):
        raise ResultFieldError(f"{where} must be text, not {_what(v)}")


def _flag(where: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise ResultFieldError(f"{where} must be true or false, not {_what(v)}")


def _number(where: str, v: Any) -> None:
    if isinstance(v, bool) or not (isinstance(v, (int, float)) or v in NON_FINITE):
        raise ResultFieldError(f"{where} must be a number, not {_what(v)}")


def _cell(where: str, v: Any) -> None:
    if isinstance(v, (dict, list)) and not (isinstance(v, list) and all(not isinstance(i, dict) for i in v)):
        raise ResultFieldError(f"{where} must be a number, text or a list of them, not {_what(v)}")


def _list(where: str, v: Any, each: Callable[[str, Any], None] | None = None) -> list:
    if not isinstance(v, list):
        raise ResultFieldError(f"{where} must be a list, not {_what(v)}")
    if each is not None:
        for i, item in enumerate(v):
            each(f"{where}[{i}]", item)
    return v


def _object(where: str, v: Any, fields: dict[str, Callable[[str, Any], None]], optional: tuple = ()) -> dict:
    if not isinstance(v, dict):
        raise ResultFieldError(f"{where} must be an object, not {_what(v)}")
    unknown = sorted(set(v) - set(fields))
    if unknown:
        raise ResultFieldError(f"{where} has a field this version does not know: {unknown[0]}")
    for name, check in fields.items():
        if name in v:
            check(f"{where}.{name}", v[name])
        elif name not in optional:
            raise ResultFieldError(f"{where} has no {name}")
    return v


def _same_length(where: str, a: list, b: list, names: tuple[str, str]) -> None:
    if len(a) != len(b):
        raise ResultFieldError(f"{where} has {len(a)} {names[0]} but {len(b)} {names[1]}")


def _verdict(where: str, v: Any) -> None:
    def agrees(w: str, x: Any) -> None:
        if x is not None and not isinstance(x, bool):
            raise ResultFieldError(f"{w} must be true, false or null, not {_what(x)}")

    _object(where, v, {"topic": _text, "expectation": _text, "measured": _text, "agrees": agrees})


def _table(where: str, t: Any) -> None:
    _object(
        where,
        t,
        {
            "title": _text,
            "columns": lambda w, x: _list(w, x, _text),
            "rows": lambda w, x: _list(w, x, lambda w2, r: _list(w2, r, _cell)),
            "summary": _flag,
        },
    )
    for i, row in enumerate(t["rows"]):
        _same_length(f"{where}.rows[{i}]", row, t["columns"], ("cells", "columns"))


def _histogram(where: str, h: Any) -> None:
    _object(
        where,
        h,
        {
            "name": _text,
            "title": _text,
            "xlabel": _text,
            "bins": lambda w, x: _list(w, x, _text),
            "counts": lambda w, x: _list(w, x, _number),
            "ylabel": _text,
        },
        optional=("ylabel",),
    )
    _same_length(where, h["bins"], h["counts"], ("bins", "counts"))


def _series(where: str, s: Any) -> None:
    numbers = lambda w, x: _list(w, x, _number)  # noqa: E731
    _object(where, s, {"label": _text, "x": numbers, "y": numbers})
    _same_length(where, s["x"], s["y"], ("x values", "y values"))


def _curve(where: str, c: Any) -> None:
    def scale(w: str, x: Any) -> None:
        if x not in ("linear", "log"):
            raise ResultFieldError(f"{w} must be linear or log, not {_what(x)}")

    lines = lambda w, x: _list(w, x, _series)  # noqa: E731
    _object(
        where,
        c,
        {
            "name": _text,
            "title": _text,
            "xlabel": _text,
            "ylabel": _text,
            "series": lines,
            "xscale": scale,
            "steps": _flag,
            "secondary": lines,
            "secondary_ylabel": _text,
            "secondary_log": _flag,
        },
        optional=("xscale", "steps", "secondary", "secondary_ylabel", "secondary_log"),
    )


def check_report(d: dict[str, Any]) -> None:
    """Raise :class:`ResultFieldError` for the first field of ``d`` a report cannot use."""
    for name in ("task", "title", "claim", "profile"):
        if name not in d:
            raise ResultFieldError(f"it has no {name}")
        _text(name, d[name])
    environment = d.get("environment")
    if not isinstance(environment, dict):
        raise ResultFieldError(f"environment must be an object, not {_what(environment)}")
    if "device" not in environment:
        raise ResultFieldError("environment has no device")
    _text("environment.device", environment["device"])
    if not isinstance(d.get("settings"), dict):
        raise ResultFieldError(f"settings must be an object, not {_what(d.get('settings'))}")
    _list("verdicts", d.get("verdicts"), _verdict)
    _list("tables", d.get("tables"), _table)
    _list("histograms", d.get("histograms"), _histogram)
    _list("curves", d.get("curves", []), _curve)
