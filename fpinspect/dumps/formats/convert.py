"""Convert raw dump folders to ``.npy`` files as ``msaccucmp.py convert`` names them (§2.3).

Each raw dump ``{type}.{name}.{ids}.{timestamp}`` becomes one ``.npy`` per tensor,
``{raw name}.{input|output}.{index}.npy``, in its storage layout and shape (no layout
conversion, as msaccucmp). Values numpy cannot save under their own type are widened exactly
as msaccucmp does: bfloat16 and the float8/float6/float4 formats to float32. File names of
255 characters or more go to a uuid name listed in the output folder's ``mapping.csv``.
Raw files named by a number are resolved through the input folder's ``mapping.csv``.
Buffers and workspaces are not written. Sub-folders (iterations) keep their relative paths.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...numerics.chunks import CHUNK, chunk_ranges
from ..errors import InputError
from .datadump import MAPPING_FILE, read_mapping, resolve_raw_name
from .npywrite import stored_path
from .rawdump import read_raw_header, tensor_array

#: Stored types numpy has no ``.npy`` spelling for (they save as raw bytes): written as float32.
_WIDENED = frozenset(
    {
        "bfloat16",
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e8m0fnu",
        "float6_e3m2fn",
        "float6_e2m3fn",
        "float4_e2m1fn",
    }
)


@dataclass
class ConvertResult:
    """What :func:`convert_folder` did: ``written`` ``.npy`` paths, ``failed`` ``(path, problem)``
    of raw files it could not read, and how many raw files it ``converted``."""

    written: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    converted: int = 0


class OutputError(Exception):
    """The output folder or a file in it cannot be written; ``str()`` is one sentence."""


def _write(out: Path, name: str, array: np.ndarray) -> Path:
    """Save ``array`` as the ``.npy`` called ``name`` in ``out`` (see :func:`stored_path`)
    chunk by chunk (memory stays at one chunk); returns its path.

    Written with ordinary writes into a temporary file renamed into place: a full disk is
    an :class:`OutputError` (a memory map would die by SIGBUS instead), and no incomplete
    file is left under the real name."""
    dtype = np.dtype(np.float32) if array.dtype.name in _WIDENED else array.dtype
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": array.shape}
    flat = array.reshape(-1)
    path, tmp = out / name, None
    try:
        path = stored_path(out, name)
        tmp = path.with_name(f".{path.name}.incomplete")
        with open(tmp, "wb") as f:
            np.lib.format.write_array_header_1_0(f, header)
            for lo, hi in chunk_ranges(flat.size, CHUNK * 8):
                f.write(np.ascontiguousarray(flat[lo:hi], dtype=dtype).data)
        os.replace(tmp, path)
    except OSError as exc:
        problem = exc.strerror or exc
        raise OutputError(f"cannot write {path}: {problem}; no incomplete file was left there.") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
    return path


def _check_out_dir(out_dir: Path) -> None:
    """Refuse, before any conversion, an output folder that cannot be made or written into."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the output folder {out_dir}: {exc.strerror or exc}.") from None
    try:
        os.close(os.open(out_dir / ".fpinspect-probe", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(out_dir / ".fpinspect-probe")
    except OSError as exc:
        raise OutputError(f"cannot write into the output folder {out_dir}: {exc.strerror or exc}.") from None


def _start_folder(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / MAPPING_FILE).unlink(missing_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write into the output folder {out}: {exc.strerror or exc}.") from None


def convert_folder(raw_dir: str | os.PathLike, out_dir: str | os.PathLike) -> ConvertResult:
    """Convert every raw dump under ``raw_dir`` into ``out_dir`` (created; files replaced).

    Raises :class:`InputError` if ``raw_dir`` is not a folder or holds no raw dump file,
    :class:`OutputError` if ``out_dir`` or a file in it cannot be written; a raw file that
    cannot be read is listed in :attr:`ConvertResult.failed` and skipped.
    """
    root = os.fspath(raw_dir)
    if not os.path.isdir(root):
        raise InputError(
            root, "is not a folder" if os.path.exists(root) else "folder does not exist", "DATA_LOAD_ERROR"
        )
    _check_out_dir(Path(out_dir))
    result = ConvertResult()
    for directory, _, names in sorted(os.walk(root)):
        mapping = read_mapping(directory)
        out = Path(out_dir) / os.path.relpath(directory, root)
        fresh = True
        for name in sorted(names):
            parsed = None if name.endswith(".npy") else resolve_raw_name(name, mapping)
            if parsed is None:
                continue
            path = os.path.join(directory, name)
            try:
                dump = read_raw_header(path)
                arrays = [(t, tensor_array(path, t)) for t in dump.inputs + dump.outputs]
                if fresh:  # names are appended to mapping.csv: start it anew
                    _start_folder(out)
                    fresh = False
                for t, array in arrays:
                    target = _write(out, f"{parsed.dump}.{t.io}.{t.index}.npy", array)
                    result.written.append(str(target))
            except InputError as exc:
                result.failed.append((path, exc.problem))
                continue
            result.converted += 1
    if not result.converted and not result.failed:
        raise InputError(root, "holds no raw dump files", "DATA_LOAD_ERROR")
    return result
