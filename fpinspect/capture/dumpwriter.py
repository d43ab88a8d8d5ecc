"""Write a datadump folder as ``msaccucmp.py convert`` leaves it, or as the device writes it.

``.npy`` mode (``ascend_formats.md`` §2.3): one ``.npy`` per tensor, named
``{type}.{name}.{task}.{stream}.{timestamp}.{input|output}.{i}.npy``. Raw mode (§2.2): one raw
dump file per op, ``{type}.{name}.{task}.{stream}.{timestamp}``, a ``DumpData`` header then
every payload (:func:`fpinspect.dumps.formats.rawdump.write_raw_dump`). In type and name ``.``, ``/``,
``\\`` and space are replaced by ``_``. Each executed op is one task; timestamps are a fixed
base plus the task number (µs), so captures are reproducible byte for byte. Names of 255
characters or more are stored under another name listed in ``mapping.csv``, as the tool
chain does (:func:`fpinspect.dumps.formats.npywrite.save_named`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..dumps.formats.datadump import normalise_name
from ..dumps.formats.npywrite import MAX_FILE_NAME, add_mapping, save_named
from ..dumps.formats.rawdump import RawPayload, write_raw_dump
from .storage import Desc

#: 2023-11-14 22:13:20 UTC in µs: a fixed, realistic 16-digit dump timestamp.
BASE_TIMESTAMP = 1_700_000_000_000_000
#: Every op runs on one stream, as a single-stream GE graph does.
STREAM_ID = 0


def _payload(array: np.ndarray, desc: Desc) -> RawPayload:
    origin_format = desc.origin_format if desc.origin is not None else None
    return RawPayload(array, desc.ge_dtype, desc.layout, desc.shape, desc.origin, origin_format)


class DumpWriter:
    """Writes the dumps of one run into ``folder``, one task per :meth:`write_op` call;
    ``raw`` writes raw dump files instead of ``.npy`` files."""

    def __init__(self, folder: Path, *, raw: bool = False):
        self.folder = folder
        self.raw = raw
        self.task = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write_op(
        self,
        op_type: str,
        op_name: str,
        inputs: list[np.ndarray],
        outputs: list[np.ndarray],
        input_descs: list[Desc] | None = None,
        output_descs: list[Desc] | None = None,
    ) -> None:
        """Dump one op execution: the stored arrays of its inputs and outputs and, for raw
        files (whose headers describe every tensor), their descriptions."""
        self.task += 1
        stem = f"{normalise_name(op_type)}.{normalise_name(op_name)}.{self.task}.{STREAM_ID}.{BASE_TIMESTAMP + self.task}"
        if self.raw:
            name = stem
            if len(stem) >= MAX_FILE_NAME:  # the device names such a dump by a number
                name = str(self.task)
                add_mapping(self.folder, name, stem)
            write_raw_dump(
                self.folder / name,
                op_name,
                list(map(_payload, inputs, input_descs)),
                list(map(_payload, outputs, output_descs)),
                dump_time=BASE_TIMESTAMP + self.task,
            )
            return
        for io, arrays in (("input", inputs), ("output", outputs)):
            for index, array in enumerate(arrays):
                save_named(self.folder, f"{stem}.{io}.{index}.npy", array)
