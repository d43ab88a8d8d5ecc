"""fpinspect open finds GE's own text graphs (ge_proto_*_Build.txt), numbered per run."""

import json
import shutil

from fpinspect.dumps.formats.ge_text import format_text_graph
from fpinspect.dumps.runs.sources import resolve


def _as_text_run(regression, tmp_path):
    for side, number in (("af_open", "00000123"), ("af_close", "00000098")):
        folder = tmp_path / f"dumpgraph_{side}"
        folder.mkdir()
        model = json.loads((regression / f"dumpgraph_{side}" / "Build.json").read_text(encoding="utf-8"))
        (folder / f"ge_proto_{number}_graph_1_Build.txt").write_text(
            format_text_graph(model), encoding="utf-8"
        )
        (folder / f"ge_proto_{number[:-1]}1_graph_1_PreRunBegin.txt").write_text(
            "graph {\n}\n", encoding="utf-8"
        )
        shutil.copytree(regression / f"datadump_{side}", tmp_path / f"datadump_{side}")
    return tmp_path


def test_a_run_folder_of_text_graphs_opens_both_sides(regression, tmp_path):
    run = _as_text_run(regression, tmp_path)
    s = resolve(str(run))
    assert s.open_graph.endswith("dumpgraph_af_open/ge_proto_00000123_graph_1_Build.txt")
    assert s.close_graph.endswith("dumpgraph_af_close/ge_proto_00000098_graph_1_Build.txt")
    assert s.complete and resolve(s.open_graph) == s
