"""Task settings: a frozen dataclass per task whose defaults are the test plan's values.

Two profiles exist for every task: ``full`` (the plan's settings, meant for an accelerator)
and ``quick`` (the same structure scaled to finish well under a minute on a 2-core CPU).
Settings travel to the child process as JSON, so they round-trip through
:meth:`TaskSettings.to_dict` / :meth:`TaskSettings.from_dict` exactly.
:meth:`TaskSettings.with_overrides` applies ``fpinspect run``'s ``--seed`` and
``--set KEY=VALUE`` on top of a profile, checking each value against the field's type.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

PROFILES = ("quick", "full")
#: The largest seed (and integer setting): torch and numpy take 64-bit seeds.
MAX_SEED = 2**63 - 1

#: Fields holding float format names (one, or a tuple of them), checked against the registry.
DTYPE_FIELDS = ("dtype", "dtypes")


class SettingError(ValueError):
    """An override that cannot be applied; ``str()`` is one sentence naming the setting."""


def _tuples(value: Any) -> Any:
    """Lists (from JSON) back to tuples, nested ones included."""
    return tuple(_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _parse_scalar(name: str, text: str, like: Any) -> Any:
    """``text`` as a value of ``like``'s type (bool, int, float or str)."""
    text = text.strip()
    if isinstance(like, bool):
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise SettingError(f"setting {name!r} expects true or false, not {text!r}")
    if isinstance(like, int):
        try:
            return int(text)
        except ValueError:
            raise SettingError(f"setting {name!r} expects an integer, not {text!r}") from None
    if isinstance(like, float):
        try:
            return float(text)
        except ValueError:
            raise SettingError(f"setting {name!r} expects a number, not {text!r}") from None
    return text


def _conform(name: str, value: Any, like: Any) -> Any:
    """``value`` (parsed JSON) checked against the structure of ``like``: tuples
    element by element (an empty default accepts anything), numbers by type."""
    if isinstance(like, tuple):
        if not isinstance(value, (list, tuple)):
            raise SettingError(
                f"setting {name!r} expects a list like {json.dumps(_lists(like))}, not {value!r}"
            )
        proto = like[0] if like else None
        return tuple(v if proto is None else _conform(name, v, proto) for v in value)
    if isinstance(like, bool) or not isinstance(like, (int, float)):
        if isinstance(value, type(like)):
            return value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(like, int) and not float(value).is_integer():
            raise SettingError(f"setting {name!r} expects integers, not {value!r}")
        return type(like)(value)
    return _parse_scalar(name, str(value), like)


def _lists(value: Any) -> Any:
    return [_lists(v) for v in value] if isinstance(value, tuple) else value


def parse_value(name: str, text: str, like: Any) -> Any:
    """The value of ``--set name=text`` for a field whose current value is ``like``.

    Scalars take their field's type (``true``/``false`` for flags). A tuple field takes
    JSON (``[[8, 16], [37, 53]]``) or, when flat, comma-separated items (``512,1024``).
    """
    if not isinstance(like, tuple):
        return _parse_scalar(name, text, like)
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            return _conform(name, json.loads(stripped), like)
        except json.JSONDecodeError:
            raise SettingError(f"setting {name!r} expects a JSON list, and {text!r} is not one") from None
    proto = like[0] if like else ""
    if isinstance(proto, tuple):
        raise SettingError(f"setting {name!r} expects a JSON list like {json.dumps(_lists(like))}")
    items = [i for i in stripped.strip("()").split(",") if i.strip()]
    return tuple(_parse_scalar(name, i, proto) for i in items)


