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
