"""Thresholds, config files, dump names and iteration folders that used to be taken silently."""

from __future__ import annotations

import numpy as np
import pytest

from fpinspect.dumps.engine.verdict import ThresholdTable, load_table
from fpinspect.dumps.errors import InputError
from fpinspect.dumps.formats.datadump import DumpIndex, parse_dump_name


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1"])
def test_thresholds_must_be_finite_and_not_negative(value):
    with pytest.raises(ValueError, match="finite number >= 0"):
        load_table(None, (f"red_fail={value}",))


def test_warn_must_not_exceed_fail():
    with pytest.raises(ValueError, match="warning must come first"):
        load_table(None, ("float16.red_warn=5", "float16.red_fail=2"))
    with pytest.raises(ValueError, match="share of elements"):
        ThresholdTable().apply("ulp2_share_fail=30")
    assert load_table(None, ("red_warn=0.5", "red_fail=0.6")).for_format("float16").red_fail == 0.6


def test_config_values_are_checked_like_flags(tmp_path):
    cfg = tmp_path / "t.json"
    cfg.write_text('{"red_fail": "nan"}')
    with pytest.raises(InputError, match="must be a number"):
        load_table(str(cfg))
    cfg.write_text('{"red_fail": 1e999}')
    with pytest.raises(InputError, match="finite"):
        load_table(str(cfg))


def test_deeply_nested_config_is_one_sentence(tmp_path):
    cfg = tmp_path / "deep.json"
    cfg.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(InputError, match="nested too deeply"):
        load_table(str(cfg))


def test_toml_suffix_in_any_case(tmp_path):
    cfg = tmp_path / "T.TOML"
    cfg.write_text("red_fail = 3.0\n[float32]\nred_fail = 500.0\n")
    table = load_table(str(cfg))
    assert table.for_format("float16").red_fail == 3.0 and table.for_format("float32").red_fail == 500.0


@pytest.mark.parametrize("name", ["attn:q_proj", "ré_norm", "层_1"])
def test_names_keep_what_the_dumper_keeps(tmp_path, name):
    f = f"Add.{name}.3.1700000000000001.output.0.npy"
    assert parse_dump_name(f).op_name == name
    np.save(tmp_path / f, np.ones(2, np.float16))
    assert DumpIndex.scan(tmp_path).lookup(name, "output", 0) is not None


def test_folders_that_are_not_iterations_are_ignored_and_named(tmp_path):
    np.save(tmp_path / "Add.a.3.1700000000000001.output.0.npy", np.ones(2, np.float16))
    (tmp_path / "backup").mkdir()
    np.save(tmp_path / "backup" / "Add.b.3.1700000000000001.output.0.npy", np.ones(2, np.float16))
    (tmp_path / "zzz.npy").mkdir()
    np.save(tmp_path / "zzz.npy" / "Add.c.3.1700000000000001.output.0.npy", np.ones(2, np.float16))
    ix = DumpIndex.scan(tmp_path)
    assert ix.iteration == "." and ix.iterations == ["."]
    assert ix.lookup("a", "output", 0) is not None and ix.lookup("b", "output", 0) is None
    assert sum("not an iteration" in p for p in ix.problems) == 2


def test_numbered_iterations_still_work(tmp_path):
    for it in ("0", "1"):
        d = tmp_path / "20260101" / "0" / "model" / "1" / it
        d.mkdir(parents=True)
        np.save(d / "Add.a.3.1700000000000001.output.0.npy", np.full(2, int(it), np.float16))
    ix = DumpIndex.scan(tmp_path)
    assert ix.iteration.endswith("/1") and len(ix.iterations) == 2


def test_one_oversized_mapping_row_does_not_hide_the_rest(tmp_path):
    np.save(tmp_path / "0001.npy", np.ones(2, np.float16))
    (tmp_path / "mapping.csv").write_text(
        "x," + "y" * 200_000 + "\n0001.npy,Add.long_name.3.1700000000000001.output.0.npy\n"
    )
    ix = DumpIndex.scan(tmp_path)
    assert ix.lookup("long_name", "output", 0) is not None
    assert any("row 1 skipped" in p for p in ix.problems)


def test_a_global_fail_threshold_moves_default_warnings_along():
    table = load_table(None, ("red_fail=2",))
    f32 = table.for_format("float32")
    assert f32.red_fail == 2 and f32.red_warn == 2
    assert table.for_format("float16").red_warn == 0.75
