"""``fpinspect convert``: a header that lies about its shape is one row, an output folder that
cannot be written is one sentence, and a full disk leaves no incomplete ``.npy``."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.dumps.formats.dump_data import message_classes
from fpinspect.dumps.formats.ge_types import GE_DTYPES
from fpinspect.dumps.formats.rawdump import RawPayload, write_raw_dump

TS = 1700000000000001


def _good(folder, name="A", elements=1024):
    folder.mkdir(parents=True, exist_ok=True)
    array = np.arange(elements, dtype=np.float32)
    write_raw_dump(folder / f"Add.{name}.3.44.{TS}", name, [], [RawPayload(array, "DT_FLOAT", "ND")])
    return array


def _lying_header(folder, shape):
    """A raw dump whose one output claims ``shape`` with a payload of 0 bytes."""
    header = message_classes()["DumpData"](version="2.0", op_name="Big")
    entry = header.output.add()
    entry.data_type = {v: k for k, v in GE_DTYPES.items()}["DT_FLOAT16"]
    entry.shape.dim.extend(shape)
    entry.size = 0
    blob = header.SerializeToString()
    (folder / f"Add.Big.3.44.{TS}").write_bytes(struct.pack("<Q", len(blob)) + blob)


@pytest.mark.parametrize("shape", [[2**32, 2**32], [2**63, 2]])
def test_a_header_whose_shape_does_not_fit_its_size_is_one_failed_file(tmp_path, shape):
    raw = tmp_path / "raw"
    expected = _good(raw)
    _lying_header(raw, shape)
    result = CliRunner().invoke(main, ["convert", str(raw), str(tmp_path / "out")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "Add.Big.3.44" in result.stderr and "Converted 1 raw dump files into 1 .npy files" in result.stdout
    assert np.array_equal(np.load(tmp_path / "out" / f"Add.A.3.44.{TS}.output.0.npy"), expected)


@pytest.mark.parametrize("where", ["below_a_file", "not_writable"])
def test_an_output_folder_that_cannot_be_written_is_one_sentence(tmp_path, where):
    raw = tmp_path / "raw"
    _good(raw)
    if where == "below_a_file":
        (tmp_path / "file").write_text("x")
        out = tmp_path / "file" / "out"
    else:
        out = "/proc/fpinspect-out" if os.path.isdir("/proc/self") else None
        if out is None:
            pytest.skip("needs a /proc file system to stand in for a read-only one")
    result = CliRunner().invoke(main, ["convert", str(raw), str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.startswith(f"fpinspect: cannot create the output folder {out}: ")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full, a device that is always full")
def test_a_full_disk_stops_with_one_sentence_and_no_incomplete_npy(tmp_path):
    raw = tmp_path / "raw"
    _good(raw, elements=1 << 16)
    out = tmp_path / "out"
    out.mkdir()
    target = out / f"Add.A.3.44.{TS}.output.0.npy"
    # the file being written lies on a full device (where convert writes it before its rename)
    (out / f".{target.name}.incomplete").symlink_to("/dev/full")
    result = CliRunner().invoke(main, ["convert", str(raw), str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip() == (
        f"fpinspect: cannot write {target}: No space left on device; no incomplete file was left there."
    )
    assert [p.name for p in out.iterdir()] == []


def _can_mount_tmpfs(path) -> bool:
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


def test_a_real_full_disk_is_not_a_sigbus(tmp_path):
    raw = tmp_path / "raw"
    _good(raw, elements=1 << 20)  # 4 MiB onto a 1 MiB file system
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _can_mount_tmpfs(disk):
        pytest.skip("mounting a small tmpfs needs root")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fpinspect", "convert", str(raw), str(disk / "out")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        left = sorted(p.name for p in (disk / "out").iterdir())
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    assert done.returncode == 2, done.stderr
    assert "No space left on device" in done.stderr and left == []
