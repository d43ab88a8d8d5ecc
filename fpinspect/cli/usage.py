"""The one error every command raises for bad usage or unreadable input."""

from __future__ import annotations

import importlib.util

import click


class UsageProblem(click.ClickException):
    """Bad usage or unreadable input: one sentence on stderr, exit status 2, no traceback."""

    exit_code = 2

    def show(self, file=None) -> None:
        from ..reports.format import printable  # names read from files reach messages

        click.echo(f"fpinspect: {printable(self.message)}", err=True)


#: How to get PyTorch, for the commands that need it.
INSTALL_TORCH = "pip install 'fpinspect[experiments]'"


def torch_missing() -> bool:
    """Whether PyTorch is not installed (found without importing it)."""
    return importlib.util.find_spec("torch") is None


def require_torch(what: str) -> None:
    """Stop with one sentence when PyTorch, which ``what`` (a command) needs, is not installed."""
    if torch_missing():
        raise UsageProblem(f"{what} needs PyTorch; install it with {INSTALL_TORCH}.")


#: ``--model`` of the commands that run a capture again (``confirm``, ``switches``, ``repro``,
#: ``compare --confirm``); here, where importing it loads nothing of the capture package.
model_option = click.option(
    "--model",
    metavar="MODEL",
    help="run the capture again with this model (a demo or package.module:factory); a factory that "
    "capture.json names runs only when given here: a folder fpinspect reads never runs code",
)
