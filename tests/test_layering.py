"""The layers import downward only, and the pure core (numerics, dumps) works without torch and
without textual."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_core_imports_neither_torch_nor_textual():
    code = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "textual"):
                    raise ImportError("blocked: " + name)
                return None

        sys.meta_path.insert(0, Block())
        import numpy as np
        import fpinspect.numerics as n
        import fpinspect.dumps
        import fpinspect.dumps.engine.pair, fpinspect.dumps.formats.graph, fpinspect.dumps.formats.datadump, fpinspect.dumps.formats.layouts
        import fpinspect.replay, fpinspect.replay.evaluate
        import fpinspect.store
        import fpinspect.cli
        import fpinspect.legacy
        s = n.error_stats(np.ones(4, np.float16), np.ones(4, np.float16))
        assert s.ulp.max == 0
        bad = [m for m in sys.modules if m.split(".")[0] in ("torch", "textual")]
        assert not bad, bad
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def _lint_imports(cwd, pythonpath=None) -> subprocess.CompletedProcess:
    """``lint-imports`` with this repository's contracts (pyproject.toml), on the ``fpinspect``
    package found first on ``pythonpath``."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    script = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(script), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def test_layers_import_downward_only():
    out = _lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 kept, 0 broken" in out.stdout


@pytest.mark.parametrize(
    "module, upward",
    [
        ("numerics/metrics.py", "from ..dumps.formats import graph"),
        ("dumps/engine/pair.py", "from ...cli import render"),
        # inside dumps: the engine never imports the run trees, the readers never the engine
        ("dumps/engine/plan.py", "from ..runs import runtree"),
        ("dumps/formats/graph.py", "from ..engine import verdict"),
        # inside a function counts too: the layer would still need the one above to work
        ("experiments/registry.py", "def _later():\n    from ..tui import model"),
        ("capture/storage.py", "from ..experiments import events"),
        # the front ends are siblings: neither imports the other
        ("tui/widgets/worst.py", "from ...cli import render"),
        ("cli/render.py", "def _later():\n    from ..tui import model"),
        ("reports/format.py", "from ..cli import render"),
    ],
)
def test_the_layer_check_catches_an_upward_import(tmp_path, module, upward):
    """A copy of the package with one import added against the layers, or between the front
    ends, must break a contract."""
    copy = tmp_path / "fpinspect"
    shutil.copytree(ROOT / "fpinspect", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / module, "a", encoding="utf-8") as f:
        f.write(f"\n\n{upward}  # noqa\n")
    out = _lint_imports(tmp_path, pythonpath=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert ", 0 broken" not in out.stdout
    importer = "fpinspect." + module.removesuffix(".py").replace("/", ".")
    assert importer in out.stdout


def test_experiments_load_no_front_end_and_no_dumps():
    """Importing the test-plan layer (as its child process does) loads neither rich, networkx,
    the dumps layer nor a front end."""
    code = textwrap.dedent(
        """
        import sys
        import fpinspect.experiments.engine, fpinspect.experiments.registry, fpinspect.experiments.output
        import fpinspect.experiments.child
        heavy = ("rich", "networkx", "textual", "fpinspect.dumps", "fpinspect.cli", "fpinspect.tui")
        bad = [m for m in sys.modules if m.startswith(heavy)]
        assert not bad, bad
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
