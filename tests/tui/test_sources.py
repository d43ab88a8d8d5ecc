"""Which dumps `fpinspect open` shows, and how it refuses bad input (no Textual needed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.dumps.runs.sources import SourceError, Sources, resolve, swap_side


def test_swap_side_renames_the_last_af_open_part():
    assert str(swap_side("/r/dumpgraph_af_open/Build.json")) == "/r/dumpgraph_af_close/Build.json"
    assert str(swap_side("/af_open/x_af_open/af_open/g.json")) == "/af_open/x_af_open/af_close/g.json"
    assert swap_side("/r/graph/Build.json") is None


def test_the_open_side_finds_the_other(regression):
    s = resolve(str(regression / "dumpgraph_af_open" / "Build.json"), str(regression / "datadump_af_open"))
    assert s == Sources(
        *(
            str(regression / f)
            for f in (
                "dumpgraph_af_open/Build.json",
                "datadump_af_open",
                "dumpgraph_af_close/Build.json",
                "datadump_af_close",
            )
        )
    )
    assert s.complete and s.name == "regression"
    # a run folder, or the graph alone, gives the same four paths
    assert resolve(str(regression)) == s == resolve(str(regression / "dumpgraph_af_open" / "Build.json"))


def test_explicit_flags_win(regression, clean):
    s = resolve(
        str(regression),
        close_graph=str(clean / "dumpgraph_af_close" / "Build.json"),
        close_data=str(clean / "datadump_af_close"),
    )
    assert s.close_graph.startswith(str(clean)) and s.close_data.startswith(str(clean))
    assert s.open_data == str(regression / "datadump_af_open")


def test_without_the_other_side_it_browses_and_says_how_to_compare(regression, tmp_path):
    shutil.copytree(regression / "dumpgraph_af_open", tmp_path / "dumpgraph_af_open")
    s = resolve(str(tmp_path))
    assert not s.complete and s.open_data is None and s.close_graph is None
    hint = s.how_to_compare()
    assert "fusion-on data folder" in hint and "fusion-off graph" in hint
    assert "fpinspect open" in hint and "--close-graph CLOSE_GRAPH" in hint


def test_no_arguments_open_the_sample_or_say_it_is_missing(regression, tmp_path):
    assert resolve(sample=regression).open_graph == str(regression / "dumpgraph_af_open" / "Build.json")
    with pytest.raises(SourceError, match="sample dumps are missing"):
        resolve(sample=tmp_path / "nowhere")


@pytest.mark.parametrize(
    "args, message",
    [
        (["nowhere.json"], "graph nowhere.json does not exist."),
        (["{graph}", "{graph}"], "is a file, not a dump folder"),
        (["{graph}", "--close-graph", "missing.json"], "--close-graph missing.json does not exist."),
        (["--close-data", "x"], "give the fusion-on GRAPH first"),
    ],
)
def test_bad_input_is_one_sentence_on_stderr_and_status_2(regression, args, message):
    graph = str(regression / "dumpgraph_af_open" / "Build.json")
    result = CliRunner().invoke(main, ["open", *(a.format(graph=graph) for a in args)])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith("fpinspect: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_importing_the_command_does_not_import_textual():
    """`fpinspect.cli` registers the command, and the CLI must run without Textual loaded."""
    code = textwrap.dedent("""
        import sys
        import fpinspect.tui.commands
        assert not [m for m in sys.modules if m.split(".")[0] == "textual"]
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_a_folder_of_graphs_is_kept_with_its_data_and_refused_without(regression, clean, tmp_path):
    for side in ("open", "close"):
        for sample, graph_id in ((regression, 1), (clean, 2)):
            folder = tmp_path / "run" / f"dumpgraph_af_{side}" / f"pid_1{graph_id}_deviceid_0"
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(
                sample / f"dumpgraph_af_{side}" / "Build.json",
                folder / f"ge_proto_0000000{graph_id}_graph_{graph_id}_Build.json",
            )
        shutil.copytree(regression / f"datadump_af_{side}", tmp_path / "run" / f"datadump_af_{side}")
    run = tmp_path / "run"
    s = resolve(str(run))
    assert s == Sources(
        *(str(run / f) for f in ("dumpgraph_af_open", "datadump_af_open")),
        *(str(run / f) for f in ("dumpgraph_af_close", "datadump_af_close")),
    )
    assert s.name == "run" and s.run_dir == str(run)
    assert resolve(str(regression), close_graph=str(run / "dumpgraph_af_close")).close_graph == str(
        run / "dumpgraph_af_close"
    )
    shutil.rmtree(run / "datadump_af_open")
    result = CliRunner().invoke(main, ["open", str(run)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr == (
        f"fpinspect: the fusion-on graph {run / 'dumpgraph_af_open'} is a folder of 2 graphs: give the "
        "fusion-on data folder too (its dumps choose the graph), or one graph file.\n"
    )
