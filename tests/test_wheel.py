"""The wheel works on its own: built from a copy of the sources, installed into a fresh virtual
environment, ``fpinspect open`` (no arguments) finds the bundled sample there and the inspector
opens it. Offline: the build uses this environment's setuptools, and the fresh environment
takes the dependencies from this one's site-packages instead of an index."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Run in the fresh environment: the package and the sample come from it, the app opens the sample.
OPEN_THE_SAMPLE = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path

    import fpinspect
    from fpinspect.tui.app import AppSettings, make_app
    from fpinspect.dumps.runs.sources import SAMPLE, resolve

    prefix = Path(sys.prefix).resolve()
    assert Path(fpinspect.__file__).resolve().is_relative_to(prefix), fpinspect.__file__
    assert SAMPLE.is_relative_to(prefix), SAMPLE
    from fpinspect.dumps.engine.report_types import SavedReport
    from fpinspect.reports.html import render  # the page's templates come from the package
    assert "This report does not record its thresholds." in render(SavedReport(records=[]))
    app = make_app(AppSettings(resolve()))

    async def main():
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(1200):  # the sweep of the sample's pairs; at most two minutes
                await pilot.pause(0.1)
                insp = getattr(app.screen, "inspection", None)
                if insp is not None and insp.localisation is not None:
                    break
            print(len(insp.rows), ",".join(o.name for o in insp.localisation.introduced))

    asyncio.run(main())
    """
)


def _run(*args, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def test_the_wheel_ships_the_sample_and_opens_it(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "fpinspect", src / "fpinspect", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--wheel-dir",
        tmp_path / "dist",
        src,
    )
    (wheel,) = (tmp_path / "dist").glob("fpinspect-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    sample = {n for n in names if n.startswith("fpinspect/sample_dumps/")}
    assert {
        f"fpinspect/sample_dumps/{case}/dumpgraph_af_{side}/Build.json"
        for case in ("regression", "clean")
        for side in ("open", "close")
    } <= sample
    assert len([n for n in sample if n.endswith(".npy")]) > 100
    assert "fpinspect/tui/styles/app.tcss" in names
    assert {
        f"fpinspect/reports/templates/{n}" for n in ("comparison.html", "plan.html", "style.css")
    } <= names

    env = tmp_path / "env"
    _run(sys.executable, "-m", "venv", "--without-pip", env)
    python = env / "bin" / "python"
    site = Path(
        _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    )
    # the dependencies: this environment's packages, after the fresh environment's own
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        wheel,
    )

    assert _run(env / "bin" / "fpinspect", "--version", cwd=tmp_path).stdout.startswith("fpinspect, version")
    opened = _run(python, "-c", OPEN_THE_SAMPLE, cwd=tmp_path, timeout=240)
    assert opened.stdout.split() == ["5", "autofuse_2_Add_LayerNorm"]
