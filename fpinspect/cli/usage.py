"""The one error every command raises for bad usage or unreadable input."""

from __future__ import annotations

import click


class UsageProblem(click.ClickException):
    """Bad usage or unreadable input: one sentence on stderr, exit status 2, no traceback."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"fpinspect: {self.message}", err=True)
