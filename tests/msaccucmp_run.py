"""Run msprobe's msaccucmp (the engine of ``msprobe compare -m offline_data``) as a script:
``python msaccucmp_run.py compare -m ... -g ... -f ... -cf ... -out ...``.

msprobe 26.2.0 reads the header of a raw dump through CANN's ``libascend_dump_parser.so``
(``msaccucmp/dump_parse/big_dump_data.py``, ``ParseDumpProtoToJson``: the ``DumpData`` header
as JSON). Where that library cannot be found, this stands in for it: the same header decoded
with protobuf and written as the same JSON (proto field names, enums as numbers, 64-bit
integers as numbers). Nothing else of msprobe is replaced."""

import os
import runpy
import sys

import msprobe
from google.protobuf import json_format

from fpinspect.dumps.formats.dump_data import message_classes

MSACCUCMP = os.path.join(os.path.dirname(msprobe.__file__), "msaccucmp")
sys.path.insert(0, MSACCUCMP)  # msaccucmp imports its modules from its own folder

from dump_parse import big_dump_data  # noqa: E402

#: The 64-bit fields of DumpData, which protobuf's JSON writes as strings.
INT64 = {"size", "dump_time", "dim", "output_index", "address", "offset", "dim_start", "dim_end"}


def cann_parser_found() -> bool:
    try:
        big_dump_data.BigDumpDataParser.find_shared_library(
            "libascend_dump_parser.so", "../../../adump/lib64"
        )
    except OSError:
        return False
    return True


def _numbers(value, key=None):
    if isinstance(value, dict):
        return {k: _numbers(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v, key) for v in value]
    return int(value) if key in INT64 and isinstance(value, str) else value


def _parse_dump_to_json(self):
    with open(self.dump_file_path, "rb") as f:
        header = f.read(int.from_bytes(f.read(8), "little"))
    message = message_classes()["DumpData"].FromString(header)
    self.dump_json_data = _numbers(
        json_format.MessageToDict(message, preserving_proto_field_name=True, use_integers_for_enums=True)
    )


if __name__ == "__main__":
    if not cann_parser_found():
        big_dump_data.BigDumpDataParser._parse_dump_to_json = _parse_dump_to_json
    sys.argv = [os.path.join(MSACCUCMP, "msaccucmp.py"), *sys.argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
