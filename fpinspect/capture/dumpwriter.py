"""Write a datadump folder as ``msaccucmp.py convert`` leaves it (``ascend_formats.md`` §2).

One ``.npy`` per tensor, named ``{type}.{name}.{task}.{stream}.{timestamp}.{input|output}.{i}.npy``
with ``.``, ``/``, ``\\`` and space in type and name replaced by ``_``. Each executed op is one
task; timestamps are a fixed base plus the task number (µs), so captures are reproducible
byte for byte. Names of 255 characters or more are stored under a uuid3 name listed in
``mapping.csv``, as msaccucmp does.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np

from ..dumps.datadump import MAPPING_FILE, normalise_name

#: 2023-11-14 22:13:20 UTC in µs: a fixed, realistic 16-digit dump timestamp.
BASE_TIMESTAMP = 1_700_000_000_000_000
#: Every op runs on one stream, as a single-stream GE graph does.
STREAM_ID = 0
MAX_FILE_NAME = 255


class DumpWriter:
    """Writes the dumps of one run into ``folder``, one task per :meth:`write_op` call."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.task = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write_op(
        self, op_type: str, op_name: str, inputs: list[np.ndarray], outputs: list[np.ndarray]
    ) -> None:
        self.task += 1
        stem = f"{normalise_name(op_type)}.{normalise_name(op_name)}.{self.task}.{STREAM_ID}.{BASE_TIMESTAMP + self.task}"
        for io, arrays in (("input", inputs), ("output", outputs)):
            for index, array in enumerate(arrays):
                self._save(f"{stem}.{io}.{index}.npy", array)

    def _save(self, name: str, array: np.ndarray) -> None:
        if len(name) >= MAX_FILE_NAME:
            stored = f"{uuid.uuid3(uuid.NAMESPACE_URL, name).hex}.npy"
            with open(self.folder / MAPPING_FILE, "a", encoding="utf-8") as f:
                f.write(f"{stored},{name}\n")
            name = stored
        np.save(self.folder / name, np.ascontiguousarray(array), allow_pickle=False)
