"""Dump trees of whole runs: leaves found and labelled wherever the user points, paired rank with
rank, graph with graph, step with step, and everything left out named with its reason."""

import numpy as np
import pytest

from fpinspect.dumps.errors import InputError
from fpinspect.dumps.runs.runtree import pair_trees, parse_choice, scan_tree

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


def _whys(scope) -> dict[str, str]:
    return {s["what"]: s["why"] for s in scope.skipped}


def test_odd_folders_are_left_out_with_a_warning_and_every_rank_is_still_paired(tmp_path):
    on = ge_tree(tmp_path / "on")
    model = on / "20261203101010" / "0" / "ge_default_1" / "1"
    odd = [leaf(model / name) for name in ("1.bak", "x", "-3")]
    tree = scan_tree(on)
    assert tree.layout == "ge" and labels(tree) == labels(scan_tree(ge_tree(tmp_path / "off")))
    scope = pair_trees(tree, scan_tree(tmp_path / "off"))
    assert [(a.rank, a.step) for a, _ in scope.compared] == [("0", "1"), ("1", "1")]
    for folder in odd:
        assert "is not a leaf like the others" in _whys(scope)[str(folder)]
        assert any(w.startswith(f"{folder}: ") for w in scope.warnings)
    for s in (0, 1):
        leaf(tmp_path / "it" / str(s))
    leaf(tmp_path / "it" / "x")
    steps = scan_tree(tmp_path / "it")
    assert [f.step for f in steps.leaves] == ["0", "1"] and str(tmp_path / "it" / "x") in steps.left_out


def test_a_tree_against_a_flat_folder_is_one_sentence_and_a_stray_folder_is_left_out(tmp_path):
    on = scan_tree(ge_tree(tmp_path / "on"))
    flat = scan_tree(leaf(tmp_path / "flat"))
    for a, b in ((on, flat), (flat, on)):
        with pytest.raises(
            ValueError,
            match="(GE dump tree of ranks 0, 1|one folder of dumps) and .* (one folder of dumps|GE dump tree of ranks 0, 1): give both at the same level",
        ):
            pair_trees(a, b)
    off = ge_tree(tmp_path / "off")
    leaf(off / "stray")
    scope = pair_trees(on, scan_tree(off))
    assert [(a.rank, a.step) for a, _ in scope.compared] == [("0", "1"), ("1", "1")]
    assert any(w.startswith(f"{off / 'stray'}: ") for w in scope.warnings)


def test_dumps_in_folders_of_no_layout_are_one_sentence(tmp_path):
    for name in ("a", "b/c", "d/e/f"):
        leaf(tmp_path / "mess" / name)
    with pytest.raises(InputError, match="holds dumps in 3 folders that fit no dump tree layout"):
        scan_tree(tmp_path / "mess")


def test_the_same_ranks_under_two_time_folders_compare_the_newer_with_a_warning(tmp_path):
    on = ge_tree(tmp_path / "on")
    for r in (0, 1):
        for s in (0, 1):
            leaf(on / "20261204090000" / str(r) / "ge_default_1" / "1" / str(s))
    scope = pair_trees(scan_tree(on), scan_tree(ge_tree(tmp_path / "off")))
    assert [a.rel for a, _ in scope.compared] == [
        "20261204090000/0/ge_default_1/1/1",
        "20261204090000/1/ge_default_1/1/1",
    ]
    older = str(on / "20261203101010" / "0" / "ge_default_1" / "1" / "1")
    newer = str(on / "20261204090000" / "0" / "ge_default_1" / "1" / "1")
    assert f"as {newer}, which is compared" in _whys(scope)[older]
    assert any(w.startswith(older) for w in scope.warnings)
    assert "rank 0, graph ge_default_1/1, step 0" in _whys(scope)  # the older step, rightly named


def test_a_range_of_ranks_names_what_it_did_not_find(tmp_path):
    on = scan_tree(ge_tree(tmp_path / "on"))
    off = scan_tree(ge_tree(tmp_path / "off"))
    scope = pair_trees(on, off, ranks=parse_choice("0-3", "ranks"))
    assert [a.rank for a, _ in scope.compared] == ["0", "1"]
    assert _whys(scope)["rank 2"] == _whys(scope)["rank 3"] == "asked for by --ranks 0-3; neither tree has it"
    assert scope.warnings == [
        "rank 2: asked for by --ranks 0-3; neither tree has it",
        "rank 3: asked for by --ranks 0-3; neither tree has it",
    ]


def test_a_huge_range_is_never_expanded(tmp_path):
    import tracemalloc

    on = scan_tree(ge_tree(tmp_path / "on"))
    off = scan_tree(ge_tree(tmp_path / "off"))
    tracemalloc.start()
    try:
        scope = pair_trees(on, off, ranks=parse_choice("0-2000000", "ranks"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert [a.rank for a, _ in scope.compared] == ["0", "1"]
    assert scope.warnings == ["ranks 2-2000000: asked for by --ranks 0-2000000; neither tree has them"]
    scope = pair_trees(on, off, ranks=parse_choice("0-99999999999999", "ranks"))
    assert [a.rank for a, _ in scope.compared] == ["0", "1"]


def test_a_flat_folder_pairs_with_the_latest_step_folder_of_the_other_side(tmp_path):
    leaf(tmp_path / "on" / "1")
    flat = scan_tree(leaf(tmp_path / "off"))
    scope = pair_trees(scan_tree(tmp_path / "on"), flat)
    assert [(a.rel, b.rel) for a, b in scope.compared] == [("1", ".")] and scope.one_leaf
    leaf(tmp_path / "on")  # files beside the step folder too
    scope = pair_trees(scan_tree(tmp_path / "on"), flat)
    assert [(a.rel, b.rel) for a, b in scope.compared] == [("1", ".")]
    assert "no such step" not in str(scope.skipped)
    (said,) = scope.warnings
    assert said.startswith(f"the files directly in {tmp_path / 'on'}: ")
    assert "compared with step 1, the latest; --iteration . --close-iteration . compares this one" in said
    scope = pair_trees(flat, scan_tree(tmp_path / "on"))
    assert [(a.rel, b.rel) for a, b in scope.compared] == [(".", "1")]
    assert "--close-iteration . --iteration ." in scope.warnings[0]


def test_the_one_folder_holding_dumps_is_the_leaf_whatever_its_name(tmp_path):
    leaf(tmp_path / "on" / "dump_tensor_data")
    tree = scan_tree(tmp_path / "on")
    assert [f.rel for f in tree.leaves] == ["dump_tensor_data"] and not tree.left_out
    leaf(tmp_path / "off" / "0")
    leaf(tmp_path / "off" / "1")
    leaf(tmp_path / "one" / "0")
    scope = pair_trees(scan_tree(tmp_path / "one"), scan_tree(tmp_path / "off"))
    assert [(a.step, b.step) for a, b in scope.compared] == [("0", "0")]
