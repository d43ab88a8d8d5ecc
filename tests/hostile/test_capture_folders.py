"""A capture folder received from someone else is data: reading it never runs code, and the
commands that write next to one never overwrite what is there without being told.

The malicious ``capture.json`` files name factories that would run code if imported and called:
``pytest:main`` (runs the folder's own ``conftest.py``), ``os:abort``, ``builtins:breakpoint``, and
a module of the folder's own that leaves a marker when imported. Each command runs in a child
process, in the capture folder (where ``module:factory`` is looked up), so that an abort or a
debugger prompt cannot take the test session with it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fpinspect

SAMPLE = Path(fpinspect.__file__).parent / "sample_dumps" / "regression"
PAYLOADS = ["pytest:main", "os:abort", "builtins:breakpoint", "evilmod:make"]
MARKER = "MARKER"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="the capture commands need torch"
)


def fpinspect_in(folder: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(fpinspect.__file__).parent.parent)}
    return subprocess.run(
        [sys.executable, "-m", "fpinspect", *args],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def hostile_capture(tmp_path):
    """``hostile_capture(model)``: the regression sample, its capture.json naming ``model``, with a
    conftest.py and an evilmod.py that each leave MARKER when run."""

    def make(model: str) -> Path:
        folder = tmp_path / "capture"
        shutil.copytree(SAMPLE, folder)
        spec = json.loads((folder / "capture.json").read_text())
        (folder / "capture.json").write_text(json.dumps({**spec, "model": model}))
        touch = f"import pathlib\npathlib.Path({str(folder / MARKER)!r}).touch()\n"
        (folder / "conftest.py").write_text(touch)
        (folder / "evilmod.py").write_text(touch + "def make():\n    raise RuntimeError('no model here')\n")
        return folder

    return make


@pytest.mark.parametrize("model", PAYLOADS)
@pytest.mark.parametrize("command", [["confirm", "."], ["switches", ".", "--for", "inductor"]])
def test_a_rerun_of_a_factory_only_the_file_names_is_refused(hostile_capture, model, command):
    folder = hostile_capture(model)
    r = fpinspect_in(folder, *command)
    assert not (folder / MARKER).exists()
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "(Pdb)" not in r.stdout
    assert r.stderr.strip().splitlines() == [
        f"fpinspect: capture.json names the model factory {model}, and fpinspect runs no code on a "
        f"file's word: if you trust it, name it yourself with --model {model}."
    ]


@pytest.mark.parametrize("model", PAYLOADS)
def test_switches_and_repro_without_a_rerun_import_nothing(hostile_capture, model, tmp_path):
    folder = hostile_capture(model)
    r = fpinspect_in(folder, "switches", ".")
    assert r.returncode == 0, r.stderr
    assert "AUTOFUSE_FLAGS" in r.stdout
    assert "no Inductor switches (--for inductor)" in r.stderr and f"--model {model}" in r.stderr
    r = fpinspect_in(folder, "repro", ".", "autofuse_2_Add_LayerNorm", "--out", str(tmp_path / "bundle"))
    assert r.returncode == 0, r.stderr
    assert "no repro_torch.py" in r.stderr and f"--model {model}" in r.stderr
    assert (tmp_path / "bundle" / "repro.py").is_file()
    assert not (tmp_path / "bundle" / "repro_torch.py").exists()
    assert not (folder / MARKER).exists()


def test_a_factory_named_on_the_command_line_runs(hostile_capture):
    folder = hostile_capture("evilmod:make")
    r = fpinspect_in(folder, "confirm", ".", "--model", "evilmod:make")
    assert (folder / MARKER).exists()  # the user vouched for it
    assert r.returncode == 2 and "evilmod:make() raised RuntimeError: no model here" in r.stderr


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("seed", 10**23, "seed 100000000000000000000000 is not between 0 and 4294967295"),
        ("seed", -1, "seed -1 is not between 0 and 4294967295"),
        ("dtype", "float8", "dtype 'float8' is not one of float16, bfloat16, float32"),
        ("device", "tpu", "device 'tpu' is not one of cpu, cuda"),
    ],
)
def test_a_capture_json_with_values_out_of_range_is_one_sentence(tmp_path, field, value, says):
    from click.testing import CliRunner

    from fpinspect.cli import main

    folder = tmp_path / "capture"
    shutil.copytree(SAMPLE, folder)
    spec = json.loads((folder / "capture.json").read_text())
    (folder / "capture.json").write_text(json.dumps({**spec, field: value}))
    r = CliRunner().invoke(main, ["confirm", str(folder)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert says in r.stderr


def test_confirm_does_not_wait_on_a_capture_json_that_is_a_fifo(tmp_path):
    folder = tmp_path / "capture"
    shutil.copytree(SAMPLE, folder)
    (folder / "capture.json").unlink()
    os.mkfifo(folder / "capture.json")
    r = fpinspect_in(folder, "confirm", ".", timeout=60)  # fails by timing out where it would block
    assert r.returncode == 2
    assert r.stderr.strip() == "fpinspect: capture.json is not a regular file."


def test_capture_refuses_an_out_that_holds_a_capture(tmp_path):
    folder = tmp_path / "capture"
    shutil.copytree(SAMPLE, folder)
    before = sorted(p.name for p in (folder / "datadump_af_open").iterdir())
    r = fpinspect_in(tmp_path, "capture", "transformer", "--out", str(folder), "--unfuse", "2")
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"fpinspect: --out {folder} already holds capture.json, datadump_af_close, datadump_af_open, "
        "dumpgraph_af_close, ...: give a new folder, or add --force to overwrite it."
    )
    assert sorted(p.name for p in (folder / "datadump_af_open").iterdir()) == before


def test_repro_refuses_an_out_that_holds_files(tmp_path):
    out = tmp_path / "bundle"
    out.mkdir()
    (out / "repro.py").write_text("# mine\n")
    r = fpinspect_in(tmp_path, "repro", str(SAMPLE), "autofuse_2_Add_LayerNorm", "--out", str(out))
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"fpinspect: --out {out} already holds repro.py: give a new folder, or add --force to overwrite it."
    )
    assert (out / "repro.py").read_text() == "# mine\n"
    r = fpinspect_in(tmp_path, "repro", str(SAMPLE), "autofuse_2_Add_LayerNorm", "--out", str(out), "--force")
    assert r.returncode == 0, r.stderr
    assert (out / "repro.py").read_text() != "# mine\n"


def test_capture_refuses_a_seed_torch_cannot_take(tmp_path):
    from click.testing import CliRunner

    from fpinspect.cli import main

    r = CliRunner().invoke(main, ["capture", "mlp", "--out", str(tmp_path / "c"), "--seed", str(10**23)])
    assert r.exit_code == 2
    assert (
        "Invalid value for '--seed': 100000000000000000000000 is not in the range 0<=x<=4294967295."
        in r.stderr
    )
    assert not (tmp_path / "c").exists()
