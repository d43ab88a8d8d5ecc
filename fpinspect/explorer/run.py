"""A compared run in Model Explorer: the fusion-on and fusion-off graphs side by side, the
comparison's node data on both, started on a local server (``fpinspect explore``).

The fusion-on graph's fused ops are coloured by their worst verdict and show their worst error in
eps (:func:`~fpinspect.dumps.engine.model_explorer.node_data`); each original op of the fusion-off
graph carries the same colour and value, and names the fused op that replaced it. Model
Explorer's page opens on both graphs (its ``uiState`` of two panes), the highlighted op selected.

Its stand-alone page takes a node mapping for synchronised navigation only from a file the user
uploads ("Sync navigation" > "Upload mapping from computer"): :attr:`ExplorerRun.mapping` is that
file's content (fused op <-> its original ops); until it is uploaded the panes sync by op name,
which follows every op fusion left alone.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import quote

import msgspec
from model_explorer import ModelExplorerGraphs
from model_explorer.config import ModelExplorerConfig
from model_explorer.node_data_builder import GraphNodeData, ModelNodeData, NodeDataResult, ThresholdItem

from ..dumps.engine.compare import DumpComparison
from ..dumps.engine.model_explorer import node_data
from ..dumps.engine.report import Report
from ..dumps.engine.verdict import ThresholdTable
from .graphs import collection, collector_paused, fused_into

#: The collection labels of the two sides (Model Explorer shows them after the run's name).
ON, OFF = "fusion on", "fusion off"
HOST = "localhost"
#: Seconds the server has to answer its health check before starting counts as failed.
START_SECONDS = 60


@dataclass
class ExplorerRun:
    """What Model Explorer is given for one run: ``config`` (the two sides as one model of two
    graph collections, and each side's node data), the page's ``url_data`` (without host) and the
    sync ``mapping``."""

    name: str
    config: ModelExplorerConfig
    url_data: dict
    mapping: dict

    def url(self, port: int) -> str:
        return f"http://{HOST}:{port}/?data={quote(json.dumps(self.url_data, separators=(',', ':')))}"


def explorer_run(
    name: str,
    comparison: DumpComparison,
    report: Report,
    thresholds: ThresholdTable,
    select: str | None = None,
) -> ExplorerRun:
    """The run ``name`` (its comparison and report) as Model Explorer is given it, op ``select``
    (fused or original) and its counterpart on the other side selected."""
    on_model, off_model = comparison.open_model, comparison.close_model
    replaced_by = fused_into(on_model)
    with collector_paused():
        on, off = collection(on_model, ON), collection(off_model, OFF, replaced_by)
        # graph ids are one namespace across a model's collections (Model Explorer renames a
        # repeated one): the fusion-off side's are told apart where both sides' graphs share a name
        on_ids = {g.id for g in on.graphs}
        off_id = {g.id: f"{g.id} ({OFF})" if g.id in on_ids else g.id for g in off.graphs}
        for g in off.graphs:
            g.id = off_id[g.id]
        graphs: ModelExplorerGraphs = {"graphCollections": [on, off]}
        # as JSON text, which Model Explorer serves as it is: its own serialiser (dataclasses'
        # asdict) costs more than reading and converting the graphs (benchmarks/README.md)
        text = msgspec.json.encode(graphs).decode()
    on_data = node_data(report, {op.name: op.graph for op in comparison.fused}, thresholds)
    originals = {op.name: op.original_op_names for op in comparison.fused if not op.same_name}
    off_data: dict[str, dict] = {}
    for graph in on_data.values():
        for op, result in graph["results"].items():
            for original in originals.get(op, ()):
                if original in off_model.ops:
                    where = off_data.setdefault(
                        off_id[off_model.ops[original].graph],
                        {"results": {}, "thresholds": graph["thresholds"]},
                    )
                    where["results"][original] = result
    config = ModelExplorerConfig()
    # the graphs handed over as add_model_from_pytorch does: Model Explorer serves its
    # graphs_list at graphs://{name}/{index}
    config.graphs_list.append(text)
    config.model_sources.append({"url": f"graphs://{name}/0"})
    for side, data in ((ON, on_data), (OFF, off_data)):
        config.add_node_data(f"worst error in eps ({side})", _typed(data), model_name=f"{name} ({side})")
    mapping = {
        "type": "sync_navigation",
        "mappingEntries": [
            {"leftNodeIds": [op], "rightNodeIds": [o for o in names if o in off_model.ops]}
            for op, names in originals.items()
        ],
    }
    # a fused op selects its first original op on the other side; an original op, its fused op
    selected_on = replaced_by.get(select or "", select)
    selected_off = next((o for o in originals.get(select or "", ()) if o in off_model.ops), select)
    url_data = {
        "models": config.model_sources,
        "nodeData": config.node_data_sources,
        "nodeDataTargets": config.node_data_target_models,
        "uiState": {
            "paneStates": [
                _pane(f"{name} ({ON})", on_model, selected_on, {}, selected=True),
                _pane(f"{name} ({OFF})", off_model, selected_off, off_id),
            ]
        },
        "sync": {"mode": "match_node_id"},
    }
    return ExplorerRun(name, config, url_data, mapping)


def _typed(data: dict) -> ModelNodeData:
    """Node data as Model Explorer's own classes (which refuse a field they do not define), each
    value to 3 significant digits: the page shows it whole on the node."""
    return ModelNodeData(
        graphsData={
            graph: GraphNodeData(
                results={
                    k: NodeDataResult(**{**v, "value": float(f"{v['value']:.3g}")})
                    for k, v in g["results"].items()
                },
                thresholds=[ThresholdItem(**t) for t in g["thresholds"]],
            )
            for graph, g in data.items()
        }
    )


def _pane(label: str, model, node: str | None, ids: dict[str, str], selected: bool = False) -> dict:
    """One pane of the page's ``uiState``: the graph holding ``node`` (else the root; ``ids``: the
    graph ids given to renamed graphs), ``node`` selected."""
    op = model.ops.get(node) if node else None
    graph = op.graph if op else model.graphs[0]
    return {
        "deepestExpandedGroupNodeIds": [],
        "selectedNodeId": op.name if op else "",
        "selectedGraphId": ids.get(graph, graph),
        "selectedCollectionLabel": label,
        "widthFraction": 0.5,
        "selected": selected,
    }


class _MainThreadOnly(io.TextIOBase):
    """Standard output that keeps what the main thread writes and drops the rest: Model
    Explorer's server prints its own banner (and a URL without the two panes) from its threads."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        if threading.current_thread() is threading.main_thread():
            return self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


#: Requests to the local server, never through a proxy the environment names.
_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class StartFailed(Exception):
    """Model Explorer's server did not start; ``str()`` is one sentence."""


def start(run: ExplorerRun, port: int) -> str:
    """Start Model Explorer's server with ``run`` on ``port`` of localhost, in a daemon thread
    (it lives until the process ends), with this package's adapter loaded so that other GE
    graphs open from its page too; return the page's URL once the server answers."""
    from model_explorer import visualize_from_config

    if not isinstance(sys.stdout, _MainThreadOnly):
        sys.stdout = _MainThreadOnly(sys.stdout)
    server = threading.Thread(
        target=visualize_from_config,
        kwargs=dict(
            config=run.config,
            host=HOST,
            port=port,
            extensions=["fpinspect.explorer"],
            no_open_in_browser=True,
        ),
        daemon=True,
        name="model-explorer",
    )
    server.start()
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if not server.is_alive():
            raise StartFailed(f"Model Explorer's server did not start on port {port}.")
        try:
            with _direct.open(f"http://{HOST}:{port}/check_health", timeout=1) as r:
                if r.status == 200:
                    return run.url(port)
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise StartFailed(f"Model Explorer's server did not answer on port {port} within {START_SECONDS} s.")
