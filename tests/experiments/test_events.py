import io

import pytest

from fpinspect.experiments.events import (
    Emitter,
    Failed,
    Finished,
    HistogramEvent,
    Message,
    Progress,
    ProtocolError,
    Started,
    decode,
    encode,
    read_events,
)
from fpinspect.experiments.results import Histogram

EVENTS = [
    Started("C1", "cpu", "quick"),
    Progress("round 1", 3, 10),
    Message("compiling"),
    HistogramEvent(Histogram("h", "title", "ULP", ("0", "1"), (5, 2))),
    Finished({"task": "C1", "ulp_share": {"0": 0.5, "1": 0.5, ">=2": 0.0}}),
    Failed("usage", "device 'cuda' is not available", ""),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_round_trip(event):
    line = encode(event)
    assert "\n" not in line
    assert decode(line) == event


def test_non_finite_numbers_stay_valid_json():
    line = encode(Finished({"max": float("nan"), "inf": float("inf")}))
    assert decode(line) == Finished({"max": "NaN", "inf": "Infinity"})


def test_emitter_writes_one_line_per_event_and_reader_skips_blanks():
    buf = io.StringIO()
    emit = Emitter(buf)
    for e in EVENTS:
        emit(e)
    lines = buf.getvalue().splitlines()
    assert len(lines) == len(EVENTS)
    assert list(read_events(["", *lines, "  "])) == EVENTS


@pytest.mark.parametrize(
    "line", ["not json", "[1, 2]", '{"event": "nope"}', '{"event": "progress", "stage": "x"}']
)
def test_bad_lines_raise_protocol_error(line):
    with pytest.raises(ProtocolError):
        decode(line)


def test_curve_events_round_trip_with_their_series():
    from fpinspect.experiments.events import CurveEvent
    from fpinspect.experiments.results import Curve, Series, cdf_series

    s = cdf_series("fused", [3.0, 1.0, 1.0, float("nan"), 2.0])
    assert s == Series("fused", (1.0, 2.0, 3.0), (0.5, 0.75, 1.0))
    event = CurveEvent(Curve("c", "CDF", "ULP", "share", (s, Series("empty", (), ())), "log", True))
    assert decode(encode(event)) == event
