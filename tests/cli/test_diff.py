"""`fpinspect diff` and `fusion-precision-analyzer --mode 2`, as a user runs them."""

import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.legacy import main as legacy_main

rng = np.random.default_rng(42)


@pytest.fixture
def pair(tmp_path):
    ref = rng.standard_normal((32, 48)).astype(np.float16)
    x = (ref.astype(np.float32) * (1 + rng.uniform(-1e-3, 1e-3, ref.shape))).astype(np.float16)
    x[5, 7] = np.nan
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, x)
    np.save(b, ref)
    return a, b, x, ref


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_table_output_has_every_section(pair):
    a, b, *_ = pair
    r = run("diff", a, b)
    assert r.exit_code == 0, r.output
    for text in (
        "NAN_MISMATCH",
        "cosine similarity",
        "P50 / P99 / max",
        "share at 0 / 1 / >=2 ULP",
        "NaN on one side",
        "Worst elements",
        "[5, 7]",
        "0x7e00",
        "KL divergence",
    ):
        assert text in r.output, text


def test_json_contract(pair):
    a, b, x, ref = pair
    r = run("diff", a, b, "--format", "json")
    assert r.exit_code == 0
    out = json.loads(r.output)
    assert set(out) >= {"status", "cosine", "max_abs", "max_rel", "metrics"}
    assert out["status"] == ["NAN_MISMATCH"]
    # the reference script's formulas give NaN here; JSON has no NaN, so null
    assert out["cosine"] is None
    m = out["metrics"]
    assert m["nan_mismatch"] == 1 and m["finite"] == x.size - 1
    assert m["ulp"]["kind"] == "diff" and sum(m["ulp"]["share"].values()) == pytest.approx(1)
    assert m["worst"][0]["index"] == [5, 7]


def test_clean_pair_numbers_match_the_reference_formulas(tmp_path):
    ref = rng.standard_normal(1000).astype(np.float32)
    x = ref * np.float32(1.0001)
    np.save(tmp_path / "a.npy", x)
    np.save(tmp_path / "b.npy", ref)
    out = json.loads(run("diff", tmp_path / "a.npy", tmp_path / "b.npy", "--format", "json").output)
    a64, b64 = x.astype(np.float64), ref.astype(np.float64)
    assert out["status"] == ["OK"]
    assert out["cosine"] == pytest.approx(
        np.dot(a64, b64) / (np.linalg.norm(a64) * np.linalg.norm(b64) + 1e-8), rel=1e-14
    )
    assert out["max_abs"] == np.abs(a64 - b64).max()


def test_dtype_cast_and_flatten_and_mismatch(tmp_path):
    np.save(tmp_path / "h.npy", np.ones((4, 6), np.float16))
    np.save(tmp_path / "f.npy", np.ones(24, np.float32))
    np.save(tmp_path / "g.npy", np.ones(25, np.float32))
    out = json.loads(run("diff", tmp_path / "h.npy", tmp_path / "f.npy", "--format", "json").output)
    assert out["status"] == ["DTYPE_CAST", "SHAPE_FLATTENED"] and out["cosine"] == pytest.approx(1, abs=1e-8)
    r = run("diff", tmp_path / "f.npy", tmp_path / "g.npy", "--format", "json")
    out = json.loads(r.stdout)
    assert out["status"] == ["SHAPE_MISMATCH"] and out["cosine"] is None and "24" in out["message"]
    assert r.exit_code == 2  # nothing was compared


def test_missing_file_is_a_usage_error(tmp_path, pair):
    a, *_ = pair
    r = run("diff", a, tmp_path / "nope.npy")
    assert r.exit_code == 2
    assert "nope.npy does not exist" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("kind", ["pickled", "truncated", "garbage"])
