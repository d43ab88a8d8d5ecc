"""What lies beside a run's folders (``dumpgraph_af_open/``, ``datadump_af_open/`` and their
``af_close`` siblings): the graph of a data folder, and ``fpinspect confirm``'s last result. Which
inputs a RUN argument names is :mod:`fpinspect.inspection.runs`'s."""

from __future__ import annotations

import json
import os
import tempfile


def one_graph(folder: str) -> str | None:
    """The one graph file in ``folder``: its one ``.json``, else its one ``ge_proto_*_Build.txt``;
    ``None`` when there is no such single file (or no folder)."""
    if not os.path.isdir(folder):
        return None
    names = os.listdir(folder)
    for matches in (
        [n for n in names if n.endswith(".json")],
        [n for n in names if n.startswith("ge_proto_") and n.endswith("_Build.txt")],
    ):
        if matches:
            return os.path.join(folder, matches[0]) if len(matches) == 1 else None
    return None


def graph_beside(data_folder: str) -> str | None:
    """The graph of a data folder ``…/datadump_X``: the one graph of its sibling ``dumpgraph_X``."""
    head, tail = os.path.split(os.path.normpath(data_folder))
    return (
        one_graph(os.path.join(head, tail.replace("datadump", "dumpgraph"))) if "datadump" in tail else None
    )


#: Where ``fpinspect confirm`` leaves its last result, beside the capture's folders.
CONFIRM_FILE = "confirm.json"


def last_confirmation(run_dir: str) -> dict:
    """``fpinspect confirm``'s last result in ``run_dir`` (its ``--format json``); empty when
    there is no readable result (a damaged one: ``regions`` not a list of objects,
    ``minimal_set`` not a list of names)."""
    path = os.path.join(run_dir, CONFIRM_FILE)
    if not os.path.isfile(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(result, dict):
        return {}
    regions, minimal = result.get("regions", []), result.get("minimal_set")
    if not isinstance(regions, list) or not all(isinstance(r, dict) for r in regions):
        return {}
    if minimal is not None and not (isinstance(minimal, list) and all(isinstance(n, str) for n in minimal)):
        return {}
    return result


def keep_confirmation(run_dir: str, result: dict) -> str:
    """Leave ``result`` (a confirmation's JSON object) in ``run_dir`` as :data:`CONFIRM_FILE`,
    spelled as ``fpinspect confirm --format json`` prints it, where the inspector shows it on each
    op; written whole (a temporary file renamed into place) or not at all. Returns the path;
    raises ``OSError``."""
    from ..engine.pair import json_clean

    path = os.path.join(run_dir, CONFIRM_FILE)
    fd, tmp = tempfile.mkstemp(dir=run_dir, prefix=f".{CONFIRM_FILE}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(json.dumps(json_clean(result), indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def confirmations(run_dir: str) -> dict[str, dict]:
    """The regions ``fpinspect confirm`` last judged in ``run_dir``, by fused op name: each
    ``{"verdict": .., "removed": .., ...}``; empty when there is no readable result."""
    regions = last_confirmation(run_dir).get("regions")
    if not isinstance(regions, list):
        return {}
    return {r["name"]: r for r in regions if isinstance(r, dict) and isinstance(r.get("name"), str)}
