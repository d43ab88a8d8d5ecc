"""Where a command's report goes: checked before the work starts, written whole or not at all.

A report file is written to a temporary file beside it and renamed into place, so an
interrupted or failed write never leaves half a report under the real name. Standard output
is flushed inside the command, so a full disk or a closed pipe is one sentence, not a
traceback at interpreter exit.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Collection, Iterator
from typing import NoReturn

import msgspec

from .usage import UsageProblem


def echo(text: str = "", **kwargs) -> None:
    """``click.echo`` of text that holds names read from files (op names, regions, file names):
    their control characters shown escaped (:func:`~fpinspect.reports.format.printable`), the
    text's own line breaks kept."""
    import click

    from ..reports.format import printable

    click.echo(printable(text, keep="\n"), **kwargs)


def read_report(path: str) -> dict:
    """A saved ``compare --format json`` report (a JSON object); one sentence when it is missing,
    not a regular file (a FIFO is never waited on) or not readable JSON."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageProblem(f"report {path} is not a regular file.")
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except FileNotFoundError:
        raise UsageProblem(f"report {path} does not exist.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UsageProblem(f"report {path} is not a readable JSON report ({exc}).") from None
    if not isinstance(report, dict):
        raise UsageProblem(
            f"report {path} is not a JSON object: give a `fpinspect compare --format json` report."
        )
    return report


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


def check_new_folder(path: str, force: bool, names: Collection[str] | None = None) -> None:
    """Refuse, before any work, an ``--out`` folder whose files the command would overwrite: one
    that holds anything (or, with ``names``, any entry of those names) unless ``force``."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise UsageProblem(f"--out {path} is not a folder.")
    if force or not os.path.isdir(path):
        return
    try:
        held = sorted(n for n in os.listdir(path) if names is None or n in names)
    except OSError as exc:
        raise UsageProblem(f"--out {path} cannot be read ({exc.strerror or exc}).") from None
    if held:
        listed = ", ".join(held[:4]) + (", ..." if len(held) > 4 else "")
        raise UsageProblem(
            f"--out {path} already holds {listed}: give a new folder, or add --force to overwrite it."
        )


@contextlib.contextmanager
def report_file(path: str | None):
    """A text stream for the report: ``path`` written atomically, or standard output."""
    if path is None:
        try:
            yield sys.stdout
            sys.stdout.flush()
        except BrokenPipeError:
            stdout_closed()
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


def stdout_closed() -> NoReturn:
    """Stop, saying so, when standard output was closed before everything was written to it (its
    reader, ``head`` say, stopped early): the output is incomplete, and the status says it."""
    _quiet_stdout()
    raise UsageProblem("standard output was closed before all of the output was written.") from None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's own exit-time flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def indented_json(obj, *, plain: bool = False) -> str:
    """``json.dumps(json_clean(obj), indent=2)``, byte for byte, at the speed of msgspec's C encoder:
    ``obj`` with NaN and infinities as ``null`` and numpy scalars as numbers
    (:func:`~fpinspect.dumps.engine.pair.json_clean`).

    ``json.dumps`` with an indent falls back to its pure-Python encoder (a second per 10 000
    compare records), and even its C encoder spent half of a compare record's time spelling
    floats (``repr``: David Gay's bignum arithmetic). msgspec encodes and indents far faster and
    spells floats as ``repr`` does but for a few magnitudes, which are spelled again in its text
    (:func:`_respelled`). Text that is not printable ASCII (which ``json.dumps`` escapes and
    msgspec writes as it is, or refuses: lone surrogates, from file names ``os.fsdecode`` could
    not decode) and what msgspec cannot encode are written by ``json.dumps``.

    ``plain``: the caller vouches that ``obj`` holds only dicts with string keys, lists, tuples,
    strings, ints, floats, bools and ``None`` (a compare record: :meth:`~fpinspect.dumps.engine.report.
    Report.json_fields`), which msgspec then encodes as they are, without the walk that cleans
    them (a third of a small pair's report time). Anything else msgspec refuses (numpy scalars,
    subclasses) still comes out as ``json.dumps`` writes it.
    """
    from ..dumps.engine.pair import json_clean  # here: listing the commands imports no numpy

    try:
        text = msgspec.json.format(
            msgspec.json.encode(obj if plain else json_clean(obj, strict=True)), indent=2
        )
    except (ValueError, TypeError, RecursionError, msgspec.MsgspecError):
        text = None
    if text is None or not text.isascii() or b"\x7f" in text:
        return json.dumps(json_clean(obj), indent=2)
    return _respelled(text).decode()


