"""Open one dumped tensor, whether it is a ``.npy`` file or a tensor inside a raw dump file."""

from __future__ import annotations

import numpy as np

from ...numerics.chunks import NpyFile
from ..errors import InputError
from .datadump import DumpFile
from .ge_decode import TensorDesc
from .npyio import as_array, open_npy
from .rawdump import RAW_LOAD_ERROR, tensor_array, tensor_file


def _check(f: DumpFile) -> None:
    if f.problem is not None:
        raise InputError(f.path, f.problem, RAW_LOAD_ERROR)


def open_dump(f: DumpFile) -> NpyFile:
    """A chunked reader of the tensor (nothing read yet). :class:`InputError` with code
    ``NPY_LOAD_ERROR`` / ``RAW_LOAD_ERROR`` / ``FILE_NOT_FOUND`` when it cannot be read."""
    _check(f)
    return tensor_file(f.path, f.raw) if f.raw is not None else open_npy(f.path)


def load_dump(f: DumpFile, opened: NpyFile) -> np.ndarray:
    """The whole tensor, memory-mapped read-only; ``opened`` is what :func:`open_dump` returned
    for ``f`` (its header is not read again)."""
    return tensor_array(f.path, f.raw) if f.raw is not None else as_array(opened)


def dump_desc(f: DumpFile | None, graph: TensorDesc | None) -> TensorDesc | None:
    """How the dumped bytes are laid out: a raw file's header (written by the device) over
    the graph's description; a ``.npy`` file has only the graph's."""
    return f.raw.desc(graph) if f is not None and f.raw is not None else graph
