"""Dump trees of whole runs: leaves found and labelled wherever the user points, paired rank with
rank, graph with graph, step with step, and everything left out named with its reason."""

import numpy as np
import pytest

from fpinspect.dumps.errors import InputError
from fpinspect.dumps.runtree import pair_trees, parse_choice, scan_tree

DUMP = "Add.add.1.0.1700000000000001.output.0.npy"


def leaf(folder, name=DUMP):
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / name, np.zeros(4, np.float16))
    return folder


def ge_tree(root, ranks=(0, 1), steps=(0, 1), models=("ge_default_1",)):
    for r in ranks:
        for m in models:
            for s in steps:
                leaf(root / "20261203101010" / str(r) / m / "1" / str(s))
    return root


def labels(tree):
    return [(f.rank, f.graph, f.step) for f in tree.leaves]


def test_ge_tree_labels_from_the_root_a_device_folder_and_a_leaf(tmp_path):
    ge_tree(tmp_path / "on")
    tree = scan_tree(tmp_path / "on")
    assert tree.layout == "ge"
    assert labels(tree) == [
        ("0", "ge_default_1/1", "0"),
        ("0", "ge_default_1/1", "1"),
        ("1", "ge_default_1/1", "0"),
        ("1", "ge_default_1/1", "1"),
    ]
    assert tree.ranks == ["0", "1"]
    assert labels(scan_tree(tmp_path / "on" / "20261203101010" / "1")) == [
        ("1", "ge_default_1/1", "0"),
        ("1", "ge_default_1/1", "1"),
    ]
    one = scan_tree(tmp_path / "on" / "20261203101010" / "1" / "ge_default_1" / "1" / "0")
    assert labels(one) == [("1", "ge_default_1/1", "0")] and one.leaves[0].rel == "."


def test_msprobe_steps_and_flat_layouts(tmp_path):
    for s in (0, 1):
        for r in (0, 1):
            leaf(tmp_path / "ms" / f"step{s}" / f"rank{r}" / "dump_tensor_data")
    tree = scan_tree(tmp_path / "ms")
    assert tree.layout == "msprobe"
    assert labels(tree) == [("0", None, "0"), ("0", None, "1"), ("1", None, "0"), ("1", None, "1")]
    for s in (2, 9, 10):
        leaf(tmp_path / "it" / str(s))
    steps = scan_tree(tmp_path / "it")
    assert steps.layout == "steps" and [f.step for f in steps.leaves] == ["2", "9", "10"]
    flat = scan_tree(leaf(tmp_path / "flat"))
    assert flat.layout == "flat" and labels(flat) == [(None, None, None)]


