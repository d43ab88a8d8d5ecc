"""Task S checks the toolkit against independent oracles: it passes on the real toolkit and
fails on a toolkit with a planted bug."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import msgspec
import numpy as np
import pytest

from fpinspect.experiments.engine import ExperimentProcess
from fpinspect.experiments.events import HistogramEvent, Progress
from fpinspect.experiments.registry import get_task
from fpinspect.experiments.results import jsonable
from fpinspect.experiments.tasks import selfcheck
from fpinspect.numerics import FORMATS, error_stats, ulp_diff

SMALL = replace(
    selfcheck.SelfCheckSettings.profile("quick"),
    anchors=4,
    float32_pairs=1 << 17,
    stats_size=1 << 13,
    device_size=1 << 12,
)


class HostBackend:
    """The only thing S asks of a backend: where tensors go."""

    name = "cpu"
    device = "cpu"


def run(settings=SMALL):
    events = []
    result = selfcheck.run(settings, HostBackend(), events.append)
    return result, {v.topic: v.agrees for v in result.verdicts()}, events


@pytest.fixture(scope="module")
def passing():
    return run()


@pytest.mark.needs("torch")
def test_the_real_toolkit_passes_every_check(passing):
    result, verdicts, events = passing
    assert verdicts and all(v is True for v in verdicts.values()), verdicts
    assert result.data()["all_passed"] is True
    pairs = {c.fmt: c.pairs for c in result.exhaustive}
    # every pattern against each anchor, plus each non-NaN value against its neighbour
    assert pairs["float16"] == 65536 * SMALL.anchors + (65536 - 2046) - 1
    assert {e.histogram.name for e in events if isinstance(e, HistogramEvent)} >= {
        "s_float16_ulp_diff",
        "s_bfloat16_ulp_diff",
        "s_float32_ulp_diff",
        "s_float16_error_stats",
    }
    stages = {e.stage for e in events if isinstance(e, Progress)}
    assert {"S exhaustive float16", "S sampled float32", "S error_stats"} <= stages
    # every figure the task declares for baseline checks is a field of its result
    assert get_task("S").figures.unmatched(jsonable(result.data())) == []


def test_rank_oracles_agree_with_known_values():
    f16 = FORMATS["float16"]
    x = np.array([0.0, -0.0, 2.0**-24, 1.0, 65504.0, np.inf, -np.inf], dtype=np.float16)
    assert selfcheck.arithmetic_rank(x, f16).tolist() == [0, 0, 1, 0x3C00, 0x7BFF, 0x7C00, -0x7C00]
    assert selfcheck.top_rank(FORMATS["float8_e4m3fn"]) == 126 and selfcheck.top_rank(f16) == 0x7C00


def _off_across_zero(a, b, *, return_status=False):
    """A classic bug: +0 and -0 counted as two values (keys from raw sign-magnitude)."""
    d, st = ulp_diff(a, b, return_status=True)
    a, b = np.asarray(a), np.asarray(b)
    crosses = (np.signbit(a) != np.signbit(b)) & (d > 0) & (d < np.iinfo(d.dtype).max)
    d = d + crosses.astype(d.dtype)
    return (d, st) if return_status else d


@pytest.mark.needs("torch")
def test_a_toolkit_that_counts_zero_twice_fails(monkeypatch):
    monkeypatch.setattr(selfcheck, "ulp_diff", _off_across_zero)
    result, verdicts, _ = run()
    assert verdicts["ulp_diff, every float16 and bfloat16 value"] is False
    assert verdicts["ulp_diff, sampled float32"] is False
    assert verdicts["special values"] is False
    assert result.exhaustive[0].examples and result.data()["all_passed"] is False


@pytest.mark.needs("torch")
def test_error_stats_with_a_wrong_percentile_fails(monkeypatch):
    def skewed(a, ref, **kw):
        out = error_stats(a, ref, **kw)
        return msgspec.structs.replace(
            out, ulp=msgspec.structs.replace(out.ulp, p99=float(np.nextafter(out.ulp.p99, np.inf)))
        )

    monkeypatch.setattr(selfcheck, "error_stats", skewed)
    result, verdicts, _ = run(replace(SMALL, float32_pairs=1 << 16, anchors=1))
    assert verdicts["error_stats against numpy float64"] is False
    assert all("ulp p99" in " ".join(v["disagreements"]) for v in result.data()["error_stats"].values())


@pytest.mark.needs("torch")
@pytest.mark.skipif(importlib.util.find_spec("torch_npu") is not None, reason="an NPU stack is installed")
def test_s_opens_only_the_device_and_refuses_one_that_is_missing():
    assert get_task("S").fusing is False  # no compiler stack: the child starts in the time torch takes
    with ExperimentProcess("S", device="npu") as p:
        events = list(p.events())
    assert (
        len(events) == 1 and events[0].kind == "usage" and "torch_npu is not installed" in events[0].message
    )


@pytest.mark.needs("torch")
def test_a_check_given_nothing_to_check_is_not_run_rather_than_a_verdict():
    empty = replace(SMALL, float32_pairs=0, stats_size=0, device_size=0)
    result, verdicts, _ = run(empty)
    not_run = {
        "ulp_diff, sampled float32": "float32_pairs",
        "error_stats against numpy float64": "stats_size",
        "rounding on cpu": "device_size",
    }
    for v in result.verdicts():
        if v.topic in not_run:
            assert (
                v.agrees is None
                and v.measured == f"not run: {not_run[v.topic]} is 0, so nothing was checked."
            )
        else:
            assert v.agrees is True, v
