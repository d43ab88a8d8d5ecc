"""Index a datadump folder by op name: ``.npy`` files (``msaccucmp.py convert``), raw dumps, or both.

File names are parsed, never globbed (``ascend_formats.md`` §2):

    {op_type}.{op_name}.{id}.{id}...{timestamp}....{input|output}.{index}.npy
    {op_type}.{op_name}.{...}.{input|output}.{index}.{d0xd1x...}.npy      (``convert -f FORMAT``)
    {op_type}.{op_name}.{id}.{id}...{timestamp}[...{id}]                  (a raw dump: every tensor)

The dumper has already replaced ``.``, ``/``, ``\\`` and space in type and name by ``_`` (and
nothing else: a name may keep ``:`` or non-ASCII letters), so field 0 is the type and field 1
the name. The fields between the name and ``input|output``
are ids and the timestamp; how many there are depends on the writer (task, stream, FFTS+
context, thread, device ...). Names too long for the file system are stored under a uuid
name listed in ``mapping.csv`` (``new_name,original_name``) in the same folder. A raw dump file
(:mod:`.rawdump`) stands for each input and output its header lists, under the same names and
rules as the ``.npy`` files converted from it.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import InputError, missing
from .rawdump import RawTensor, read_raw_header

IO_KINDS = ("input", "output")
MAPPING_FILE = "mapping.csv"

_DATA_ERROR = "DATA_LOAD_ERROR"
_NORMALISE = re.compile(r"[./\\ ]")
#: The id and timestamp fields of a dump name, joined by dots: each one ``[A-Za-z0-9_-]+``.
_FIELDS = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")
_DIGITS = re.compile(r"[0-9]+")
_SHAPE_FIELD = re.compile(r"([0-9]+(x[0-9]+)*)?")


def normalise_name(name: str) -> str:
    """The name as the dumper writes it in file names: ``.``, ``/``, ``\\`` and space -> ``_``."""
    return _NORMALISE.sub("_", name)


def name_clashes(names) -> dict[str, list[str]]:
    """``{file-name form: [op names]}`` for op names that the dumper writes alike (``a.b``,
    ``a/b``, ``a b`` and ``a_b`` all become ``a_b``): their dumps cannot be told apart."""
    by_form: dict[str, list[str]] = {}
    for name in names:
        by_form.setdefault(normalise_name(name), []).append(name)
    return {form: group for form, group in by_form.items() if len(group) > 1}


@dataclass(frozen=True)
class DumpFile:
    """One dumped tensor: ``io`` (``"input"``/``"output"``) number ``index`` of ``op_name``.

    ``op_type`` and ``op_name`` are as written in the file name (normalised). ``timestamp``
    is the dump time in the file name (µs for every known writer). ``candidates`` is how
    many files in the chosen iteration folder dump this same tensor; the one returned by
    :meth:`DumpIndex.lookup` is the latest of them (status ``MULTIPLE_DUMPS`` when > 1).
    """

    path: str
    op_type: str
    op_name: str
    io: str
    index: int
    timestamp: int
    candidates: int = 1
    #: the raw dump it comes from, ``type.name.ids...timestamp``: a raw file and the ``.npy``
    #: files converted from it have the same one
    dump: str = ""
    #: for a tensor of a raw dump file: its header entry (``None`` for a ``.npy`` file)
    raw: RawTensor | None = None
    #: for a raw dump file whose header could not be read: why (every tensor asked of it has it)
    problem: str | None = None


def parse_dump_name(name: str, path: str = "") -> DumpFile | None:
    """Parse a converted dump file name (with or without ``.npy``); ``None`` if it is not one.

    Accepted: ``type.name.F2...Fk.{input|output}.{index}[.{shape}][.npy]`` where ``type`` and
    ``name`` are non-empty and hold none of ``/``, ``\\`` or space (which the dumper
    replaced; ``:`` and non-ASCII letters stay as they are), every ``F`` matches ``[A-Za-z0-9_-]+`` and at least
    one ``F`` is all digits. The timestamp is the all-digit ``F`` with the most digits, the last one on
    ties: the 16-digit µs stamp wins over task, stream and thread ids in every known layout.
    ``shape`` is the ``d0xd1x...`` field ``convert -f`` appends.
    """
    stem = name[:-4] if name.endswith(".npy") else name
    fields = stem.split(".")
    if len(fields) >= 2 and fields[-2] in IO_KINDS and _DIGITS.fullmatch(fields[-1]):
        head, io, index = fields[:-2], fields[-2], fields[-1]
    elif (
        len(fields) >= 3
        and fields[-3] in IO_KINDS
        and _DIGITS.fullmatch(fields[-2])
        and _SHAPE_FIELD.fullmatch(fields[-1])
    ):
        head, io, index = fields[:-3], fields[-3], fields[-2]
    else:
        return None
    # type and name are non-empty and hold nothing the dumper replaces (neither holds a dot:
    # one search of both); the other fields checked in one match of them joined
    if len(head) < 3 or not head[0] or not head[1] or _NORMALISE.search(head[0] + head[1]):
        return None
    if not _FIELDS.fullmatch(".".join(head[2:])):
        return None
    numeric = [f for f in head[2:] if f.isdigit()]  # ASCII only (matched above): isdigit is [0-9]+
    if not numeric:
        return None
    timestamp = max(reversed(numeric), key=len)  # reversed: the last of the longest
    return DumpFile(
        path=path,
        op_type=head[0],
        op_name=head[1],
        io=io,
        index=int(index),
        timestamp=int(timestamp),
        dump=".".join(head),
    )


def parse_raw_name(name: str) -> DumpFile | None:
    """Parse a raw dump file name, ``type.name.F2...Fk`` with the last ``F`` all digits (no
    extension); ``io`` is ``""`` and ``index`` -1 (the file holds every tensor of the op)."""
    fields = name.split(".")
    if not fields or not _DIGITS.fullmatch(fields[-1]):
        return None
    parsed = parse_dump_name(f"{name}.output.0")
    return None if parsed is None else replace(parsed, io="", index=-1)


def read_mapping(folder: str, problems: list[str] | None = None) -> dict[str, str]:
    """``mapping.csv`` of ``folder`` as ``{stored_name: original_name}`` (empty if absent).

    Rows with fewer than two columns are ignored; surrounding spaces are stripped. A row
    that cannot be parsed (an unterminated quote, a field longer than a file name could be)
    is skipped and described in ``problems``: one bad row never hides the others.
    """
    path = os.path.join(folder, MAPPING_FILE)
    if not os.path.isfile(path):
        return {}
    out: dict[str, str] = {}
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            rows = csv.reader(f)
            line = 0
            while True:
                line += 1
                try:
                    row = next(rows)
                except StopIteration:
                    break
                except csv.Error as exc:
                    if problems is not None:
                        problems.append(f"{path}: row {line} skipped ({exc})")
                    continue
                if len(row) >= 2 and row[0].strip():
                    out[row[0].strip()] = row[1].strip()
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})", _DATA_ERROR) from None
    return out


def resolve_raw_name(name: str, mapping: dict[str, str]) -> DumpFile | None:
    """:func:`parse_raw_name` of ``name``, else of its original name in ``mapping``."""
    parsed = parse_raw_name(name)
    if parsed is None and name in mapping:
        parsed = parse_raw_name(mapping[name])
    return parsed


def raw_entries(path: str, parsed: DumpFile) -> list[DumpFile]:
    """One :class:`DumpFile` per tensor of the raw dump at ``path`` (named as ``parsed``), or a
    single entry carrying the ``problem`` when its header cannot be read."""
    try:
        dump = read_raw_header(path)
    except InputError as exc:
        return [replace(parsed, path=path, problem=exc.problem)]
    return [replace(parsed, path=path, io=t.io, index=t.index, raw=t) for t in dump.inputs + dump.outputs]


def resolve_name(name: str, mapping: dict[str, str], path: str = "") -> DumpFile | None:
    """Parse ``name`` directly, else through ``mapping``; the result has ``path``.

    The mapping key is either the whole file name (``{uuid}.npy`` -> original file name) or
    its first dot field (``{number}.output.0.npy`` where ``{number}`` names a raw dump; the
    rest of the name is appended to the original).
    """
    parsed = parse_dump_name(name, path)
    if parsed is not None:
        return parsed
    if name in mapping:
        return parse_dump_name(mapping[name], path)
    key, sep, rest = name.partition(".")
    if sep and key in mapping:
        return parse_dump_name(f"{mapping[key]}.{rest}", path)
    return None


def _iteration_key(rel: str) -> tuple:
    """Sort key of an iteration folder: path parts, numeric parts compared as numbers."""
    return tuple((0, int(p), "") if _DIGITS.fullmatch(p) else (1, 0, p) for p in Path(rel).parts)


def _tensor_key(f: DumpFile) -> tuple[str, str, int]:
    return f.op_name, f.io, f.index


@dataclass
class DumpIndex:
    """The dump files of one iteration folder, keyed by (normalised op name, io, index).

    ``folder`` is the folder given to :meth:`scan`; ``iterations`` the iteration folders under
    it that hold dump files, as paths relative to it (``"."`` for ``folder`` itself), sorted
    with numeric parts compared as numbers; ``iteration`` the one indexed. ``files`` are all
    parsed tensors of that iteration (each with its ``candidates`` count; a raw dump file
    gives one per tensor, or one with a ``problem``); ``skipped`` the ``.npy`` files there
    whose names could not be parsed, directly or via ``mapping.csv``; ``problems`` sentences
    about what was ignored (folders that are not iterations, unreadable ``mapping.csv`` rows).
    """

    folder: str
    iterations: list[str]
    iteration: str
    files: list[DumpFile]
    skipped: list[str]
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._latest: dict[tuple[str, str, int], DumpFile] = {}
        self._unreadable: dict[str, DumpFile] = {}  # op name -> latest raw file with a bad header
        keys = [_tensor_key(f) for f in self.files]
        if len(set(keys)) == len(keys) and all(f.problem is None for f in self.files):
            # each tensor dumped once, every header readable (the usual folder): one candidate
            # each, nothing to order (5 of a file's 10 us of indexing went to counting and sorting)
            self.files = [f if f.candidates == 1 else replace(f, candidates=1) for f in self.files]
            self._latest = dict(zip(keys, self.files))
            return
        # A raw dump and the .npy converted from it are one dump, counted once.
        counts = Counter(key for key, _ in {(_tensor_key(f), f.dump) for f in self.files if not f.problem})
        self.files = [
            f if f.candidates == (n := counts.get(_tensor_key(f), 1)) else replace(f, candidates=n)
            for f in self.files
        ]
        for f in sorted(self.files, key=lambda f: (f.timestamp, f.dump, f.raw is not None, f.path)):
            if f.problem is not None:
                self._unreadable[f.op_name] = f
            else:  # the later (timestamp, dump name) wins; of one dump, the raw file
                self._latest[_tensor_key(f)] = f

    @classmethod
    def scan(cls, folder: str | os.PathLike, iteration: str | None = None) -> DumpIndex:
        """Index ``folder``.

        An iteration is ``folder`` itself (the common flat case) or a folder under it whose
        name is a number (the ``{data_index}`` leaf of a raw dump's
        ``{time}/{device}/{model}/{model_id}/{data_index}`` tree, or plain numbered
        subfolders) that directly holds dump files. Other folders holding dump files
        (``backup/``) are ignored and named in :attr:`problems`.
        ``iteration=None`` picks the last in :attr:`iterations` order (the highest data
        index); otherwise it must equal one relative path or the last part of exactly one.
        Raises :class:`InputError` (code ``DATA_LOAD_ERROR``) if ``folder`` is not a readable
        folder, holds no dump file, or ``iteration`` matches none or several.
        """
        root = os.fspath(folder)
        if not os.path.exists(root):
            raise InputError(root, missing(root, "folder"), _DATA_ERROR)
        if not os.path.isdir(root):
            raise InputError(root, "is a file, not a dump folder", _DATA_ERROR)
        problems: list[str] = []
        groups = {}
        unreadable: dict[str, str] = {}
        for rel, names in dump_folders(root, unreadable).items():
            if rel == "." or _DIGITS.fullmatch(Path(rel).name):
                groups[rel] = names
            else:
                problems.append(f"{os.path.join(root, rel)}: ignored, its name is not an iteration number")
        problems += [f"{folder}: {why}, ignored" for folder, why in unreadable.items()]
        if not groups:
            raise InputError(root, "holds no dump files (neither .npy files nor raw dumps)", _DATA_ERROR)
        iterations = sorted(groups, key=_iteration_key)
        chosen = iterations[-1] if iteration is None else _pick_iteration(root, iterations, iteration)
        directory = os.path.normpath(os.path.join(root, chosen))
        mapping = read_mapping(directory, problems)
        files, skipped = [], []
        prefix = os.path.join(directory, "")  # + name: os.path.join(directory, name), for a file name
        for name in groups[chosen]:
            path = prefix + name
            if not name.endswith(".npy"):
                raw = resolve_raw_name(name, mapping)
                files += raw_entries(path, raw) if raw is not None else []
                continue
            parsed = resolve_name(name, mapping, path)
            if parsed is None:
                skipped.append(path)
            else:
                files.append(parsed)
        return cls(
            folder=root,
            iterations=iterations,
            iteration=chosen,
            files=files,
            skipped=skipped,
            problems=problems,
        )

    def lookup(self, op_name: str, io: str, index: int) -> DumpFile | None:
        """The dump of ``io`` number ``index`` of op ``op_name`` (a graph name; normalised here).

        With several candidates, the one with the latest timestamp (then the greatest path)
        is returned; its ``candidates`` says how many there were. ``None`` if there is none.
        """
        if io not in IO_KINDS:
            raise ValueError(f"io must be 'input' or 'output', not {io!r}")
        key = (normalise_name(op_name), io, index)
        found, unreadable = self._latest.get(key), self._unreadable.get(key[0])
        if unreadable is not None and (found is None or unreadable.timestamp > found.timestamp):
            return replace(unreadable, io=io, index=index, candidates=1 + (found.candidates if found else 0))
        return found


def _is_dump_name(name: str) -> bool:
    """A ``.npy`` file, or a name that can be a raw dump (its last dot field all digits,
    which also covers the bare numbers ``mapping.csv`` resolves)."""
    return name.endswith(".npy") or name.rpartition(".")[2].isdigit()


def dump_folders(root: str, unreadable: dict[str, str] | None = None) -> dict[str, list[str]]:
    """``{relative folder: sorted dump file names}`` for every folder holding dump files.

    A folder under ``root`` that cannot be listed goes into ``unreadable`` (``{folder: why}``)
    where that is given, and the others are still read; ``root`` itself, or any folder when
    ``unreadable`` is ``None``, raises :class:`InputError`."""

    def onerror(exc: OSError) -> None:
        if unreadable is None or os.path.normpath(exc.filename or root) == os.path.normpath(root):
            raise exc
        unreadable[exc.filename] = f"cannot be read ({exc.strerror or exc})"

    groups: dict[str, list[str]] = {}
    try:
        walk = list(os.walk(root, onerror=onerror))
    except OSError as exc:
        raise InputError(
            exc.filename or root, f"cannot be read ({exc.strerror or exc})", _DATA_ERROR
        ) from None
    for directory, _, names in walk:
        npys = sorted(n for n in names if _is_dump_name(n))
        if npys:
            groups[Path(os.path.relpath(directory, root)).as_posix()] = npys
    return groups


def _pick_iteration(root: str, iterations: list[str], wanted: str) -> str:
    """The iteration equal to ``wanted``, else the only one whose last part equals it."""
    wanted_posix = Path(wanted).as_posix()
    if wanted_posix in iterations:
        return wanted_posix
    matches = [it for it in iterations if Path(it).name == wanted_posix]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(iterations)
    if not matches:
        raise InputError(root, f"has no iteration folder {wanted!r} (available: {listed})", _DATA_ERROR)
    raise InputError(
        root,
        f"has several iteration folders named {wanted!r}; give one of: {', '.join(matches)}",
        _DATA_ERROR,
    )
