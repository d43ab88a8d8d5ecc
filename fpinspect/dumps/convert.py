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

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..numerics.chunks import CHUNK, chunk_ranges
from .datadump import MAPPING_FILE, read_mapping, resolve_raw_name
from .errors import InputError
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


def _write(path: Path, array: np.ndarray) -> None:
    """Save ``array`` chunk by chunk into a ``.npy`` (memory stays at one chunk)."""
    dtype = np.dtype(np.float32) if array.dtype.name in _WIDENED else array.dtype
    target = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=array.shape)
    flat_in, flat_out = array.reshape(-1), target.reshape(-1)
    for lo, hi in chunk_ranges(flat_in.size, CHUNK * 8):
        flat_out[lo:hi] = flat_in[lo:hi]
    target.flush()
    del target


def convert_folder(raw_dir: str | os.PathLike, out_dir: str | os.PathLike) -> ConvertResult:
    """Convert every raw dump under ``raw_dir`` into ``out_dir`` (created; files replaced).

    Raises :class:`InputError` if ``raw_dir`` is not a folder or holds no raw dump file; a
    raw file that cannot be read is listed in :attr:`ConvertResult.failed` and skipped.
    """
    root = os.fspath(raw_dir)
    if not os.path.isdir(root):
        raise InputError(
            root, "is not a folder" if os.path.exists(root) else "folder does not exist", "DATA_LOAD_ERROR"
        )
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
                if fresh:  # names are appended to mapping.csv: start it anew
                    out.mkdir(parents=True, exist_ok=True)
                    (out / MAPPING_FILE).unlink(missing_ok=True)
                    fresh = False
                for t in dump.inputs + dump.outputs:
                    target = stored_path(out, f"{parsed.dump}.{t.io}.{t.index}.npy")
                    _write(target, tensor_array(path, t))
                    result.written.append(str(target))
            except InputError as exc:
                result.failed.append((path, exc.problem))
                continue
            result.converted += 1
    if not result.converted and not result.failed:
        raise InputError(root, "holds no raw dump files", "DATA_LOAD_ERROR")
    return result
