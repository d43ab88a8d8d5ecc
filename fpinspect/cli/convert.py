"""``fpinspect convert``: raw device dumps -> ``.npy`` files under msaccucmp's names."""

from __future__ import annotations

import sys

import click

from .usage import UsageProblem


@click.command("convert")
@click.argument("raw_dir", type=click.Path(file_okay=False))
@click.argument("out_dir", type=click.Path(file_okay=False))
def convert_command(raw_dir: str, out_dir: str) -> None:
    """Convert the raw dump files under RAW_DIR into .npy files in OUT_DIR.

    Each raw dump becomes one .npy per input and output, named as msaccucmp.py convert
    names them ({raw name}.{input|output}.{index}.npy, long names through mapping.csv), in
    its storage layout; bfloat16 and float8 data are saved as float32, as msaccucmp does.
    Sub-folders keep their paths. Exit status: 0 all converted, 1 some raw files could not
    be read (each named on stderr), 2 bad input or an OUT_DIR that cannot be written (a
    full disk stops the conversion; no incomplete .npy is left).
    """
    from ..dumps.errors import InputError
    from ..dumps.formats.convert import OutputError, convert_folder

    try:
        result = convert_folder(raw_dir, out_dir)
    except (InputError, OutputError) as exc:
        raise UsageProblem(str(exc)) from None
    for path, problem in result.failed:
        click.echo(f"fpinspect: {path}: {problem}", err=True)
    click.echo(
        f"Converted {result.converted} raw dump files into {len(result.written)} .npy files in {out_dir}."
    )
    if result.failed:
        click.echo(f"{len(result.failed)} raw dump files could not be read.", err=True)
        sys.exit(1)
