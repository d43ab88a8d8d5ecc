"""`fpinspect compare` on whole dump trees: every rank compared, one report for the run, what was
left out said, one leaf's report unchanged."""

import json
import os
import shutil

import pytest
from click.testing import CliRunner
from runtrees import CULPRIT, SAMPLE, STAMP, write_adump_trees, write_trees

from fpinspect.cli import main


def _graphs():
    return [
        "--af-open-graph",
        str(SAMPLE / "dumpgraph_af_open" / "Build.json"),
        "--af-close-graph",
        str(SAMPLE / "dumpgraph_af_close" / "Build.json"),
    ]


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    return write_trees(tmp_path_factory.mktemp("trees"))


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def compare(trees, *extra, on="on", off="off"):
    return run(
        "compare", *_graphs(), "--af-open-data", trees / on, "--af-close-data", trees / off, "-j", "1", *extra
    )


def test_every_rank_is_compared_and_earlier_steps_are_named(trees):
    r = compare(trees, "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [(x["rank"], x["graph"], x["step"]) for x in out["runs"]] == [
        ("0", "ge_default_1/1", "1"),
        ("1", "ge_default_1/1", "1"),
    ]
    for run_ in out["runs"]:
        assert run_["summary"]["introduced"] == [CULPRIT]
        assert run_["records"] and run_["records"][0]["fused_op"]
    s = out["summary"]
    assert [(c["rank"], c["step"]) for c in s["scope"]["compared"]] == [("0", "1"), ("1", "1")]
    assert {x["what"] for x in s["scope"]["skipped"]} == {
        "rank 0, graph ge_default_1/1, step 0",
        "rank 1, graph ge_default_1/1, step 0",
    }
    (entry,) = [e for e in s["introduced"] if e["op"] == CULPRIT]
    assert entry["ranks"] == ["0", "1"] and entry["everywhere"] and entry["first_step"] == "1"


def test_a_rank_specific_failure_and_the_first_failing_step(trees):
    r = compare(trees, "--format", "json", "--steps", "all")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert len(out["runs"]) == 4 and out["summary"]["scope"]["skipped"] == []
    by_leaf = {(x["rank"], x["step"]): x["summary"]["introduced"] for x in out["runs"]}
    assert CULPRIT not in by_leaf[("1", "0")] and CULPRIT in by_leaf[("0", "0")]
    (entry,) = [e for e in out["summary"]["introduced"] if e["op"] == CULPRIT]
    assert not entry["everywhere"]  # at step 0 only rank 0 had it: a data or hardware story
    assert entry["first_step"] == "0"


def test_the_table_names_each_leaf_and_what_was_skipped(trees):
    r = compare(trees, "--ranks", "1")
    assert r.exit_code == 0, r.output
    assert "rank 1, graph ge_default_1/1, step 1" in r.stdout
    assert "skipped rank 0: not among --ranks" in r.stdout
    assert CULPRIT in r.stdout


def test_csv_rows_carry_their_leaf(trees):
    r = compare(trees, "--format", "csv")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("rank,graph,step,kind,")
    assert {line.split(",")[0] for line in lines[1:]} == {"0", "1"}


def test_fail_on_covers_every_leaf(trees):
    assert compare(trees, "--fail-on", "fail", "--format", "json").exit_code == 1


