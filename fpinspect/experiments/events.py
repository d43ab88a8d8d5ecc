"""The JSON-lines protocol between an experiment's child process and whoever watches it.

The child writes one JSON object per line on its stdout; the CLI's progress bar and the
TUI read the same stream through :func:`read_events`. Every object has an ``"event"`` key
naming its type:

* ``started`` — the task, the device it resolved to, and the profile.
* ``progress`` — ``done`` of ``total`` steps of a named ``stage``.
* ``message`` — one line of information (what is being compiled, what was found).
* ``histogram`` — a partial or final histogram (:class:`~.results.Histogram` fields).
* ``curve`` — a partial or final line chart such as a CDF (:class:`~.results.Curve`
  fields); a later event with the same ``name`` replaces an earlier one.
* ``curve_point`` — one sampled point of a training curve: the ``series`` (run) it
  belongs to, its ``step``, and the metric ``values`` there (task E's losses and grad norm);
  a live view extends one line per metric and series.
* ``finished`` — the final result: the report dict (or, for internal entries such as A's
  cold-start round, that entry's payload).
* ``failed`` — the run stopped: ``kind`` is ``"usage"`` (bad request: unavailable device,
  missing torch), ``"error"`` (an exception; ``detail`` holds the traceback) or
  ``"crash"`` (the process died without saying why).

A well-formed stream ends with exactly one ``finished`` or ``failed`` event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import IO, Any

from .results import Curve, Histogram, jsonable


@dataclass(frozen=True)
class Started:
    task: str
    device: str
    profile: str


@dataclass(frozen=True)
class Progress:
    stage: str
    done: int
    total: int


@dataclass(frozen=True)
class Message:
    text: str


@dataclass(frozen=True)
class HistogramEvent:
    histogram: Histogram


@dataclass(frozen=True)
class CurveEvent:
    curve: Curve


@dataclass(frozen=True)
class CurvePoint:
    series: str
    step: int
    values: dict[str, float]


@dataclass(frozen=True)
class Finished:
    result: dict[str, Any]


@dataclass(frozen=True)
class Failed:
    kind: str
    message: str
    detail: str = ""


Event = Started | Progress | Message | HistogramEvent | CurveEvent | CurvePoint | Finished | Failed

_NAMES: dict[type, str] = {
    Started: "started",
    Progress: "progress",
    Message: "message",
    HistogramEvent: "histogram",
    CurveEvent: "curve",
    CurvePoint: "curve_point",
    Finished: "finished",
    Failed: "failed",
}
_TYPES = {name: cls for cls, name in _NAMES.items()}


class ProtocolError(ValueError):
    """A line of the stream is not a valid event."""


def encode(event: Event) -> str:
    """One JSON line (without the newline)."""
    if isinstance(event, HistogramEvent):
        body = asdict(event.histogram)
    elif isinstance(event, CurveEvent):
        body = asdict(event.curve)
    else:
        body = asdict(event)
    return json.dumps({"event": _NAMES[type(event)], **jsonable(body)}, allow_nan=False)


def decode(line: str) -> Event:
    """Parse one line written by :func:`encode`."""
    try:
        obj = json.loads(line)
        cls = _TYPES[obj.pop("event")]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ProtocolError(f"not an experiment event: {line[:200]!r}") from exc
    try:
        if cls is HistogramEvent:
            obj["bins"], obj["counts"] = tuple(obj["bins"]), tuple(obj["counts"])
            return HistogramEvent(Histogram(**obj))
        if cls is CurveEvent:
            return CurveEvent(Curve.from_dict(obj))
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in obj.items() if k in names})
    except (TypeError, KeyError) as exc:
        raise ProtocolError(f"malformed {_NAMES[cls]} event: {line[:200]!r}") from exc


def read_events(lines: Iterable[str]) -> Iterator[Event]:
    """Decode a stream of lines (a pipe, a file, a list), skipping blank lines."""
    for line in lines:
        if line.strip():
            yield decode(line)


class Emitter:
    """The ``emit`` callable handed to tasks in the child: writes each event as a line and
    flushes, so the parent sees progress as it happens."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def __call__(self, event: Event) -> None:
        self.stream.write(encode(event) + "\n")
        self.stream.flush()