def test_missing_and_empty_folders_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        scan_tree(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no dump files"):
        scan_tree(tmp_path / "empty")


def test_default_pairs_every_rank_at_the_latest_common_step_and_says_what_it_left_out(tmp_path):
    on = scan_tree(ge_tree(tmp_path / "on", ranks=(0, 1, 2), steps=(0, 1, 2)))
    off = scan_tree(ge_tree(tmp_path / "off", ranks=(0, 1), steps=(0, 1)))
    scope = pair_trees(on, off)
    assert [(a.rank, a.step, b.rank, b.step) for a, b in scope.compared] == [
        ("0", "1", "0", "1"),
        ("1", "1", "1", "1"),
    ]
    whys = {s["what"]: s["why"] for s in scope.skipped}
    assert whys["rank 2"] == "the fusion-off tree has no rank 2"
    assert "earlier than the latest step" in whys["rank 0, graph ge_default_1/1, step 0"]
    assert whys["rank 0, graph ge_default_1/1, step 2"] == "the fusion-off tree has no such step"
    assert not scope.one_leaf


def test_choices_and_all_steps(tmp_path):
    on = scan_tree(ge_tree(tmp_path / "on", ranks=(0, 1, 2, 3)))
    off = scan_tree(ge_tree(tmp_path / "off", ranks=(0, 1, 2, 3)))
    scope = pair_trees(on, off, ranks=parse_choice("1-2", "ranks"), steps="all")
    assert [(a.rank, a.step) for a, _ in scope.compared] == [("1", "0"), ("1", "1"), ("2", "0"), ("2", "1")]
    assert [s["what"] for s in scope.skipped] == ["rank 0", "rank 3"]
    scope = pair_trees(on, off, ranks=["0"], steps=["0"])
    assert [(a.rank, a.step) for a, _ in scope.compared] == [("0", "0")]
    with pytest.raises(ValueError, match=r"--ranks: neither tree has 7 \(there are: 0, 1, 2, 3\)"):
        pair_trees(on, off, ranks=["7"])
    with pytest.raises(ValueError, match="runs backwards"):
        parse_choice("3-1", "ranks")


def test_an_empty_rank_folder_is_named_not_dropped(tmp_path):
    on = ge_tree(tmp_path / "on")
    (on / "20261203101010" / "2").mkdir()
    ge_tree(tmp_path / "off", ranks=(0, 1, 2))
    scope = pair_trees(scan_tree(on), scan_tree(tmp_path / "off"))
    whys = {s["what"]: s["why"] for s in scope.skipped}
    assert "rank 2" in whys and "holds no dump files" in whys["rank 2"]
    assert str(on / "20261203101010" / "2") in whys["rank 2"]


def test_graphs_pair_by_name_and_a_lone_renamed_graph_pairs_with_its_counterpart(tmp_path):
    on = scan_tree(ge_tree(tmp_path / "on", models=("m_a", "m_b"), ranks=(0,), steps=(0,)))
    off = scan_tree(ge_tree(tmp_path / "off", models=("m_a", "m_c"), ranks=(0,), steps=(0,)))
    scope = pair_trees(on, off)
    assert [(a.graph, b.graph) for a, b in scope.compared] == [("m_a/1", "m_a/1"), ("m_b/1", "m_c/1")]
    scope = pair_trees(on, off, graphs=["m_a"])
    assert [a.graph for a, _ in scope.compared] == ["m_a/1"]
    assert scope.skipped == [{"what": "rank 0, graph m_b/1", "why": "not among --graphs"}]


def test_one_folder_on_each_side_pairs_whatever_their_labels(tmp_path):
    on = scan_tree(leaf(tmp_path / "flat"))
    off = scan_tree(ge_tree(tmp_path / "off", ranks=(0,), steps=(3,)))
    scope = pair_trees(on, off)
    assert len(scope.compared) == 1 and scope.one_leaf


ADUMP = "Add.add.7.1.0.1700000000000001.output.0.npy"  # type.name.dump_number.task.stream.timestamp


def test_adump_stream_folders_are_ranks_wherever_the_user_points(tmp_path):
    for device in (0, 1):
        leaf(tmp_path / "on" / str(device), ADUMP)
    (tmp_path / "on" / "2").mkdir()
    tree = scan_tree(tmp_path / "on")
    assert tree.layout == "device"
    assert labels(tree) == [("0", None, None), ("1", None, None)]
    assert tree.empty_ranks == {"2": str(tmp_path / "on" / "2")}
    assert labels(scan_tree(tmp_path / "on" / "1")) == [("1", None, None)]
    for device in (0, 1, 2):
        leaf(tmp_path / "off" / str(device), ADUMP)
    scope = pair_trees(tree, scan_tree(tmp_path / "off"))
    assert [(a.rank, b.rank, a.rel) for a, b in scope.compared] == [("0", "0", "0"), ("1", "1", "1")]
    assert scope.skipped[0]["what"] == "rank 2" and "holds no dump files" in scope.skipped[0]["why"]


def test_ge_single_op_dumps_are_one_folder_per_device(tmp_path):
    for device in (0, 3):
        leaf(tmp_path / "on" / "20261203101010" / str(device))
    tree = scan_tree(tmp_path / "on")
    assert tree.layout == "device" and labels(tree) == [("0", None, None), ("3", None, None)]
    assert labels(scan_tree(tmp_path / "on" / "20261203101010" / "3")) == [("3", None, None)]


def test_numbered_folders_of_datadump_names_stay_steps(tmp_path):
    for s in (0, 1):
        leaf(tmp_path / "it" / str(s))
    assert scan_tree(tmp_path / "it").layout == "steps"
