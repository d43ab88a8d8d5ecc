"""How a comparison is made and judged, declared once: :class:`CompareSettings`.

Every command that compares a run (``compare``, ``open``, ``report``, ``switches``, ``confirm``,
``repro``, ``explore``) takes the same judging options, derived from this declaration by
:func:`fpinspect.reports.options.compare_options`, and hands the same settings down: to
:class:`~fpinspect.dumps.engine.compare.DumpComparison` (:meth:`CompareSettings.walk`), to
:class:`~fpinspect.inspection.pipeline.Inspection` (:attr:`~CompareSettings.replay`) and to the
inspector. So a configured ``compare`` and the inspector agree on the same run.

Importing it imports nothing of the comparison (listing the commands, ``--help``, stays light):
``None`` stands for the comparison's own defaults, the verdict thresholds and the localisation's
amplification."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..dumps.engine.verdict import ThresholdTable

#: ``--replay``: which fused ops have their original ops replayed on their own inputs.
REPLAY_CHOICES = ("failing", "all", "none")


class SettingsError(ValueError):
    """A judging option that cannot be used: one sentence naming the option or file."""


@dataclass(frozen=True)
class CompareSettings:
    """How a comparison is made and judged. Each field's ``metadata["help"]`` is its option's help;
    its default is the option's default. The table is never changed once loaded."""

    #: dtype-aware verdict thresholds: the defaults, then ``--config FILE``, then ``--threshold``
    #: (``None``: the defaults)
    thresholds: ThresholdTable | None = field(
        default=None,
        metadata={
            "help": "override a verdict threshold, e.g. red_fail=2 or float32.red_fail=1000 (repeatable)",
            "config_help": "JSON or TOML file of thresholds",
        },
    )
    #: ``None``: the localisation's (:data:`~fpinspect.dumps.engine.localise.AMPLIFICATION`)
    amplification: float | None = field(
        default=None,
        metadata={
            "help": "an output error this many times its worst input error counts as introduced "
            "(default: the localisation's, 10)"
        },
    )
    #: the fused op types compared (``None``: every fused op)
    fused_types: tuple[str, ...] | None = field(
        default=None,
        metadata={
            "help": "compare only fused ops of these op types, e.g. AscBackend,FusedAscBackend (repeatable; "
            "default: every fused op, UB/FE fusion results such as Conv2D included)"
        },
    )
    compare_unfused: bool = field(
        default=False,
        metadata={
            "help": "also compare every op fusion left alone with the op of the same name in the fusion-off run"
        },
    )
    replay: str = field(
        default="failing",
        metadata={
            "help": "replay the original ops of these fused ops on their own inputs (failing: failing and "
            "warned ops) and localise by that evidence"
        },
    )
    #: how many of the worst elements each record lists
    worst: int = field(default=5, metadata={"help": "how many of the worst elements each record lists"})

    @classmethod
    def from_options(
        cls,
        *,
        overrides: tuple[str, ...] = (),
        config: str | None = None,
        fused_types: tuple[str, ...] = (),
        **given: Any,
    ) -> CompareSettings:
        """The settings the command-line options give: ``overrides`` (``--threshold``, repeatable),
        ``config`` (``--config``), ``fused_types`` (``--fused-types``, repeatable, comma-separated)
        and the other fields by name. Raises :class:`SettingsError` for a bad threshold or config."""
        from ..dumps.engine.verdict import load_table
        from ..dumps.errors import InputError

        try:
            table = load_table(config, tuple(overrides))
        except (ValueError, InputError) as exc:
            raise SettingsError(str(exc)) from None
        types = tuple(t.strip() for v in fused_types for t in v.split(",") if t.strip())
        return cls(thresholds=table, fused_types=types or None, **given)

    def changed(self) -> list[str]:
        """The options that set these settings apart from the defaults, as a user spells them."""
        default = CompareSettings()
        options = {
            "thresholds": "--threshold/--config",
            "amplification": "--amplification",
            "fused_types": "--fused-types",
            "compare_unfused": "--compare-unfused",
            "replay": "--replay",
            "worst": "--worst",
        }
        return [
            option
            for name, option in options.items()
            if (
                self._thresholds_json() != default._thresholds_json()
                if name == "thresholds"
                else getattr(self, name) != getattr(default, name)
            )
        ]

    def _thresholds_json(self) -> dict:
        from ..dumps.engine.verdict import ThresholdTable

        return (self.thresholds or ThresholdTable()).to_json()

    def not_for_saved(self, path: str) -> str | None:
        """Why these settings cannot apply to ``path``, a report judged when it was saved (one
        sentence), or ``None`` when they are the defaults."""
        changed = self.changed()
        if not changed:
            return None
        return (
            f"report {path} was judged when it was saved, and {', '.join(changed)} apply to a run "
            "compared now: give the run's folder instead."
        )

    def walk(self) -> dict[str, Any]:
        """The keyword arguments of :class:`~fpinspect.dumps.engine.compare.DumpComparison` that choose the
        ops compared and judge them (the inspector's screens pass them on as they are)."""
        return {
            "fused_types": None if self.fused_types is None else list(self.fused_types),
            "compare_unfused": self.compare_unfused,
            "thresholds": self.thresholds,
            "amplification": self.amplification,
        }

    def comparison_options(self, *, kl: bool = True) -> dict[str, Any]:
        """:meth:`walk` and the records' worst elements: every keyword of ``DumpComparison``
        these settings decide (``kl``: whether the records carry msaccucmp's KL divergence)."""
        return {**self.walk(), "worst": self.worst, "kl": kl}


#: The fields, by name, for the options derived from them.
FIELDS = {f.name: f for f in fields(CompareSettings)}
