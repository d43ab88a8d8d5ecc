"""`compare --format model-explorer`: Model Explorer's node data, each fused op's worst error coloured by verdict."""

import json
from pathlib import Path

from click.testing import CliRunner

from fpinspect.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "fpinspect" / "sample_dumps"
#: The fields Model Explorer's node data builder defines (GraphNodeData, NodeDataResult, ThresholdItem).
GRAPH_FIELDS = {"results", "thresholds", "gradient"}
RESULT_FIELDS = {"value", "bgColor", "textColor"}


def node_data(sample):
    root = SAMPLES / sample
    r = CliRunner().invoke(
        main,
        [
            "compare",
            "--af-open-graph", str(next((root / "dumpgraph_af_open").iterdir())),
            "--af-close-graph", str(next((root / "dumpgraph_af_close").iterdir())),
            "--af-open-data", str(root / "datadump_af_open"),
            "--af-close-data", str(root / "datadump_af_close"),
            "--format", "model-explorer",
        ],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_verdicts_as_node_colours_and_the_culprit_marked():
    data = node_data("regression")
    (graph,) = data.values()
    assert set(graph) <= GRAPH_FIELDS
    results = graph["results"]
    assert all(set(v) <= RESULT_FIELDS and isinstance(v["value"], float) for v in results.values())
    culprit = results["autofuse_2_Add_LayerNorm"]
    assert culprit["bgColor"] == "#ef9a9a" and culprit["textColor"] == "#b71c1c" and culprit["value"] > 1
    assert (
        results["autofuse_0_LayerNorm"]["bgColor"] == "#c8e6c9"
        and "textColor" not in results["autofuse_0_LayerNorm"]
    )
    assert "textColor" not in results["autofuse_3_GeluV2"]  # failing, but it only inherited its error
    values = [t["value"] for t in graph["thresholds"]]
    assert values == sorted(values)


def test_a_clean_run_is_all_pass():
    (graph,) = node_data("clean").values()
    assert graph["results"] and {v["bgColor"] for v in graph["results"].values()} == {"#c8e6c9"}
