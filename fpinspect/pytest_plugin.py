"""pytest plugin (entry point ``pytest11``): precision assertions as fixtures.

    def test_kernel(assert_ulp):
        assert_ulp(my_kernel(x), reference(x), max_ulp=1)

    def test_layernorm_precision(precision_baseline):
        precision_baseline({"p99_ulp": p99, "max_ulp": worst}, against="release-24")

Failures list the worst elements with their indices, values and bit patterns, or the figures
that regressed against the baseline with both values.
"""

from __future__ import annotations

import platform
import sys
from typing import Any

import pytest

from .numerics import testing as _t


@pytest.fixture
def assert_ulp():
    """``assert_ulp(actual, expected, max_ulp=1)``: every element within ``max_ulp`` ULPs."""
    return _t.assert_ulp


@pytest.fixture
def assert_bit_equal():
    """``assert_bit_equal(actual, expected)``: same shape, dtype and bit patterns."""
    return _t.assert_bit_equal


def pytest_addoption(parser):
    group = parser.getgroup("fpinspect")
    group.addoption(
        "--precision-db",
        metavar="PATH",
        help="results database of the precision_baseline fixture (default: $FPINSPECT_DB, else the user's)",
    )
    group.addoption(
        "--precision-tag",
        metavar="NAME",
        help="tag the figures precision_baseline records as baseline NAME instead of checking them",
    )


def _environment(device: str) -> dict[str, Any]:
    from . import __version__

    torch = sys.modules.get("torch")  # the test's own framework, when it loaded one
    return {
        "device": device,
        "device_name": platform.machine(),
        "python": platform.python_version(),
        "fpinspect": __version__,
        **({"torch": torch.__version__} if torch is not None else {}),
    }


@pytest.fixture
def precision_baseline(request):
    """``precision_baseline(figures, against=NAME, rule=None, device="cpu", settings=None)``:
    record the test's measured ``figures`` (name -> number) in the results database as a run of
    this test, and fail when one regressed against baseline NAME beyond noise (``rule``: a
    :class:`fpinspect.store.Rule`, default: lower is better, 5% + 0.5 of the baseline; runs of
    the same test, ``settings`` and device class count). Skipped when NAME holds no such run;
    with ``--precision-tag NAME`` the run joins baseline NAME instead."""
    from .store import Figure, ResultsDB, Rule, StoreError, check_run
    from .store.check import matching_baseline

    def check(
        figures: dict[str, float],
        against: str,
        rule: Rule | None = None,
        device: str = "cpu",
        settings: dict[str, Any] | None = None,
    ) -> None:
        rule = rule or Rule("lower", rel=0.05, abs=0.5)
        task = f"pytest:{request.node.nodeid}"
        try:
            with ResultsDB(request.config.getoption("precision_db")) as db:
                run_id = db.record(
                    "pytest",
                    {},
                    task=task,
                    settings=settings or {},
                    environment=_environment(device),
                    device=device,
                    figures=[Figure(n, float(v), rule) for n, v in figures.items()],
                )
                tag = request.config.getoption("precision_tag")
                if tag:
                    db.tag(tag, [run_id])
                    return
                run = db.run(run_id)
                try:
                    matching_baseline(db, against, run)
                except StoreError as exc:
                    pytest.skip(str(exc))
                result = check_run(db, run, against)
        except StoreError as exc:
            pytest.fail(str(exc), pytrace=False)
        bad = result.regressed
        if bad:
            lines = [
                f"  {f.name}: {f.baseline!r} -> {f.current!r} (allowed ±{f.allowed!r}, {f.noise})"
                for f in bad
            ]
            pytest.fail(
                f"{len(bad)} figure(s) regressed against baseline {against!r}:\n" + "\n".join(lines),
                pytrace=False,
            )

    return check