def test_unreadable_files_exit_2_with_a_status_and_no_traceback(tmp_path, pair, kind):
    a, *_ = pair
    bad = tmp_path / "bad.npy"
    if kind == "pickled":
        np.save(bad, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    elif kind == "truncated":
        np.save(bad, np.ones(1000, np.float32))
        bad.write_bytes(bad.read_bytes()[:500])
    else:
        bad.write_bytes(b"not a numpy file at all")
    proc = subprocess.run(
        [sys.executable, "-m", "fpinspect", "diff", str(a), str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "NPY_LOAD_ERROR" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
    assert "bad.npy" in proc.stdout


def test_max_ulp_gate(tmp_path):
    x = np.ones(10, np.float16)
    np.save(tmp_path / "a.npy", x)
    np.save(tmp_path / "b.npy", np.nextafter(x, np.float16(2)))
    assert run("diff", tmp_path / "a.npy", tmp_path / "b.npy", "--max-ulp", "1").exit_code == 0
    assert run("diff", tmp_path / "a.npy", tmp_path / "b.npy", "--max-ulp", "0").exit_code == 1


def test_legacy_mode2_prints_the_reference_lines(pair, capsys):
    a, b, *_ = pair
    np.save(a, np.ones((32, 48), np.float32))  # a clean, different-dtype pair
    np.save(b, np.ones((32, 48), np.float16))
    assert legacy_main(["--mode", "2", "--npy-a", str(a), "--npy-b", str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"文件A: {a}" and lines[1] == f"文件B: {b}"
    assert lines[2] == "状态: DTYPE_CAST"
    assert lines[3] == "余弦相似度: 1.0000000000"
    assert lines[4] == "绝对误差最大值: 0.000000e+00" and lines[5] == "相对误差最大值: 0.000000e+00"


def test_legacy_mode2_keeps_reference_status_codes_only(pair, capsys):
    a, b, *_ = pair  # has a NaN: the reference script would still say OK
    legacy_main(["--mode", "2", "--npy-a", str(a), "--npy-b", str(b)])
    assert "状态: OK" in capsys.readouterr().out


def test_legacy_missing_file(tmp_path, capsys):
    assert (
        legacy_main(["--mode", "2", "--npy-a", str(tmp_path / "x.npy"), "--npy-b", str(tmp_path / "y.npy")])
        == 2
    )
    assert "does not exist" in capsys.readouterr().err


def test_integers_are_compared_exactly(tmp_path):
    np.save(tmp_path / "a.npy", np.array([2**62, 5, -(2**63)], np.int64))
    np.save(tmp_path / "b.npy", np.array([2**62 + 1, 5, 2**63 - 1], np.int64))
    r = run("diff", tmp_path / "a.npy", tmp_path / "b.npy", "--format", "json", "--max-ulp", "0")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["max_abs"] == 2**64 - 1 and out["max_rel"] > 0
    m = out["metrics"]
    assert m["ulp"]["max"] == 2**64 - 1 and m["ulp"]["dtype"] == "int64" and m["abs"]["max"] == 2**64 - 1
    assert m["mismatched"] == 2 and m["ulp"]["share"] == {"0": 1 / 3, "1": 1 / 3, ">=2": 1 / 3}
    assert [(w["index"], w["a"], w["b"], w["ulp"]) for w in m["worst"]] == [
        ([2], -(2**63), 2**63 - 1, 2**64 - 1),
        ([0], 2**62, 2**62 + 1, 1),
    ]
    one_apart = run("diff", tmp_path / "a.npy", tmp_path / "b.npy", "--max-ulp", str(2**64 - 1))
    assert one_apart.exit_code == 0 and "(int64, integer distance)" in one_apart.stdout


def test_signed_against_unsigned_64_bit_integers(tmp_path):
    np.save(tmp_path / "a.npy", np.array([-1, 3], np.int64))
    np.save(tmp_path / "b.npy", np.array([2**64 - 1, 3], np.uint64))
    out = json.loads(run("diff", tmp_path / "a.npy", tmp_path / "b.npy", "--format", "json").stdout)
    assert out["max_abs"] == 2**64 and out["metrics"]["worst"][0]["ulp"] == 2**64


@pytest.mark.parametrize(
    ("a", "b", "needle"),
    [
        (np.zeros(4, "V0"), np.zeros(4, "V0"), "zero bytes"),
        (np.zeros(4, "V2"), np.zeros(4, np.float16), "COMPUTE_ERROR"),
        (np.ones(4, np.float16), np.ones(3, np.float16), "SHAPE_MISMATCH"),
    ],
)
def test_diff_that_compared_nothing_exits_2_in_one_sentence(tmp_path, a, b, needle):
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    for fmt in ("table", "json"):
        r = run("diff", tmp_path / "a.npy", tmp_path / "b.npy", "--format", fmt)
        assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


def test_the_two_relative_errors_are_named_by_their_formulas(tmp_path):
    """The reference's max relative error (against the larger magnitude) and the error relative
    to B (the statistics and the worst elements) differ on the same pair: each is labelled with
    its formula, and the elements the statistics leave out (|B| 0 here, so inf among the worst
    elements) are counted."""
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.array([1.0, 0.5, 1e-6, 8.0, 3.0], np.float16))
    np.save(b, np.array([1.0, 0.0, 0.0, 1.0, 3.0], np.float16))
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["diff", str(a), str(b)])
    assert r.exit_code == 0, r.output
    lines = [" ".join(line.split()) for line in r.output.splitlines()]
    assert "max relative error, |A-B| / max(|A|,|B|) 1.0000e+00" in lines
    assert "relative, |A-B|/|B| max / mean 7.0000e+00 / 2.3333e+00" in lines
    assert "left out of |A-B|/|B| 2 with |B| below normal" in lines
    assert "index A B abs |A-B|/|B| ULP A bits B bits" in lines
    assert "[1] 0.5 0 5.000e-01 inf 14,336 0x3800 0x0000" in lines
    assert not any(line.startswith(("relative max", "max relative error 1")) for line in lines)