@dataclass(frozen=True)
class TaskSettings:
    """Fields every task has: the element ``dtype`` (a name from the numerics format
    registry, e.g. ``"float16"``) and the ``seed`` its inputs are drawn with."""

    dtype: str = "float16"
    seed: int = 1234

    #: Field overrides that turn the plan's settings into the quick profile.
    QUICK: ClassVar[Mapping[str, Any]] = {}
    #: Common fields this task does not read (``dtype`` where a task sweeps ``dtypes``):
    #: left out of ``fpinspect tasks`` and refused by ``--set``.
    UNUSED: ClassVar[tuple[str, ...]] = ()
    #: Fields that change the implementation under test, not the workload (a deliberately
    #: worse fused path): ``fpinspect baseline check`` compares runs that differ in them.
    IMPLEMENTATION: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def profile(cls, name: str) -> TaskSettings:
        """The settings of profile ``name`` (``"quick"`` or ``"full"``)."""
        if name == "full":
            return cls()
        if name == "quick":
            return dataclasses.replace(cls(), **cls.QUICK)
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")

    def work(self) -> float | None:
        """How much computing these settings ask for, in a unit of the task's own (stated
        where it is defined), so that ``work()`` of two profiles scales a time measured with
        one to the other; None where the task does not say."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready field values (tuples, nested ones included, become lists)."""
        return {f.name: _lists(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def workload(self) -> dict[str, Any]:
        """:meth:`to_dict` without the :attr:`IMPLEMENTATION` fields: what a baseline's runs
        and the run checked against it must share."""
        return {k: v for k, v in self.to_dict().items() if k not in self.IMPLEMENTATION}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSettings:
        """Inverse of :meth:`to_dict`; unknown keys are an error, missing keys take the
        plan's value."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown setting(s) for {cls.__name__}: {', '.join(unknown)}")
        return cls(**{k: _tuples(v) for k, v in data.items()})

    def with_overrides(self, seed: int | None = None, assignments: Sequence[str] = ()) -> TaskSettings:
        """A copy with ``seed`` and each ``KEY=VALUE`` of ``assignments`` applied (later
        ones win). Raises :class:`SettingError` (one sentence) for a malformed
        assignment, an unknown key, a value of the wrong type, an unknown float format
        or a combination the settings refuse."""
        current = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        changes: dict[str, Any] = {}
        if seed is not None:
            if not 0 <= seed <= MAX_SEED:
                raise SettingError(f"--seed must be an integer from 0 to 2**63 - 1, not {seed}")
            changes["seed"] = seed
        for item in assignments:
            key, sep, text = item.partition("=")
            key = key.strip()
            if not sep or not key:
                raise SettingError(f"--set expects KEY=VALUE, not {item!r}")
            if key in self.UNUSED:
                raise SettingError(f"this task does not read {key!r} (see its other settings)")
            if key not in current:
                known = [k for k in current if k not in self.UNUSED]
                raise SettingError(f"there is no setting {key!r}; the settings are {', '.join(known)}")
            changes[key] = parse_value(key, text, current[key])
            _check_range(key, changes[key])
        for key in DTYPE_FIELDS:
            if key in changes:
                _check_formats(key, changes[key])
        try:
            return dataclasses.replace(self, **changes)
        except (ValueError, TypeError) as exc:
            raise SettingError(f"these settings are refused: {exc}") from None


def _check_range(key: str, value: Any) -> None:
    """Every setting counts, sizes or seeds something: integers are not negative (and fit
    the 64-bit integers torch and numpy take), floats are finite."""
    for v in _leaves(value):
        if isinstance(v, bool):
            continue
        if isinstance(v, int) and v < 0:
            raise SettingError(f"setting {key!r} counts or sizes something and cannot be negative ({v})")
        if isinstance(v, int) and v > MAX_SEED:
            raise SettingError(f"setting {key!r} cannot exceed 2**63 - 1 ({v})")
        if isinstance(v, float) and not math.isfinite(v):
            raise SettingError(f"setting {key!r} must be a finite number, not {v}")


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, tuple):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _check_formats(key: str, value: Any) -> None:
    from fpinspect.numerics import float_format

    for name in value if isinstance(value, tuple) else (value,):
        try:
            float_format(name)
        except (KeyError, ValueError, TypeError):
            raise SettingError(
                f"setting {key!r}: {name!r} is not a float format name such as float16"
            ) from None
