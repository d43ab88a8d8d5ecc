"""The line under the compare table that says where the dumps were read from."""

from __future__ import annotations

from click.testing import CliRunner
from network import build_network
from test_compare_cli import flags

from fpinspect.cli import main


def test_dumps_read_from_the_folders_themselves_are_named_so(tmp_path):
    r = CliRunner().invoke(main, ["compare", *flags(build_network(tmp_path))])
    assert r.exit_code == 0
    assert "dumps read from the dump folders themselves" in r.output
    assert "fusion-on ." not in r.output


def test_the_table_fits_its_headers_and_causes():
    """120 columns (a pipe's width): no header cut ("verdi…"), "more accurate" apart from the status."""
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps" / "more_accurate"
    r = CliRunner().invoke(main, ["compare", str(sample)])
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if "fused op:output" in line)
    assert "verdict" in header and "…" not in header
    assert "more accurate OK" in r.output
