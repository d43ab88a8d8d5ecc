"""The command-line options that choose which ops a comparison walks, shared by ``compare`` (the
CLI) and ``open`` (the inspector)."""

from __future__ import annotations

import click

fused_types_option = click.option(
    "--fused-types",
    "fused_types",
    multiple=True,
    metavar="TYPE[,TYPE...]",
    help="compare only fused ops of these op types, e.g. AscBackend,FusedAscBackend (repeatable; "
    "default: every fused op, UB/FE fusion results such as Conv2D included)",
)
compare_unfused_option = click.option(
    "--compare-unfused",
    is_flag=True,
    help="also compare every op fusion left alone with the op of the same name in the fusion-off run",
)


def type_list(values: tuple[str, ...]) -> list[str] | None:
    """``--fused-types`` values (repeatable, comma-separated) as one list; ``None`` if not given."""
    types = [t.strip() for v in values for t in v.split(",") if t.strip()]
    return types or None
