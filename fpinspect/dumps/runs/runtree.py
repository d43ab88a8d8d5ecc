"""Run trees: the dump folders of a whole run (ranks × graphs × steps), found, labelled and paired.

A datadump of one run is rarely one folder. GE writes
``{dump_path}/{time}/{device_id}/{model_name}/{model_id}/{data_index}/``: a ``device_id`` per rank,
a ``model_name``/``model_id`` per compiled graph, a ``data_index`` per step. msprobe writes
``{dump_path}/step{k}/rank{r}/dump_tensor_data/``. Two forms hold one folder of dumps per device and
no graph or step level: GE's single-op dump ``{dump_path}/{time}/{device_id}/`` and the adump
"dump stream" ``{dump_path}/{device_id}/``, whose files ``{type}.{name}.{dump_number}.{task_id}.
{stream_id}.{timestamp}`` carry a process-wide dump counter (each op's latest dump is its latest
step, as :class:`~.datadump.DumpIndex` picks it). A *leaf* is a folder that directly holds dump
files; :func:`scan_tree` labels each with its rank, graph and step, read from the folder names
from the leaf upwards, so the user may point anywhere inside such a tree (at ``{dump_path}``, at
one ``{device_id}``, or at one leaf). Folders of neither layout are steps only (today's plain
numbered iteration folders), and a flat folder (or the one folder holding dumps) is one leaf with
no label. A tree is read as the layout most of its leaves fit: a folder that fits none (a backup
copy ``1.bak``, a stray folder) is left out and said, as is an older copy of a leaf (the same
rank, graph and step under an earlier GE ``{time}`` folder).

:func:`pair_trees` pairs the leaves of a fusion-on and a fusion-off tree, rank with rank, graph
with graph, step with step, and says for every leaf it leaves out why (:class:`Scope`). Its
defaults never hide data: every rank and every graph, at the latest step both trees hold.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.report_types import ComparedPair, Introduced, RunScope, RunSummary, Skipped, Summary
from ..errors import InputError, missing
from ..formats.datadump import dump_folders

_DIGITS = re.compile(r"\d+")
_MSPROBE_STEP = re.compile(r"step(\d+)")
_MSPROBE_RANK = re.compile(r"rank(\d+)")
_TIME_FOLDER = re.compile(r"\d{14}")  # YYYYMMDDHHMMSS
#: an adump dump-stream file: type.name.dump_number.task_id.stream_id.timestamp[.FFTSPLUS.…]
_ADUMP_NAME = re.compile(r"[^.]+\.[^.]+(\.\d+){4}(\.FFTSPLUS(\.\d+){3})?(\.(input|output)\.\d+.*)?")
_DATA_ERROR = "DATA_LOAD_ERROR"


@dataclass(frozen=True)
class Leaf:
    """One folder of dump files: ``folder`` is the tree's root as given, ``rel`` the leaf's path
    under it (``"."``: the root itself); ``rank``, ``graph`` and ``step`` its labels (``None``
    where the layout has no such level)."""

    folder: str
    rel: str
    rank: str | None = None
    graph: str | None = None
    step: str | None = None

    @property
    def key(self) -> tuple[str | None, str | None]:
        """What pairs a leaf with its counterpart in the other tree, but for the step."""
        return self.rank, self.graph

    def label(self) -> str:
        """``rank 0, graph ge_default/1, step 3``; the folder for a leaf with no label."""
        parts = [f"{name} {value}" for name, value in self.fields().items() if value is not None]
        return ", ".join(parts) if parts else self.rel

    def fields(self) -> dict[str, str | None]:
        return {"rank": self.rank, "graph": self.graph, "step": self.step}


@dataclass
class RunTree:
    """The leaves found under ``root`` and the layout they were read as: ``ge`` (GE datadump),
    ``msprobe``, ``device`` (one folder per device: GE's single-op dump, adump's dump stream),
    ``steps`` (numbered iteration folders) or ``flat`` (one folder)."""

    root: str
    layout: str
    leaves: list[Leaf]
    #: rank folders that hold no dump file: ``{rank: folder}`` (GE and device layouts)
    empty_ranks: dict[str, str] = field(default_factory=dict)
    #: folders under the root that could not be listed: ``{folder: why}``
    unreadable: dict[str, str] = field(default_factory=dict)
    #: folders holding dumps that were left out: ``{folder: why}`` (one that fits no level of the
    #: layout the rest of the tree has, such as a backup copy ``1.bak``; an older copy of a leaf)
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def ranks(self) -> list[str]:
        return sorted_labels({leaf.rank for leaf in self.leaves if leaf.rank is not None})


def scan_tree(root: str | os.PathLike) -> RunTree:
    """The leaves of the dump tree at ``root``, labelled (see the module docstring).

    Raises :class:`~.errors.InputError` (``DATA_LOAD_ERROR``) when ``root`` is missing, not a
    folder, unreadable, holds no dump file, or holds them in folders most of which fit no layout
    (``/``); a folder under it that cannot be read is named in :attr:`RunTree.unreadable`, one
    left out in :attr:`RunTree.left_out`.
    """
    root = os.fspath(root)
    if not os.path.exists(root):
        raise InputError(root, missing(root, "folder"), _DATA_ERROR)
    if not os.path.isdir(root):
        raise InputError(root, "is a file, not a dump folder", _DATA_ERROR)
    unreadable: dict[str, str] = {}
    folders = dump_folders(root, unreadable)
    rels = list(folders)
    if not rels:
        raise InputError(root, "holds no dump files (neither .npy files nor raw dumps)", _DATA_ERROR)
    base = Path(os.path.abspath(root))
    parts = {rel: (base / rel).resolve().parts if rel != "." else base.parts for rel in rels}
    best = None  # the layout most folders fit (the first of equals); the others are odd ones
    for layout, label, device_depth in _LAYOUTS:
        labelled = {rel: label(parts[rel], folders[rel]) for rel in rels}
        fits = [rel for rel in rels if labelled[rel] is not None]
        if fits and (best is None or len(fits) > len(best[1])):
            best = layout, fits, labelled, device_depth
    if best is not None and 2 * len(best[1]) >= len(rels):
        layout, fits, labelled, device_depth = best
        leaves = [Leaf(root, rel, *labelled[rel]) for rel in fits]
        empty = _empty_device_folders(root, fits, device_depth) if device_depth is not None else {}
        left_out = _odd_folders(root, rels, fits, _SHAPES[layout])
        leaves = _newest(leaves, left_out)
        return RunTree(root, layout, _ordered(leaves), empty, unreadable, left_out)
    if rels == ["."]:
        return RunTree(root, "flat", [Leaf(root, ".")], unreadable=unreadable)
    # numbered iteration folders, and the root's own files
    fits = [rel for rel in rels if rel == "." or _DIGITS.fullmatch(Path(rel).name)]
    if not fits and len(rels) == 1:  # the one folder holding dumps, whatever its name
        return RunTree(root, "flat", [Leaf(root, rels[0])], unreadable=unreadable)
    if 2 * len(fits) < len(rels):
        shown = ", ".join(os.path.join(root, rel) for rel in rels[:3]) + (", …" if len(rels) > 3 else "")
        raise InputError(
            root,
            f"holds dumps in {len(rels)} folders that fit no dump tree layout ({shown}): give one of "
            "them, or a dump tree (GE's {time}/{device_id}/{model_name}/{model_id}/{data_index}, "
            "msprobe's step{k}/rank{r}, numbered step folders)",
            _DATA_ERROR,
        )
    leaves = [Leaf(root, rel, step=rel) for rel in fits]
    left_out = _odd_folders(root, rels, fits, _SHAPES["steps"])
    return RunTree(root, "steps", _ordered(leaves), unreadable=unreadable, left_out=left_out)


#: what a leaf folder of each layout looks like, for the sentence that leaves an odd one out
_SHAPES = {
    "ge": "{time}/{device_id}/{model_name}/{model_id}/{data_index}",
    "msprobe": "step{k}/rank{r}",
    "device": "{device_id}",
    "steps": "a numbered step folder",
}


def _odd_folders(root: str, rels: list[str], fits: list[str], shape: str) -> dict[str, str]:
    """``{folder: why}`` of the folders of ``rels`` that are not among ``fits``."""
    fitting = set(fits)
    return {
        os.path.join(root, rel): f"holds dumps but is not a leaf like the others ({shape}): not compared"
        for rel in rels
        if rel not in fitting
    }


def _newest(leaves: list[Leaf], left_out: dict[str, str]) -> list[Leaf]:
    """``leaves`` with one leaf per rank, graph and step: where two folders have the same labels
    (GE wrote the same ranks under two ``{time}`` folders), the later folder by name (numbers as
    numbers: GE's newer run); each older one goes into ``left_out``."""
    by_labels: dict[tuple, list[Leaf]] = {}
    for leaf in leaves:
        by_labels.setdefault((leaf.rank, leaf.graph, leaf.step), []).append(leaf)
    kept = []
    for same in by_labels.values():
        same.sort(key=lambda leaf: _label_key(leaf.rel))
        newest = same[-1]
        kept.append(newest)
        for older in same[:-1]:
            left_out[os.path.join(older.folder, older.rel)] = (
                f"holds the same {older.label()} as {os.path.join(newest.folder, newest.rel)}, which is "
                "compared: the later folder by name (of GE's time folders, the newer run)"
            )
    return kept


def _empty_device_folders(root: str, rels: list[str], depth: int) -> dict[str, str]:
    """``{device_id: folder}`` of the device folders beside the leaves' own that hold no dump file
    (a rank that dumped nothing), where the tree's root lies above the device level, ``depth``
    folders above the leaves."""
    present: dict[str, set[str]] = {}  # folder holding device folders -> device ids with leaves
    for rel in rels:
        parts = Path(rel).parts if rel != "." else ()
        if len(parts) > depth:
            device = len(parts) - 1 - depth
            present.setdefault(os.path.join(root, *parts[:device]), set()).add(parts[device])
    empty = {}
    for parent, devices in present.items():
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            if _DIGITS.fullmatch(name) and name not in devices and os.path.isdir(os.path.join(parent, name)):
                empty[name] = os.path.join(parent, name)
    return empty


def _ge_labels(parts: tuple[str, ...], _names: list[str]) -> tuple[str, str, str] | None:
    """``(device_id, model_name/model_id, data_index)`` of a GE leaf
    ``…/{time}/{device_id}/{model_name}/{model_id}/{data_index}``, else ``None``."""
    if len(parts) < 5:
        return None
    time, device, model, model_id, index = parts[-5:]
    if not all(_DIGITS.fullmatch(p) for p in (time, device, model_id, index)) or _DIGITS.fullmatch(model):
        return None
    return device, f"{model}/{model_id}", index


def _msprobe_labels(parts: tuple[str, ...], _names: list[str]) -> tuple[str | None, None, str] | None:
    """``(rank, None, step)`` of an msprobe leaf ``…/step{k}/rank{r}[/dump_tensor_data]``
    (``proc{pid}`` in place of the rank folder: no rank), else ``None``."""
    tail = parts[-3:]
    step = next((m.group(1) for p in tail if (m := _MSPROBE_STEP.fullmatch(p))), None)
    if step is None:
        return None
    rank = next((m.group(1) for p in tail if (m := _MSPROBE_RANK.fullmatch(p))), None)
    return rank, None, step


def _device_labels(parts: tuple[str, ...], names: list[str]) -> tuple[str, None, None] | None:
    """``(device_id, None, None)`` of a leaf of one device's dumps: GE's single-op form
    ``…/{time}/{device_id}`` or adump's dump stream ``…/{device_id}`` (its files named with the
    dump counter), else ``None``."""
    device = parts[-1] if parts else ""
    if not _DIGITS.fullmatch(device):
        return None
    if len(parts) >= 2 and _TIME_FOLDER.fullmatch(parts[-2]):
        return device, None, None
    if any(_ADUMP_NAME.fullmatch(name) for name in names):
        return device, None, None
    return None


#: each layout: its name, the labels of one leaf's folder, and how many folders above a leaf its
#: device folder is (``None``: no device level)
_LAYOUTS = (("ge", _ge_labels, 3), ("msprobe", _msprobe_labels, None), ("device", _device_labels, 0))


def _label_key(value: str | None) -> tuple:
    """Sort key of a label (or a folder): numbers as numbers, before names; ``None`` first."""
    if value is None:
        return ()
    return tuple((1, int(p), "") if _DIGITS.fullmatch(p) else (2, 0, p) for p in Path(value).parts)


def sorted_labels(values) -> list:
    """``values`` in label order (numbers as numbers, ``None`` first)."""
    return sorted(values, key=_label_key)


def _ordered(leaves: list[Leaf]) -> list[Leaf]:
    return sorted(leaves, key=lambda f: (_label_key(f.rank), _label_key(f.graph), _label_key(f.step)))


def graph_files(path: str | os.PathLike) -> list[str]:
    """The graphs a ``--af-*-graph`` path gives: the file itself, or every graph of the ``Build``
    stage in a folder and its subfolders (atc's ``.json``, GE's ``ge_proto_*_Build.txt``; where a
    folder holds no ``Build`` graph, its ``ge_proto_*.txt``), sorted."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return [path]
    found: dict[str, list[str]] = {"build": [], "text": []}
    for folder, _, names in os.walk(path):
        for name in names:
            full = os.path.join(folder, name)
            if name.endswith(".json") or (name.startswith("ge_proto_") and name.endswith("_Build.txt")):
                found["build"].append(full)
            elif name.startswith("ge_proto_") and name.endswith(".txt"):
                found["text"].append(full)
    return sorted(found["build"] or found["text"])


# -- choosing and pairing -----------------------------------------------------------------------


@dataclass
class Scope:
    """What a comparison of two trees covers: ``compared`` the leaf pairs (fusion-on, fusion-off)
    in rank, graph, step order; ``skipped`` what was left out, each ``{"what": .., "why": ..}``;
    ``warnings`` the sentences of those a user must hear of (a folder of neither tree's layout, an
    older copy of a leaf, ranks or steps asked for that neither tree has)."""

    compared: list[tuple[Leaf, Leaf]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    #: the level of each skipped entry: ``rank``, ``graph``, ``step`` or ``folder``
    levels: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def skip(self, what: str, why: str, level: str, *, warn: bool = False) -> None:
        self.skipped.append({"what": what, "why": why})
        self.levels.append(level)
        if warn:
            self.warnings.append(f"{what}: {why}")

    def why_left_out(self, rank: str | None, graph: str | None, step: str | None) -> list[str]:
        """Why no leaf pair of ``rank``, ``graph`` and ``step`` is compared: the reasons recorded
        for that leaf, its graph or its rank (none: neither tree holds such a leaf)."""
        leaf = Leaf("", "", rank, graph, step)
        names = {"step": _where(leaf), "graph": _where(leaf, step=False), "rank": _rank_name(rank)}
        return [
            f"{entry['what']}: {entry['why']}"
            for entry, level in zip(self.skipped, self.levels)
            if entry["what"].removesuffix(" (fusion-off)") == names.get(level)
        ]

    @property
    def one_leaf(self) -> bool:
        """One leaf pair compared, and no rank or graph left out: a report of today's one-leaf
        shape says all there is (its ``iteration`` names the step)."""
        return len(self.compared) == 1 and all(level == "step" for level in self.levels)

    def grid(self) -> Grid:
        """The compared leaf pairs laid out rank × graph, one layer per step."""
        cells = {(on.rank, on.graph, on.step): i for i, (on, _) in enumerate(self.compared)}
        return Grid(
            ranks=sorted_labels({r for r, _, _ in cells}),
            graphs=sorted_labels({g for _, g, _ in cells}),
            steps=sorted_labels({s for _, _, s in cells}),
            cells=cells,
        )

    def summary(self) -> RunScope:
        """The scope as a whole run's summary gives it: the leaf pairs compared, what was left out."""
        return RunScope(
            compared=[
                ComparedPair(**on.fields(), fusion_on=on.rel, fusion_off=off.rel) for on, off in self.compared
            ],
            skipped=[Skipped(**entry) for entry in self.skipped],
        )


@dataclass
class Grid:
    """The compared leaf pairs of a :class:`Scope` as a grid: its ``ranks`` (rows), ``graphs``
    (columns) and ``steps`` (layers) in label order (``None``: a level the layout lacks), and
    ``cells`` the index in ``Scope.compared`` of each ``(rank, graph, step)`` compared."""

    ranks: list[str | None]
    graphs: list[str | None]
    steps: list[str | None]
    cells: dict[tuple[str | None, str | None, str | None], int]


@dataclass(frozen=True)
class Choice:
    """A ``--ranks``/``--graphs``/``--steps`` value: ``names``, and ``spans`` of numbers ``A-B``
    kept as bounds (``0-99999999999999`` is two numbers, never a list), matched against the
    labels the trees hold."""

    text: str
    what: str
    names: tuple[str, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, names, what: str) -> Choice:
        """A choice of exactly ``names`` (a list, as a caller may give it)."""
        if isinstance(names, Choice):
            return names
        return cls(",".join(names), what, tuple(names))

    def __contains__(self, label: object) -> bool:
        if not isinstance(label, str):
            return False
        if label in self.names:
            return True
        return bool(_DIGITS.fullmatch(label)) and any(lo <= int(label) <= hi for lo, hi in self.spans)

    def missing(self, present: set) -> list[str]:
        """What this choice asks for that ``present`` (labels) lacks: each name, and each run of
        numbers of a span holding no label (``2-99``; a run of one or two numbers listed)."""
        out = [name for name in self.names if name not in present]
        numbers = sorted({int(p) for p in present if isinstance(p, str) and _DIGITS.fullmatch(p)})
        for lo, hi in self.spans:
            start = lo
            for n in [n for n in numbers if lo <= n <= hi] + [hi + 1]:
                if n > start:
                    out += [str(start), str(n - 1)] if n - 1 == start + 1 else [_span(start, n - 1)]
                start = max(start, n + 1)
        return out


def _span(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def parse_choice(text: str | None, what: str) -> Choice | None:
    """A ``--ranks``/``--graphs``/``--steps`` value: ``None`` or ``all`` for every one, else
    comma-separated names, where ``A-B`` spans numbers (``0-3,6``)."""
    if text is None or text.strip().lower() == "all":
        return None
    names: list[str] = []
    spans: list[tuple[int, int]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        if sep and _DIGITS.fullmatch(lo) and _DIGITS.fullmatch(hi):
            if int(hi) < int(lo):
                raise ValueError(f"--{what} {text}: the range {part} runs backwards")
            spans.append((int(lo), int(hi)))
        else:
            names.append(part)
    if not names and not spans:
        raise ValueError(f"--{what} {text!r} names no {what}")
    return Choice(text, what, tuple(names), tuple(spans))


def pair_trees(
    on: RunTree,
    off: RunTree,
    *,
    ranks: Choice | list[str] | None = None,
    graphs: Choice | list[str] | None = None,
    steps: Choice | list[str] | str | None = None,
) -> Scope:
    """Pair the leaves of ``on`` (fusion on) and ``off`` (fusion off).

    Leaves pair by rank and graph; ``steps`` is ``None`` (the latest step both trees hold for
    each rank and graph), ``"all"`` (every step both hold) or a choice of step labels. A side
    without steps (a flat folder against numbered step folders) pairs with the other side's
    latest step (of those chosen). A graph is matched by name first; a rank with one unmatched
    graph on each side pairs those two (GE names a model anew in each run). ``ranks`` and
    ``graphs`` narrow what is compared (a graph by its ``model_name/model_id`` or its
    ``model_name``); what they ask for and neither tree holds is skipped with a warning. Raises
    ``ValueError`` when a choice names nothing either tree holds, or when the trees are laid out
    at different levels (ranks on one side, none on the other)."""
    scope = Scope()
    for tree, side in ((on, "fusion-on"), (off, "fusion-off")):
        for folder, why in tree.unreadable.items():
            scope.skip(folder, f"the {side} tree's folder {why}", "folder")
        for folder, why in tree.left_out.items():
            scope.skip(folder, why, "folder", warn=True)
    ranks = Choice.of(ranks, "ranks") if ranks is not None else None
    graphs = Choice.of(graphs, "graphs") if graphs is not None else None
    steps = Choice.of(steps, "steps") if steps not in (None, "all") else steps
    if len(on.leaves) == 1 and len(off.leaves) == 1 and ranks is graphs is None and steps in (None, "all"):
        # one folder on each side: they are the run's two sides, however each is labelled
        scope.compared.append((on.leaves[0], off.leaves[0]))
        return scope
    _check_levels(on, off)
    _check_choice(ranks, {leaf.rank for t in (on, off) for leaf in t.leaves}, scope)
    _check_choice(graphs, {g for t in (on, off) for leaf in t.leaves for g in _graph_names(leaf)}, scope)
    if isinstance(steps, Choice):
        _check_choice(steps, {leaf.step for t in (on, off) for leaf in t.leaves}, scope)
    groups_on, groups_off = _groups(on), _groups(off)
    for tree, side in ((on, "fusion-on"), (off, "fusion-off")):
        for rank, folder in tree.empty_ranks.items():
            if rank not in groups_on and rank not in groups_off:
                scope.skip(_rank_name(rank), f"the {side} tree's folder {folder} holds no dump files", "rank")
    for rank in sorted_labels(set(groups_on) | set(groups_off)):
        if ranks is not None and rank not in ranks:
            scope.skip(_rank_name(rank), "not among --ranks", "rank")
            continue
        if rank not in groups_off or rank not in groups_on:
            side, tree = ("fusion-off", off) if rank not in groups_off else ("fusion-on", on)
            if rank in tree.empty_ranks:
                why = f"the {side} tree's folder {tree.empty_ranks[rank]} holds no dump files"
            else:
                why = f"the {side} tree has no {_rank_name(rank)}"
            scope.skip(_rank_name(rank), why, "rank")
            continue
        for g_on, g_off in _pair_graphs(rank, groups_on[rank], groups_off[rank], scope):
            if graphs is not None and not any(name in graphs for name in _graph_names(g_on[0])):
                scope.skip(_where(g_on[0], step=False), "not among --graphs", "graph")
                continue
            _pair_steps(g_on, g_off, steps, scope, (on.layout, off.layout))
    return scope


def _describe(tree: RunTree) -> str:
    """``a GE dump tree of ranks 0, 1`` and the like, for a sentence."""
    if tree.layout == "flat":
        return "one folder of dumps"
    kinds = {"ge": "a GE dump tree", "msprobe": "an msprobe dump tree", "device": "a folder per device"}
    ranks = tree.ranks
    of_ranks = f" of {'rank' if len(ranks) == 1 else 'ranks'} {', '.join(ranks)}" if ranks else ""
    if tree.layout == "steps":
        return f"numbered step folders ({', '.join(sorted_labels({leaf.step for leaf in tree.leaves}))})"
    return kinds[tree.layout] + of_ranks


def _check_levels(on: RunTree, off: RunTree) -> None:
    """Raises ``ValueError`` when one tree has ranks (or graphs) and the other has none: which of
    the other's leaves stands for which is anyone's guess."""
    for level in ("rank", "graph"):
        has = [any(getattr(leaf, level) is not None for leaf in tree.leaves) for tree in (on, off)]
        if has[0] != has[1]:
            tree = on if has[0] else off
            example = os.path.normpath(os.path.join(tree.root, tree.leaves[-1].rel))
            option = "--af-open-data" if has[0] else "--af-close-data"
            raise ValueError(
                f"the fusion-on data folder {on.root} is {_describe(on)} and the fusion-off data folder "
                f"{off.root} is {_describe(off)}: give both at the same level (for one leaf, e.g. "
                f"{option} {example})"
            )


def _check_choice(chosen: Choice | None, present: set, scope: Scope) -> None:
    """Raises ``ValueError`` when ``chosen`` names nothing of ``present``; what it names and
    neither tree holds is skipped, with a warning."""
    if chosen is None:
        return
    present = {p for p in present if p is not None}
    if not any(p in chosen for p in present):
        listed = ", ".join(sorted_labels(present)) or "none"
        raise ValueError(f"--{chosen.what}: neither tree has {chosen.text} (there are: {listed})")
    level = chosen.what.rstrip("s")
    for label in chosen.missing(present):
        what = f"{chosen.what} {label}" if "-" in label else f"{level} {label}"
        scope.skip(
            what,
            f"asked for by --{chosen.what} {chosen.text}; neither tree has {'them' if '-' in label else 'it'}",
            level,
            warn=True,
        )


def _graph_names(leaf: Leaf) -> tuple[str, ...]:
    if leaf.graph is None:
        return ()
    return (leaf.graph, leaf.graph.rpartition("/")[0])


def _rank_name(rank: str | None) -> str:
    return "every leaf" if rank is None else f"rank {rank}"


def _where(leaf: Leaf, *, step: bool = True) -> str:
    """The leaf's labels (``rank 0, graph m/1, step 3``), without its step if ``step`` is false;
    ``""`` where it has none."""
    labels = {k: v for k, v in leaf.fields().items() if v is not None and (step or k != "step")}
    return ", ".join(f"{k} {v}" for k, v in labels.items())


def _groups(tree: RunTree) -> dict[str | None, dict[str | None, list[Leaf]]]:
    """``{rank: {graph: leaves in step order}}``."""
    out: dict[str | None, dict[str | None, list[Leaf]]] = {}
    for leaf in tree.leaves:
        out.setdefault(leaf.rank, {}).setdefault(leaf.graph, []).append(leaf)
    return out


def _pair_graphs(rank, on: dict, off: dict, scope: Scope) -> list[tuple[list[Leaf], list[Leaf]]]:
    pairs = [(on[g], off[g]) for g in sorted_labels(set(on) & set(off))]
    only_on = sorted_labels(set(on) - set(off))
    only_off = sorted_labels(set(off) - set(on))
    if len(only_on) == 1 and len(only_off) == 1:
        pairs.append((on[only_on[0]], off[only_off[0]]))
    else:
        for g in only_on:
            scope.skip(_where(on[g][0], step=False), "the fusion-off tree has no graph of that name", "graph")
        for g in only_off:
            scope.skip(
                _where(off[g][0], step=False) + " (fusion-off)",
                "the fusion-on tree has no graph of that name",
                "graph",
            )
    return pairs


def _step_name(leaf: Leaf) -> str:
    where = _where(leaf)
    if leaf.step == ".":  # the files beside numbered step folders
        return f"{where.removesuffix('step .')}the files directly in {leaf.folder}".lstrip(", ")
    return where or leaf.rel


def _pair_steps(on: list[Leaf], off: list[Leaf], steps, scope: Scope, layouts: tuple[str, str]) -> None:
    if len(off) == 1 and off[0].step is None and any(leaf.step is not None for leaf in on):
        _pair_with_stepless(on, off[0], steps, scope, "fusion-off", layouts[0] == "steps")
        return
    if len(on) == 1 and on[0].step is None and any(leaf.step is not None for leaf in off):
        _pair_with_stepless(off, on[0], steps, scope, "fusion-on", layouts[1] == "steps")
        return
    by_step_off = {leaf.step: leaf for leaf in off}
    common = [leaf for leaf in on if leaf.step in by_step_off]
    steps_on = {leaf.step for leaf in on}
    for leaf in on:
        if leaf.step not in by_step_off:
            scope.skip(_step_name(leaf), "the fusion-off tree has no such step", "step")
    for leaf in off:
        if leaf.step not in steps_on:
            scope.skip(f"{_step_name(leaf)} (fusion-off)", "the fusion-on tree has no such step", "step")
    if not common:
        return
    if steps is None:
        chosen, earlier = common[-1:], common[:-1]
        if earlier:
            listed = ", ".join(str(leaf.step) for leaf in earlier)
            where = _where(common[0], step=False)
            scope.skip(
                f"{where + ', ' if where else ''}step {listed}",
                "earlier than the latest step both trees hold (--steps all compares them)",
                "step",
            )
    elif steps == "all":
        chosen = common
    else:
        chosen = [leaf for leaf in common if leaf.step in steps]
        for leaf in common:
            if leaf.step not in steps:
                scope.skip(_step_name(leaf), "not among --steps", "step")
    scope.compared += [(leaf, by_step_off[leaf.step]) for leaf in chosen]


def _pair_with_stepless(
    stepped: list[Leaf], alone: Leaf, steps, scope: Scope, side: str, numbered: bool
) -> None:
    """Pair the one leaf of a side without steps (``side``: which) with the latest step of the
    other side's ``stepped`` leaves (of those ``steps`` chooses); the others are skipped, with the
    options that compare one of them instead where the steps are numbered folders."""
    chosen = stepped if steps in (None, "all") else [leaf for leaf in stepped if leaf.step in steps]
    if not chosen:
        for leaf in stepped:
            scope.skip(_step_name(leaf), "not among --steps", "step")
        return
    latest = chosen[-1]
    fusion_on = side == "fusion-off"
    pair = (latest, alone) if fusion_on else (alone, latest)
    scope.compared.append(pair)
    for leaf in stepped:
        if leaf is latest:
            continue
        why = f"the {side} side is one folder without steps, compared with step {latest.step}, the latest"
        if steps not in (None, "all"):
            why += " of --steps"
        if numbered:
            flags = (
                ("--iteration", "--close-iteration") if fusion_on else ("--close-iteration", "--iteration")
            )
            why += f"; {flags[0]} {leaf.step} {flags[1]} . compares this one instead"
        scope.skip(_step_name(leaf) + ("" if fusion_on else " (fusion-off)"), why, "step", warn=True)


# -- the run's summary across leaves ------------------------------------------------------------


@dataclass
class LeafOutcome:
    """One compared leaf pair: the fusion-on leaf's labels, and either the summary of its
    report (``--format json``'s ``summary``) or the sentence saying why it could not be read."""

    leaf: Leaf
    summary: Summary | None = None
    error: str | None = None


def cross_run_summary(scope: Scope, outcomes: list[LeafOutcome]) -> RunSummary:
    """The run's summary across its leaves: the scope, record counts by verdict, warnings (the
    scope's, then each leaf's prefixed by its leaf), and per introduced op where it was introduced.

    ``introduced`` lists each fused op introduced in some leaf, in first-seen order, with its
    graph, the ranks it was introduced on out of the ranks compared for that graph and step
    (``everywhere``: on every one of them, the kernel's story; else on some, a data or hardware
    story), and ``first_step`` the earliest step it was introduced at."""
    verdicts: dict[str, int] = {}
    warnings: list[str] = list(scope.warnings)
    ranks_of: dict[tuple, set] = {}  # (graph, step) -> ranks compared there
    seen: dict[tuple, dict] = {}  # (graph, op) -> {"ranks": set, "steps": set, "at": set of (step, rank)}
    for o in outcomes:
        leaf = o.leaf
        where = leaf.label()
        if o.error is not None:
            warnings.append(f"{where}: {o.error}")
            continue
        ranks_of.setdefault((leaf.graph, leaf.step), set()).add(leaf.rank)
        for v, n in o.summary.verdicts.items():
            verdicts[v] = verdicts.get(v, 0) + n
        warnings += [f"{where}: {w}" for w in o.summary.warnings]
        for op in o.summary.introduced:
            entry = seen.setdefault((leaf.graph, op), {"at": set()})
            entry["at"].add((leaf.step, leaf.rank))
    introduced = []
    for (graph, op), entry in seen.items():
        steps = sorted_labels({s for s, _ in entry["at"]})
        ranks = sorted_labels({r for _, r in entry["at"] if r is not None})
        everywhere = all(
            {r for s, r in entry["at"] if s == step} >= ranks_of.get((graph, step), set()) for step in steps
        )
        introduced.append(Introduced(op, graph, ranks, everywhere, steps[0]))
    return RunSummary(
        scope=scope.summary(),
        runs=len(outcomes),
        unreadable=sum(1 for o in outcomes if o.error is not None),
        verdicts=verdicts,
        introduced=introduced,
        warnings=warnings,
    )