#: Where msgspec spells a float otherwise than ``repr``: with an exponent (``1e-7``, ``1e16``;
#: ``repr``: ``1e-07``, ``1e+16``), and in the fixed notation it keeps from 1e-5 up to 1e-4
#: (``0.00001``; ``repr``: ``1e-05``). Each pattern begins with a literal, which ``re`` scans
#: for at the speed of a substring search (a pattern of either, or one for a whole number, is
#: ten times slower); they also find text inside strings, which :func:`_respelled` leaves alone.
_MSGSPEC_SPELLINGS = (re.compile(rb"e[-0-9]"), re.compile(rb"0\.0000"))
_JSON_NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?")


def _respelled(text: bytes) -> bytes:
    """msgspec's indented JSON ``text`` with every float it spells otherwise than ``repr``
    (:data:`_MSGSPEC_SPELLINGS`) spelled as ``repr`` does: ``float`` reads msgspec's shortest
    digits back as the same float. A number value stands after a space (``": "``, or an indented
    list item) or at the start, and ends the text or its line (a comma and a newline, or a
    newline): a string cannot hold a raw newline, so nothing inside one is taken for a number."""
    starts: dict[int, bytes] = {}
    for spelling in _MSGSPEC_SPELLINGS:
        for found in spelling.finditer(text):
            start = text.rfind(b" ", 0, found.start()) + 1
            if start in starts:
                continue
            number = _JSON_NUMBER.match(text, start)
            if number is None or number.end() <= found.start():
                continue
            end = number.end()
            if end == len(text) or text[end] == 10 or (text[end] == 44 and text[end + 1 : end + 2] == b"\n"):
                starts[start] = number.group()
    if not starts:
        return text
    parts, at = [], 0
    for start in sorted(starts):
        token = starts[start]
        parts += (text[at:start], repr(float(token)).encode())
        at = start + len(token)
    parts.append(text[at:])
    return b"".join(parts)


#: Items of a streamed list encoded at once (:func:`write_json_object`): a few hundred KiB of
#: text at a time, where one call per item cost a small pair's record a fifth of its writing.
BATCH = 256
#: What :func:`indented_json` writes around a list's items under the key ``""``: the items
#: between are indented as a list of a top-level object's field is.
_LIST_HEAD, _LIST_TAIL = '{\n  "": [\n', "\n  ]\n}"


def write_json_object(out, fields, batch: int = BATCH) -> None:
    """Write ``indented_json(dict(fields))`` to ``out``, where a field whose value is an
    iterator is written as a list, ``batch`` items at a time (the same text, without the
    whole object in memory); those items are ``plain`` (:func:`indented_json`). JSON strings
    hold no raw newline, so another field's indented text is nested by prefixing its lines.
    ``fields`` may be an iterator: each field is taken once the one before it is written."""
    out.write("{")
    written = False
    for i, (key, value) in enumerate(fields):
        out.write(f"{',' if i else ''}\n  {json.dumps(key)}: ")
        if isinstance(value, Iterator):
            empty = True
            while items := list(itertools.islice(value, batch)):
                text = indented_json({"": items}, plain=True)
                out.write(("[\n" if empty else ",\n") + text[len(_LIST_HEAD) : -len(_LIST_TAIL)])
                empty = False
            out.write("[]" if empty else "\n  ]")
        else:
            out.write(indented_json(value).replace("\n", "\n  "))
        written = True
    out.write("\n}\n" if written else "}\n")
