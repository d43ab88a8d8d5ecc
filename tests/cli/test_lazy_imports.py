"""``fpinspect diff``, ``compare`` and ``--help`` import only what they use: not the graph readers (for
``diff``), the inspector, the experiments or torch (each costs a fraction of a second per process)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import fpinspect

#: Top-level packages or fpinspect modules a command must not import (by name prefix).
HEAVY = (
    "networkx",
    "textual",
    "google.protobuf",
    "torch",
    "fpinspect.tui",
    "fpinspect.experiments",
    "fpinspect.capture",
    "fpinspect.replay",
    "fpinspect.dumps.formats.graph",
    "fpinspect.dumps.engine.compare",
    "ml_dtypes",  # bfloat16 and float8 only: ~0.7 s with ml_dtypes 0.7
)


def _imported(*argv: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The ``heavy`` modules imported by one ``fpinspect`` process run with ``argv``, in a fresh
    interpreter."""
    code = textwrap.dedent(
        f"""
        import sys
        from fpinspect.cli import main
        sys.argv = ["fpinspect", *{list(argv)!r}]
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        heavy = {heavy!r}
        found = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
        print("IMPORTED", *found)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("IMPORTED")][-1]
    return line.split()[1:]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("pair")
    a = np.linspace(-2, 2, 1000, dtype=np.float16)
    np.save(d / "a.npy", a)
    np.save(d / "b.npy", np.nextafter(a, np.float16(9)))
    return str(d / "a.npy"), str(d / "b.npy")


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_diff_imports_nothing_heavy(pair, fmt):
    assert _imported("diff", "--format", fmt, *pair) == []


def test_diff_json_does_not_import_rich(pair):
    assert _imported("diff", "--format", "json", *pair, heavy=("rich",)) == []
    assert _imported("diff", *pair, heavy=("rich",)) != []  # the table does


#: What listing the commands must not import: the numerics (numba), the dumps, the inspector (but
#: for the module of its click commands, :mod:`fpinspect.tui.commands`), the experiments' runner and
#: results (numpy); the option lists need only constants.
HELP_HEAVY = (
    *HEAVY[:4],
    "numba",
    "numpy",
    "fpinspect.numerics",
    "fpinspect.dumps",
    "fpinspect.tui",
    "fpinspect.replay",
    "fpinspect.experiments.engine",
    "fpinspect.experiments.results",
)


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["open", "--help"], ["launch", "--help"]])
def test_help_imports_nothing_heavy(argv):
    found = _imported(*argv, heavy=HELP_HEAVY)
    assert [m for m in found if m not in ("fpinspect.tui", "fpinspect.tui.commands")] == []


def test_compare_json_imports_no_inspector_nor_rich_nor_networkx_nor_protobuf():
    """Nor protobuf, which only raw dumps and GE's text graphs need (the sample's dumps are
    ``.npy`` files, its graphs atc's JSON): ~20 ms of every compare process; nor ml_dtypes,
    which only bfloat16 and float8 data need (the sample's are float16)."""
    case = Path(fpinspect.__file__).parent / "sample_dumps" / "regression"
    argv = [
        "compare",
        *("--af-open-graph", str(case / "dumpgraph_af_open" / "Build.json")),
        *("--af-close-graph", str(case / "dumpgraph_af_close" / "Build.json")),
        *("--af-open-data", str(case / "datadump_af_open")),
        *("--af-close-data", str(case / "datadump_af_close")),
        *("--format", "json", "--jobs", "1"),
    ]
    assert (
        _imported(
            *argv,
            heavy=(
                "textual",
                "torch",
                "networkx",
                "fpinspect.tui",
                "fpinspect.experiments",
                "rich",
                "google.protobuf",
                "ml_dtypes",
            ),
        )
        == []
    )
