"""The command-line options of how a comparison is made and judged, derived from
:class:`~fpinspect.inspection.settings.CompareSettings` and shared by every command that compares
a run: the CLI's and the inspector's (``open``)."""

from __future__ import annotations

import functools

import click

from ..inspection.settings import FIELDS, REPLAY_CHOICES, CompareSettings, SettingsError

#: The most worst elements ``--worst`` lists: each costs memory and time in every pass (a hundred
#: thousand triple a large pair's time), and a list longer than this is no longer read.
MAX_WORST = 10_000


def _help(name: str, key: str = "help") -> str:
    return FIELDS[name].metadata[key]


def compare_options(*, replay: bool = False, worst: str | None = None):
    """The judging options of :class:`CompareSettings` (``--threshold``, ``--config``,
    ``--amplification``, ``--fused-types``, ``--compare-unfused``; ``--replay`` where the command
    replays, ``--worst`` with the help ``worst`` where it lists worst elements). The command
    receives them as one ``settings``; a bad threshold or config file is one sentence and exit
    status 2."""
    options = [
        click.option(
            "--threshold",
            "-t",
            "overrides",
            multiple=True,
            metavar="[DTYPE.]KEY=VALUE",
            help=_help("thresholds"),
        ),
        click.option("--config", type=click.Path(dir_okay=False), help=_help("thresholds", "config_help")),
        click.option("--amplification", type=float, default=None, help=_help("amplification")),
        click.option(
            "--fused-types", "fused_types", multiple=True, metavar="TYPE[,TYPE...]", help=_help("fused_types")
        ),
        click.option("--compare-unfused", is_flag=True, help=_help("compare_unfused")),
    ]
    if replay:
        options.append(
            click.option(
                "--replay",
                type=click.Choice(REPLAY_CHOICES),
                default=FIELDS["replay"].default,
                show_default=True,
                help=_help("replay"),
            )
        )
    if worst is not None:
        options.append(
            click.option(
                "--worst",
                type=click.IntRange(0, MAX_WORST),
                default=FIELDS["worst"].default,
                show_default=True,
                help=worst,
            )
        )
    names = ["overrides", "config", "amplification", "fused_types", "compare_unfused"]
    names += ["replay"] * replay + ["worst"] * (worst is not None)

    def decorate(command):
        @functools.wraps(command)
        def with_settings(*args, **kwargs):
            given = {name: kwargs.pop(name) for name in names}
            try:
                kwargs["settings"] = CompareSettings.from_options(**given)
            except SettingsError as exc:
                from .format import printable  # names read from files reach messages; rich only here

                click.echo(f"fpinspect: {printable(str(exc))}", err=True)
                raise click.exceptions.Exit(2) from None
            return command(*args, **kwargs)

        for option in reversed(options):
            with_settings = option(with_settings)
        return with_settings

    return decorate