def test_one_leaf_keeps_the_one_leaf_report(trees):
    r = compare(
        trees, "--format", "json", "--ranks", "0", on="on/20261203101010/0", off="off/20261203101010/0"
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert "runs" not in out and out["summary"]["introduced"] == [CULPRIT]
    assert out["summary"]["iteration"]["fusion_on"].endswith("/1")


def test_choices_that_name_nothing_and_unpaired_trees_are_one_sentence(trees, tmp_path):
    r = compare(trees, "--ranks", "9")
    assert r.exit_code == 2 and "neither tree has 9" in r.output and "Traceback" not in r.output
    lonely = tmp_path / "lonely" / STAMP / "5" / "ge_default_1" / "1" / "0"
    shutil.copytree(SAMPLE / "datadump_af_close", lonely)
    shutil.copytree(SAMPLE / "datadump_af_close", lonely.parent / "1")
    r = run(
        "compare",
        *_graphs(),
        "--af-open-data",
        trees / "on",
        "--af-close-data",
        tmp_path / "lonely",
        "-j",
        "1",
    )
    assert r.exit_code == 2 and "nothing to compare" in r.output and "rank 5" in r.output
    r = compare(trees, "--iteration", "1", "--ranks", "0")
    assert r.exit_code == 2 and "cannot be combined" in r.output


def test_a_folder_of_graphs_gives_each_leaf_the_graph_its_dumps_name(tmp_path):
    """Two compiled graphs per rank (the regression block and a clean conv block), their graphs in
    one folder per side: each leaf is compared against the graph whose ops it dumped."""
    samples = SAMPLE.parent
    for side in ("open", "close"):
        for model, sample in (("m_a", "regression"), ("m_b", "clean")):
            shutil.copytree(
                samples / sample / f"datadump_af_{side}",
                tmp_path / side / STAMP / "0" / model / "1" / "0",
            )
            graph = next((samples / sample / f"dumpgraph_af_{side}").iterdir())
            (tmp_path / f"graphs_{side}" / sample).mkdir(parents=True)
            shutil.copyfile(graph, tmp_path / f"graphs_{side}" / sample / graph.name)
    args = ["--af-open-graph", tmp_path / "graphs_open", "--af-close-graph", tmp_path / "graphs_close"]
    r = run("compare", *args, "--af-open-data", tmp_path / "open", "--af-close-data", tmp_path / "close")
    r = run(
        "compare",
        *args,
        "--af-open-data",
        tmp_path / "open",
        "--af-close-data",
        tmp_path / "close",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    introduced = {x["graph"]: x["summary"]["introduced"] for x in out["runs"]}
    assert introduced == {"m_a/1": [CULPRIT], "m_b/1": []}
    assert all(x["summary"]["compared"] for x in out["runs"])
    r = run(
        "compare",
        *args,
        "--af-open-data",
        tmp_path / "open" / STAMP / "0" / "m_b",
        "--af-close-data",
        tmp_path / "close" / STAMP / "0" / "m_b",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["summary"]["introduced"] == []
    empty = tmp_path / "nographs"
    empty.mkdir()
    r = run(
        "compare",
        "--af-open-graph",
        empty,
        *args[2:],
        "--af-open-data",
        tmp_path / "open",
        "--af-close-data",
        tmp_path / "close",
    )
    assert r.exit_code == 2 and "holds no fusion-on graph" in r.output


def test_each_rank_takes_the_graph_ge_dumped_for_its_device(trees, tmp_path):
    """DUMP_GRAPH_PATH/pid_{pid}_deviceid_{n}/: rank 1's graph (here without autofuse_4_Add) is
    used for rank 1 although rank 0's names more of its dumps."""
    for side in ("open", "close"):
        graph = json.loads((SAMPLE / f"dumpgraph_af_{side}" / "Build.json").read_text())
        for device in (0, 1):
            folder = tmp_path / side / f"pid_10{device}_deviceid_{device}"
            folder.mkdir(parents=True)
            if device == 1 and side == "open":
                for g in graph["graph"]:
                    g["op"] = [op for op in g["op"] if op["name"] != "autofuse_4_Add"]
            (folder / "ge_proto_00000001_graph_1_Build.json").write_text(json.dumps(graph))
    r = run(
        "compare",
        "--af-open-graph", tmp_path / "open",
        "--af-close-graph", tmp_path / "close",
        "--af-open-data", trees / "on",
        "--af-close-data", trees / "off",
        "--format", "json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    ops = {x["rank"]: {rec["fused_op"] for rec in x["records"]} for x in json.loads(r.stdout)["runs"]}
    assert "autofuse_4_Add" in ops["0"] and "autofuse_4_Add" not in ops["1"]


def test_model_explorer_export_needs_one_leaf(trees):
    r = compare(trees, "--format", "model-explorer")
    assert r.exit_code == 2 and "choose one with --ranks" in r.output
    r = compare(trees, "--format", "model-explorer", "--ranks", "0", "--steps", "1")
    assert r.exit_code == 0 and "autofuse_2_Add_LayerNorm" in json.loads(r.stdout)["Build"]["results"]


def test_adump_stream_trees_compare_every_device(tmp_path):
    write_adump_trees(tmp_path)
    r = compare(tmp_path, "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [(x["rank"], x["graph"], x["step"]) for x in out["runs"]] == [("0", None, None), ("1", None, None)]
    assert all(x["summary"]["introduced"] == [CULPRIT] for x in out["runs"])


def _graph_folders(tmp_path, names_on: list[str]) -> list:
    """``--af-*-graph`` folders: the sample's fusion-on graph as each of ``names_on`` (paths under
    the folder), its fusion-off graph once."""
    for name in names_on:
        (tmp_path / "g_on" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLE / "dumpgraph_af_open" / "Build.json", tmp_path / "g_on" / name)
    (tmp_path / "g_off").mkdir()
    shutil.copyfile(SAMPLE / "dumpgraph_af_close" / "Build.json", tmp_path / "g_off" / "Build.json")
    return ["--af-open-graph", tmp_path / "g_on", "--af-close-graph", tmp_path / "g_off"]


def test_a_graph_id_dumped_twice_on_a_device_is_a_warning_naming_both(trees, tmp_path):
    first, second = (f"pid_100_deviceid_0/ge_proto_0000000{i}_graph_1_Build.json" for i in (1, 7))
    graphs = _graph_folders(tmp_path, [first, second])
    data = ["--af-open-data", trees / "on", "--af-close-data", trees / "off", "-j", "1", "--format", "json"]
    r = run("compare", *graphs, *data)
    assert r.exit_code == 0, r.output
    warnings = json.loads(r.stdout)["summary"]["warnings"]
    (said,) = [w for w in warnings if w.startswith("rank 0, graph ge_default_1/1, step 1: ")]
    used, other = str(tmp_path / "g_on" / first), str(tmp_path / "g_on" / second)
    assert f"the fusion-on graph {used} was used" in said and f"{other} is the same graph id" in said
    assert said.split(": ", 1)[1] in r.stderr
    r = run("compare", *graphs, *data, "--ranks", "0", "--steps", "1")  # one leaf: its own report
    assert r.exit_code == 0, r.output
    assert any(other in w for w in json.loads(r.stdout)["summary"]["warnings"])


def test_two_graphs_of_a_rank_compared_against_one_graph_is_a_warning(tmp_path):
    for model in ("m_a", "m_b"):
        for side, src in (("on", "datadump_af_open"), ("off", "datadump_af_close")):
            shutil.copytree(SAMPLE / src, tmp_path / side / STAMP / "0" / model / "1" / "0")
    r = compare(tmp_path, "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [x["graph"] for x in out["runs"]] == ["m_a/1", "m_b/1"]
    assert (
        "rank 0, graph m_b/1, step 0: the dumps of graph m_a/1 and of graph m_b/1 were both compared "
        f"against the fusion-on graph {SAMPLE / 'dumpgraph_af_open' / 'Build.json'}: is a graph dump missing?"
    ) in out["summary"]["warnings"]


def test_dumps_that_name_no_op_of_any_graph_are_not_compared_and_said(tmp_path):
    for side, src in (("on", "datadump_af_open"), ("off", "datadump_af_close")):
        shutil.copytree(SAMPLE / src, tmp_path / side / STAMP / "0" / "m_a" / "1" / "0")
        stranger = tmp_path / side / STAMP / "0" / "m_b" / "1" / "0"
        stranger.mkdir(parents=True)
        for file in (SAMPLE / src).glob("*.npy"):
            op_type, rest = file.name.split(".", 1)
            shutil.copyfile(file, stranger / f"{op_type}.other_{rest}")
    graphs = _graph_folders(tmp_path, ["a/Build.json", "b/Build.json"])
    r = run(
        "compare", *graphs, "--af-open-data", tmp_path / "on", "--af-close-data", tmp_path / "off",
        "-j", "1", "--format", "json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    (stranger_run,) = [x for x in out["runs"] if x["graph"] == "m_b/1"]
    assert "names none of the ops of the 2 graphs" in stranger_run["error"]
    assert any(w.startswith("rank 0, graph m_b/1, step 0: ") for w in out["summary"]["warnings"])
    assert out["summary"]["unreadable"] == 1


def test_a_half_written_step_is_a_row_status_and_the_other_ranks_are_compared(trees, tmp_path):
    shutil.copytree(trees, tmp_path / "t")
    leaf = tmp_path / "t" / "on" / STAMP / "1" / "ge_default_1" / "1" / "1"
    half = next(leaf.glob(f"AscBackend.{CULPRIT}.*.output.0.npy"))
    half.write_bytes(half.read_bytes()[:100])
    r = compare(tmp_path / "t", "--format", "json")
    assert r.exit_code == 0, r.output
    runs = {x["rank"]: x for x in json.loads(r.stdout)["runs"]}
    statuses = {s for rec in runs["1"]["records"] for s in rec["status"]}
    assert "NPY_LOAD_ERROR" in statuses and "NPY_LOAD_ERROR" not in str(runs["0"]["records"])


def test_an_unreadable_step_folder_is_named_and_the_others_are_compared(trees, monkeypatch):
    locked = trees / "on" / STAMP / "1" / "ge_default_1" / "1" / "0"
    scandir = os.scandir

    def refusing(path="."):
        if os.path.normpath(os.fspath(path)) == str(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    r = compare(trees, "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [x["rank"] for x in out["runs"]] == ["0", "1"]
    assert {
        "what": str(locked),
        "why": "the fusion-on tree's folder cannot be read (Permission denied)",
    } in out["summary"]["scope"]["skipped"]
    # named once, there: each leaf lists its own folder only, not the whole tree again
    assert str(locked) not in json.dumps(out["runs"])


def test_the_table_says_where_and_from_which_step_each_introduced_op_fails(trees):
    r = compare(trees, "--steps", "all")
    assert r.exit_code == 0, r.output
    summary = r.stdout[r.stdout.index("the whole run") :]
    assert "first step" in summary
    (row,) = [line for line in summary.splitlines() if CULPRIT in line]
    assert [cell.strip() for cell in row.strip("│ ").split("│")] == [
        CULPRIT,
        "ge_default_1/1",
        "0,1",
        "some ranks",
        "0",
    ]


def test_odd_folders_a_flat_side_and_ranks_not_found_are_said_and_the_rest_compared(trees, tmp_path):
    shutil.copytree(trees, tmp_path / "t")
    bak = tmp_path / "t" / "on" / STAMP / "0" / "ge_default_1" / "1" / "1.bak"
    shutil.copytree(bak.parent / "1", bak)
    r = compare(tmp_path / "t", "--format", "json", "--ranks", "0-3")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [(x["rank"], x["step"]) for x in out["runs"]] == [("0", "1"), ("1", "1")]
    skipped = {s["what"]: s["why"] for s in out["summary"]["scope"]["skipped"]}
    assert "not a leaf like the others" in skipped[str(bak)]
    assert skipped["rank 2"] == skipped["rank 3"] == "asked for by --ranks 0-3; neither tree has it"
    for what in (str(bak), "rank 2", "rank 3"):
        assert f"fpinspect: warning: {what}: {skipped[what]}" in r.stderr
        assert f"{what}: {skipped[what]}" in out["summary"]["warnings"]
    flat = tmp_path / "flat"
    shutil.copytree(SAMPLE / "datadump_af_close", flat)
    r = run("compare", *_graphs(), "--af-open-data", trees / "on", "--af-close-data", flat)
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert r.stderr.count("\n") == 1 and "give both at the same level" in r.stderr


def test_fusion_on_dumps_in_a_step_folder_against_a_flat_folder_compare(tmp_path):
    shutil.copytree(SAMPLE / "datadump_af_open", tmp_path / "on" / "1")
    shutil.copytree(SAMPLE / "datadump_af_close", tmp_path / "off")
    r = compare(tmp_path, "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["summary"]["introduced"] == [CULPRIT]
    assert out["summary"]["iteration"] == {"fusion_on": "1", "fusion_off": "."}
    for file in (SAMPLE / "datadump_af_open").iterdir():  # flat files beside the step folder
        shutil.copyfile(file, tmp_path / "on" / file.name)
    r = compare(tmp_path, "--format", "json")
    assert r.exit_code == 0, r.output
    assert "no such step" not in r.output and "--iteration . --close-iteration ." in r.stderr
    assert json.loads(r.stdout)["summary"]["iteration"] == {"fusion_on": "1", "fusion_off": "."}


def test_the_newer_of_two_time_folders_is_compared(trees, tmp_path):
    shutil.copytree(trees, tmp_path / "t")
    shutil.copytree(tmp_path / "t" / "on" / STAMP, tmp_path / "t" / "on" / "20261204090000")
    r = compare(tmp_path / "t", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [x["fusion_on"].split("/")[0] for x in out["runs"]] == ["20261204090000"] * 2
    assert "which is compared: the later folder by name" in r.stderr


def test_step_folders_of_no_common_step_say_how_to_compare_two_of_them(tmp_path):
    for side, src, steps in (("on", "datadump_af_open", (1, 2)), ("off", "datadump_af_close", (3, 4))):
        for step in steps:
            shutil.copytree(SAMPLE / src, tmp_path / side / str(step))
    r = compare(tmp_path)
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert (
        "nothing to compare" in r.stderr
        and "--iteration A --close-iteration B compares the folders A and B" in r.stderr
    )
    r = compare(tmp_path, "--format", "json", "--iteration", "2", "--close-iteration", "4")
    assert r.exit_code == 0 and json.loads(r.stdout)["summary"]["introduced"] == [CULPRIT]
