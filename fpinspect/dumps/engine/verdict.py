"""Pass / warn / fail for one comparison, from dtype-aware thresholds users can override.

The criteria, each in units that mean the same for every format:

* ``red`` — relative Euclidean distance ``||x - y|| / ||y||`` divided by the machine
  epsilon of the measured format (``2**-10`` for float16). It sees uniform scale errors
  (which cosine similarity cannot: ``cos(1.03 * y, y) == 1``), a region computed at lower
  precision (float16 data rounded through bfloat16 gives about 1.7 eps) and stays below
  0.5 eps for ordinary fusion noise (fp32 intermediates against eager fp16 rounding).
* ``ulp2_share`` — the share of elements 2 or more ULPs apart (same-dtype pairs of 8/16-bit
  formats): fusion noise keeps it under about 10%, a lower-precision region pushes it
  beyond 40%.
* ``cosine`` — below ``cosine_fail`` fails (the msprobe / torchair convention, 0.99).
* Any NaN or infinity on one side only fails.

Integer and boolean tensors must match exactly. Defaults were measured on elementwise,
layernorm and softmax chains (eager fp16 vs fp32-internal fused vs the same rounded through
bfloat16 vs scaled by 1.003 and 1.03); float32 tolerates far more (reduction order alone
moves float32 results by many ULPs) while still failing any lower-precision region.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, fields, replace
from functools import cache

from ...numerics import float_format
from ..errors import InputError
from .outcomes import VERDICTS, worst_verdict  # noqa: F401  (VERDICTS: importers of this module)
from .pair import PairResult


def format_score(score: float | None) -> str:
    """A severity (``red`` in eps of the measured format) as users read it: ``1.23 eps``;
    ``NaN/inf`` for a special-value mismatch (an infinite score), ``-`` when there is none."""
    if score is None:
        return "-"
    return "NaN/inf" if math.isinf(score) else f"{score:.3g} eps"


@dataclass(frozen=True)
class Thresholds:
    """The limits of one measured format (see the module docstring for each criterion). A pair
    warns or fails when its value is strictly beyond the limit; ``None`` turns a criterion off."""

    red_warn: float  #: relative L2 error, in eps of the format, above which a pair warns
    red_fail: float  #: ... and above which it fails
    ulp2_share_warn: float | None = None  #: share of elements >= 2 ULP apart (0..1) that warns
    ulp2_share_fail: float | None = None  #: ... and that fails
    cosine_fail: float = 0.99  #: a cosine similarity below this fails


LOW_PRECISION = Thresholds(red_warn=0.75, red_fail=1.0, ulp2_share_warn=0.15, ulp2_share_fail=0.30)

#: Default thresholds per measured format.
DEFAULTS: dict[str, Thresholds] = {
    "float8_e4m3fn": LOW_PRECISION,
    "float8_e5m2": LOW_PRECISION,
    "bfloat16": LOW_PRECISION,
    "float16": LOW_PRECISION,
    "float32": Thresholds(red_warn=16.0, red_fail=256.0),
    "float64": Thresholds(red_warn=1024.0, red_fail=2.0**20),
}

KEYS = tuple(f.name for f in fields(Thresholds))


class ThresholdTable:
    """Thresholds by format name, starting from :data:`DEFAULTS`, with overrides.

    Overrides are ``KEY=VALUE`` (every format) or ``FORMAT.KEY=VALUE`` (one format), e.g.
    ``red_fail=2`` or ``float32.red_fail=1000``; a config file holds the same as JSON or
    TOML: ``{"red_fail": 2, "float32": {"red_fail": 1000}}``.
    """

    def __init__(self, table: dict[str, Thresholds] | None = None):
        self.table = dict(table or DEFAULTS)
        self._given: set[tuple[str, str]] = set()  # (format, key) the user set

    def for_format(self, name: str) -> Thresholds:
        return self.table.get(name, self.table["float64"])

    def set(self, key: str, value: float, fmt: str | None = None) -> None:
        if key not in KEYS:
            raise ValueError(f"unknown threshold {key!r}; known: {', '.join(KEYS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"threshold {key} must be a number, not {value!r}")
        value = float(value)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"threshold {key} must be a finite number >= 0, not {value:g}")
        if key.startswith("ulp2_share") and value > 1:
            raise ValueError(f"threshold {key} is a share of elements, between 0 and 1, not {value:g}")
        if key == "cosine_fail" and value > 1:
            raise ValueError(f"threshold cosine_fail is a cosine, at most 1, not {value:g}")
        names = [fmt] if fmt else list(self.table)
        for name in names:
            if name not in self.table:
                raise ValueError(f"unknown format {name!r}; known: {', '.join(self.table)}")
            self.table[name] = replace(self.table[name], **{key: value})
            self._given.add((name, key))

    def check_order(self) -> None:
        """Every warn threshold at most its fail threshold.

        Both set by the user in the wrong order is a :class:`ValueError`; one set by the user
        across its default partner moves the partner along (``red_fail=2`` also lowers
        float32's default ``red_warn=16`` to 2), so a global override stays meaningful.
        """
        for name, t in self.table.items():
            for warn, fail in (("red_warn", "red_fail"), ("ulp2_share_warn", "ulp2_share_fail")):
                w, f = getattr(t, warn), getattr(t, fail)
                if w is None or f is None or w <= f:
                    continue
                given_w, given_f = (name, warn) in self._given, (name, fail) in self._given
                if given_w and given_f:
                    raise ValueError(
                        f"{name}.{warn}={w:g} is above {name}.{fail}={f:g}: a warning must come first"
                    )
                t = replace(t, **({fail: w} if given_w else {warn: f}))
                self.table[name] = t

    def apply(self, assignment: str) -> None:
        """Apply one ``[FORMAT.]KEY=VALUE`` override."""
        lhs, sep, rhs = assignment.partition("=")
        if not sep:
            raise ValueError(f"threshold override {assignment!r} is not KEY=VALUE")
        fmt, dot, key = lhs.strip().rpartition(".")
        try:
            value = float(rhs)
        except ValueError:
            raise ValueError(f"threshold override {assignment!r}: {rhs!r} is not a number") from None
        self.set(key, value, fmt if dot else None)

    def load(self, path: str) -> None:
        """Apply a JSON or TOML config file; bad files raise :class:`InputError`."""
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})", "CONFIG_ERROR") from None
        toml = path.lower().endswith(".toml")
        try:
            if toml:
                import tomllib  # Python 3.11+

                data = tomllib.loads(raw.decode("utf-8"))
            else:
                data = json.loads(raw)
        except ImportError:
            raise InputError(
                path, "TOML needs Python 3.11 or newer; use a .json config", "CONFIG_ERROR"
            ) from None
        except RecursionError:
            raise InputError(path, "is nested too deeply to be a thresholds file", "CONFIG_ERROR") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(
                path, f"is not valid {'TOML' if toml else 'JSON'} ({exc})", "CONFIG_ERROR"
            ) from None
        data = data.get("thresholds", data) if isinstance(data, dict) else data
        if not isinstance(data, dict):
            raise InputError(path, "must hold an object of thresholds", "CONFIG_ERROR")
        try:
            for key, value in data.items():
                if isinstance(value, dict):
                    for k, v in value.items():
                        self.set(k, v, key)
                else:
                    self.set(key, value)
        except (ValueError, TypeError) as exc:
            raise InputError(path, str(exc), "CONFIG_ERROR") from None

    def to_json(self) -> dict:
        return {name: {k: getattr(t, k) for k in KEYS} for name, t in self.table.items()}


@cache
def _eps(fmt_name: str) -> float:
    return float_format(fmt_name).eps


@cache
def _integer_name(dtype: str | None) -> bool:
    """Whether ``dtype`` (a name, or ``None``) is an integer or boolean type's."""
    return dtype is not None and dtype.rstrip("0123456789") in ("int", "uint", "bool")


@dataclass(frozen=True)
class Judgement:
    """The verdict of one comparison (:func:`judge`), with its reasons and severity."""

    verdict: str | None  #: "pass" / "warn" / "fail", None when nothing was compared
    reasons: tuple[str, ...]  #: why it is not "pass" (empty for pass)
    score: float | None  #: severity for sorting: ``red`` in eps of the measured format (or ``budget``)
    #: the narrower format whose eps ``score`` counts, where the budget applied; else ``None``
    budget: str | None = None


def judge(res: PairResult, table: ThresholdTable, budget: str | None = None) -> Judgement:
    """The verdict of one comparison (see the module docstring for the criteria).

    ``budget`` names a floating format narrower than the measured one that the compared values
    passed through (:func:`~.plan.budget_format`): ``red`` is then counted in that format's eps
    and held to its thresholds, the score is in those eps, and the ULP share (counted on the
    measured format's grid, so blind to the narrower rounding) is not used."""
    if not res.compared:
        return Judgement(None, (), None)
    st = res.stats
    m = res.metrics
    reasons: list[tuple[str, str]] = []
    if st.nan_mismatch:
        reasons.append(("fail", f"{st.nan_mismatch} NaN on one side only"))
    if st.inf_mismatch:
        reasons.append(("fail", f"{st.inf_mismatch} infinities on one side only"))
    integer = _integer_name(res.dtype_a) and _integer_name(res.dtype_b)
    wider = False
    if integer:
        differ = m.mismatched if isinstance(m.mismatched, int) else 1 if (res.max_abs or 0) != 0 else 0
        if differ:
            reasons.append(("fail", f"integer data differ in {differ} elements (max abs {res.max_abs:g})"))
        score = 0.0 if not differ else float("inf")
    else:
        ulp = m.errors.ulp
        fmt = ulp.dtype
        wider = budget is not None and _eps(budget) > _eps(fmt)
        unit = budget if wider else fmt
        t = table.for_format(unit)
        red = m.red
        score = None if red is None else red / _eps(unit)
        path = f" ({fmt} values through {budget})" if wider else ""
        if score is not None:
            if score > t.red_fail:
                reasons.append(("fail", f"relative L2 error {score:.3g} eps {unit}{path} > {t.red_fail:g}"))
            elif score > t.red_warn:
                reasons.append(("warn", f"relative L2 error {score:.3g} eps {unit}{path} > {t.red_warn:g}"))
        share = ulp.share.two_or_more if ulp.kind == "diff" and not wider else None
        if share is not None and t.ulp2_share_fail is not None and share > t.ulp2_share_fail:
            reasons.append(
                ("fail", f"{100 * share:.1f}% of elements >= 2 ULP apart > {100 * t.ulp2_share_fail:g}%")
            )
        elif share is not None and t.ulp2_share_warn is not None and share > t.ulp2_share_warn:
            reasons.append(
                ("warn", f"{100 * share:.1f}% of elements >= 2 ULP apart > {100 * t.ulp2_share_warn:g}%")
            )
        # the reference script's cosine of two zero vectors is 0: equal values never fail on it
        equal = res.max_abs == 0
        if res.cosine is not None and res.cosine == res.cosine and res.cosine < t.cosine_fail and not equal:
            reasons.append(("fail", f"cosine {res.cosine:.6f} < {t.cosine_fail:g}"))
    verdict = worst_verdict(["pass", *(level for level, _ in reasons)])
    if st.nan_mismatch or st.inf_mismatch:
        score = float("inf")
    return Judgement(verdict, tuple(text for _, text in reasons), score, budget if wider else None)


def load_table(config: str | None, overrides: tuple[str, ...] = ()) -> ThresholdTable:
    """Defaults, then ``config`` (a JSON or TOML file), then ``overrides`` (``[FORMAT.]KEY=VALUE``)."""
    table = ThresholdTable()
    if config:
        if not os.path.isfile(config):
            problem = (
                "config file does not exist"
                if not os.path.exists(config)
                else "is a folder, not a config file"
                if os.path.isdir(config)
                else "is not a regular file (a device, FIFO or socket), so not a config file"
            )
            raise InputError(config, problem, "CONFIG_ERROR")
        table.load(config)
    for o in overrides:
        table.apply(o)
    table.check_order()
    return table
