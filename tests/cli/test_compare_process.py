"""``fpinspect compare`` run inside a caller's process (tests, an embedding) leaves that process as it
found it: the cyclic garbage collector it pauses while it runs is on again afterwards."""

import gc
from pathlib import Path

from click.testing import CliRunner

import fpinspect
from fpinspect.cli import main


def test_compare_pauses_the_collector_only_while_it_runs(monkeypatch):
    case = Path(fpinspect.__file__).parent / "sample_dumps" / "regression"
    seen = []
    from fpinspect.dumps.engine import compare

    real = compare.DumpComparison.uncomputed

    def noted(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(compare.DumpComparison, "uncomputed", noted)
    assert gc.isenabled()
    result = CliRunner().invoke(
        main,
        [
            "compare",
            *("--af-open-graph", str(case / "dumpgraph_af_open" / "Build.json")),
            *("--af-close-graph", str(case / "dumpgraph_af_close" / "Build.json")),
            *("--af-open-data", str(case / "datadump_af_open")),
            *("--af-close-data", str(case / "datadump_af_close")),
            *("--format", "json", "--jobs", "1"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert seen and not any(seen)  # paused while the pairs were computed
    assert gc.isenabled()
