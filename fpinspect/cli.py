"""Command-line entry points. Thin: parse, call a layer below, render."""

from __future__ import annotations

import json
import os
import sys

import click

from . import __version__


class UsageProblem(click.ClickException):
    """Bad usage or unreadable input: one sentence on stderr, exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"fpinspect: {self.message}", err=True)


def _existing_file(path: str, what: str) -> None:
    if not os.path.exists(path):
        raise UsageProblem(f"{what} {path} does not exist.")
    if os.path.isdir(path):
        raise UsageProblem(f"{what} {path} is a folder, not a file.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fpinspect")
def main() -> None:
    """Find where operator fusion changed your numbers.

    Compare fusion-on and fusion-off dumps, diff any two tensors with ULP-aware
    statistics, and run the fusion precision test plan.
    """


@main.command()
@click.argument("a", metavar="A.npy")
@click.argument("b", metavar="B.npy")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table for people, json (one object) for scripts")
@click.option("--worst", default=10, show_default=True, help="how many of the worst elements to list")
@click.option("--jobs", "-j", default=1, show_default=True, help="threads for large files")
@click.option("--max-ulp", type=int, default=None,
              help="exit with status 1 when the largest ULP difference exceeds this (or NaN/inf differ)")
def diff(a: str, b: str, fmt: str, worst: int, jobs: int, max_ulp: int | None) -> None:
    """Compare two .npy files element by element (mode 2).

    B is the reference side. Reports the reference script's trio (cosine, max absolute,
    max relative error), ULP statistics, msaccucmp and msprobe metrics, special-value
    counts and the worst elements. Exit status: 0 compared, 1 over --max-ulp, 2 bad input.
    """
    from .dumps.pair import compare_npy
    from .render import console, pair_report

    _existing_file(a, "file")
    _existing_file(b, "file")
    res = compare_npy(a, b, jobs=max(1, jobs), worst=max(0, worst))
    if fmt == "json":
        click.echo(json.dumps(res.to_json(), indent=2))
    else:
        console().print(pair_report(res, a, b))
    if not res.compared and any(s in res.status for s in ("NPY_LOAD_ERROR", "FILE_NOT_FOUND")):
        if fmt == "json":
            click.echo(f"fpinspect: {res.message}", err=True)
        sys.exit(2)
    if max_ulp is not None and res.compared:
        u = res.metrics["ulp"]["max"]
        if (u is not None and u > max_ulp) or res.stats.nan_mismatch or res.stats.inf_mismatch:
            sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
