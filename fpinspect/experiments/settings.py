"""Task settings: a frozen dataclass per task whose defaults are the test plan's values.

Two profiles exist for every task: ``full`` (the plan's settings, meant for an accelerator)
and ``quick`` (the same structure scaled to finish well under a minute on a 2-core CPU).
Settings travel to the child process as JSON, so they round-trip through
:meth:`TaskSettings.to_dict` / :meth:`TaskSettings.from_dict` exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

PROFILES = ("quick", "full")


@dataclass(frozen=True)
class TaskSettings:
    """Fields every task has: the element ``dtype`` (a name from the numerics format
    registry, e.g. ``"float16"``) and the ``seed`` its inputs are drawn with."""

    dtype: str = "float16"
    seed: int = 1234

    #: Field overrides that turn the plan's settings into the quick profile.
    QUICK: ClassVar[Mapping[str, Any]] = {}

    @classmethod
    def profile(cls, name: str) -> TaskSettings:
        """The settings of profile ``name`` (``"quick"`` or ``"full"``)."""
        if name == "full":
            return cls()
        if name == "quick":
            return dataclasses.replace(cls(), **cls.QUICK)
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready field values (tuples become lists)."""
        return {
            f.name: list(v) if isinstance(v, tuple) else v
            for f in dataclasses.fields(self)
            for v in [getattr(self, f.name)]
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSettings:
        """Inverse of :meth:`to_dict`; unknown keys are an error, missing keys take the
        plan's value."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown setting(s) for {cls.__name__}: {', '.join(unknown)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})
