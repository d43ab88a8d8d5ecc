"""Where a command's report goes: checked before the work starts, written whole or not at all.

A report file is written to a temporary file beside it and renamed into place, so an
interrupted or failed write never leaves half a report under the real name. Standard output
is flushed inside the command, so a full disk or a closed pipe is one sentence, not a
traceback at interpreter exit.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Iterator

import msgspec

from .usage import UsageProblem


def check_destination(path: str | None) -> None:
    """Refuse, before any work, a report path that cannot be written: a folder, a device or
    FIFO (``/dev/full``), a missing or read-only folder."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageProblem(f"output {path} is a folder, not a file.")
    if os.path.lexists(path):
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise UsageProblem(f"output {path} cannot be used ({exc.strerror or exc}).") from None
        if not stat.S_ISREG(mode):
            raise UsageProblem(f"output {path} is not a regular file; give a file path.")
    if not os.path.isdir(folder):
        raise UsageProblem(f"output folder {folder} does not exist.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageProblem(f"output folder {folder} is not writable.")


@contextlib.contextmanager
def report_file(path: str | None):
    """A text stream for the report: ``path`` written atomically, or standard output."""
    if path is None:
        try:
            yield sys.stdout
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
            raise SystemExit(1) from None
        except OSError as exc:
            _quiet_stdout()
            raise UsageProblem(
                f"cannot write the report to standard output ({exc.strerror or exc})."
            ) from None
        return
    check_destination(path)
    folder, name = os.path.split(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would have made it
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageProblem(f"cannot write the report to {path} ({exc.strerror or exc}).") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's own exit-time flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def indented_json(obj) -> str:
    """``json.dumps(obj, indent=2)``, byte for byte, at the speed of msgspec's C encoder.

    ``json.dumps`` with an indent falls back to its pure-Python encoder (a second per 10 000
    compare records), and even its C encoder spends half of a compare record's time spelling
    floats (``repr``: David Gay's bignum arithmetic). msgspec encodes and indents far faster,
    spelling every float from 1e-4 to 1e16 and every printable ASCII string as ``json.dumps``
    does; :func:`_as_dumps_spells` hands it the rest already spelled. What msgspec cannot take
    (NaN and infinities, which ``json.dumps`` writes but JSON has not; numpy scalars; keys that
    are not plain strings) and lone surrogates (undecodable file names, kept by
    ``os.fsdecode``, which msgspec refuses) are written by ``json.dumps`` itself.
    """
    try:
        return msgspec.json.format(msgspec.json.encode(_as_dumps_spells(obj)), indent=2).decode()
    except (_Unspelled, msgspec.DecodeError, RecursionError):
        return json.dumps(obj, indent=2)


class _Unspelled(Exception):
    """A value :func:`_as_dumps_spells` leaves to ``json.dumps``."""


def _as_dumps_spells(obj):
    """``obj`` (dicts, lists, tuples, strings, numbers, ``None``) with every float and string
    msgspec spells unlike ``json.dumps`` replaced by ``json.dumps``'s text (:class:`msgspec.Raw`):
    floats below 1e-4 or from 1e16 on (``repr`` writes ``1e-05`` and ``1e+16``), strings with
    anything but printable ASCII (``json.dumps`` escapes it, msgspec writes it as UTF-8).
    Raises :class:`_Unspelled` for anything else. A record holds a hundred values, nearly all
    plain: those are taken as they stand, without a call of their own."""
    kind = type(obj)
    if kind is dict:
        out = {}
        for k, v in obj.items():
            if type(k) is not str or not k.isascii() or "\x7f" in k:
                raise _Unspelled
            t = type(v)
            plain = (
                t is int
                or t is bool
                or v is None
                or (t is float and (v == 0 or 1e-4 <= abs(v) < 1e16))
                or (t is str and v.isascii() and "\x7f" not in v)
            )
            out[k] = v if plain else _as_dumps_spells(v)
        return out
    if kind is list or kind is tuple:
        return [_as_dumps_spells(v) for v in obj]
    if kind is float:
        if obj == 0 or 1e-4 <= abs(obj) < 1e16:
            return obj
        if not math.isfinite(obj):
            raise _Unspelled
        return msgspec.Raw(repr(obj).encode())
    if kind is str:
        return obj if obj.isascii() and "\x7f" not in obj else msgspec.Raw(json.dumps(obj).encode())
    if kind is int or kind is bool or obj is None:
        return obj
    raise _Unspelled


def write_json_object(out, fields: list[tuple[str, object]]) -> None:
    """Write ``indented_json(dict(fields))`` to ``out``, where a field whose value is an
    iterator is written as a list, one item at a time (the same text, without the whole
    object in memory). JSON strings hold no raw newline, so each item's indented text is
    nested by prefixing its lines."""
    out.write("{")
    for i, (key, value) in enumerate(fields):
        out.write(f"{',' if i else ''}\n  {json.dumps(key)}: ")
        if isinstance(value, Iterator):
            empty = True
            for item in value:
                out.write(("[\n    " if empty else ",\n    ") + indented_json(item).replace("\n", "\n    "))
                empty = False
            out.write("[]" if empty else "\n  ]")
        else:
            out.write(indented_json(value).replace("\n", "\n  "))
    out.write("\n}\n" if fields else "}\n")
