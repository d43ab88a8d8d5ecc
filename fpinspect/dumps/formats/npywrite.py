"""Write dump ``.npy`` files under msaccucmp's names, long names through ``mapping.csv``."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np

from .datadump import MAPPING_FILE

#: File names of this many characters or more are stored under another name.
MAX_FILE_NAME = 255


def add_mapping(folder: Path, stored: str, original: str) -> None:
    """Append ``stored,original`` to ``folder``'s ``mapping.csv`` (how readers find the real name)."""
    with open(Path(folder) / MAPPING_FILE, "a", encoding="utf-8") as f:
        f.write(f"{stored},{original}\n")


def stored_path(folder: Path, name: str) -> Path:
    """Where the ``.npy`` called ``name`` goes in ``folder``: a name of :data:`MAX_FILE_NAME`
    characters or more is replaced by a uuid3 name listed in ``mapping.csv``, as
    ``msaccucmp.py convert`` does."""
    if len(name) >= MAX_FILE_NAME:
        stored = f"{uuid.uuid3(uuid.NAMESPACE_URL, name).hex}.npy"
        add_mapping(folder, stored, name)
        name = stored
    return Path(folder) / name


def save_named(folder: Path, name: str, array: np.ndarray) -> Path:
    """Save ``array`` as the ``.npy`` called ``name`` in ``folder`` (see :func:`stored_path`)."""
    path = stored_path(folder, name)
    # order="C", not np.ascontiguousarray: that one makes a 0-d array 1-d, and the graph says ()
    np.save(path, np.asarray(array, order="C"), allow_pickle=False)
    return path
