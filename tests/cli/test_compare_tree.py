"""`fpinspect compare` on whole dump trees: every rank compared, one report for the run, what was
left out said, one leaf's report unchanged."""

import json
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
