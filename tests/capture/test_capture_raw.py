"""capture --raw writes raw device dumps: they compare exactly as their .npy conversion does."""

import json

import numpy as np
import pytest
from capturecases import compare
from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.dumps.formats.datadump import DumpIndex
from fpinspect.dumps.formats.rawdump import read_raw_header

pytestmark = pytest.mark.slow  # compiles a small conv block with Inductor


@pytest.fixture(scope="module")
def odd_channels(inductor_cache):
    """A conv block with 5 channels: NC1HWC0 storage pads them to 16, so restoring crops."""
    import torch

    from fpinspect.capture import Capture
    from fpinspect.capture.demos import ConvBlock

    torch.manual_seed(0)
    return Capture(ConvBlock(cin=3, cout=5), (torch.randn(2, 3, 8, 8),), dtype="float16", name="odd")


@pytest.fixture(scope="module")
def pairs(odd_channels, tmp_path_factory):
    root = tmp_path_factory.mktemp("raw")
    npy = odd_channels.write(root / "npy", storage_layouts="ascend")
    raw = odd_channels.write(root / "raw", storage_layouts="ascend", raw=True)
    return root, npy, raw


def _records(pair, open_data=None, close_data=None):
    from fpinspect.dumps.engine.compare import DumpComparison

    if open_data is None:
        return compare(pair).to_json()
    return (
        DumpComparison(str(pair.open_graph), str(pair.close_graph), str(open_data), str(close_data))
        .run(compare_input=True)
        .to_json()
    )


def _without_files(report):
    return [{k: v for k, v in r.items() if not k.endswith("_file")} for r in report["records"]]


def test_raw_files_hold_headers_and_payloads(pairs):
    _, _, raw = pairs
    files = sorted(raw.open_data.iterdir())
    assert files and all("." in f.name and f.name.rpartition(".")[2].isdigit() for f in files)
    fused = [read_raw_header(f) for f in files if f.name.startswith("AscBackend.")]
    outs = [t for d in fused for t in d.outputs]
    assert outs and all(t.original_op is not None for t in outs)
    padded = [t for t in outs if t.layout == "NC1HWC0"]
    assert padded and all(t.shape[1] * t.shape[4] == 16 and t.original_shape[1] == 5 for t in padded)


def test_raw_pair_compares_to_the_same_records_as_npy(pairs):
    _, npy, raw = pairs
    from_npy, from_raw = _records(npy), _records(raw)
    assert _without_files(from_raw) == _without_files(from_npy)
    assert from_raw["summary"] == from_npy["summary"]
    crops = [
        r["conversion"] for r in from_raw["records"] if r["conversion"] and "NC1HWC0->NCHW" in r["conversion"]
    ]
    assert crops  # storage layouts restored (5 of 16 channels kept)
    assert all(r["fused_file"] is None or "." in r["fused_file"] for r in from_raw["records"])


def test_convert_round_trips_to_capture_npy_names_and_values(pairs):
    root, npy, raw = pairs
    runner = CliRunner()
    for side in ("open", "close"):
        result = runner.invoke(
            main, ["convert", str(getattr(raw, f"{side}_data")), str(root / f"conv_{side}")]
        )
        assert result.exit_code == 0, result.output
        written = sorted(p.name for p in (root / f"conv_{side}").iterdir())
        assert written == sorted(p.name for p in getattr(npy, f"{side}_data").iterdir())
        for name in written:
            a, b = np.load(root / f"conv_{side}" / name), np.load(getattr(npy, f"{side}_data") / name)
            assert a.dtype == b.dtype and np.array_equal(a, b)
    converted = _records(raw, root / "conv_open", root / "conv_close")
    assert _without_files(converted) == _without_files(_records(raw))


def test_folder_with_both_raw_and_npy_counts_each_dump_once(pairs, tmp_path):
    root, npy, raw = pairs
    both = tmp_path / "both"
    both.mkdir()
    for f in list(raw.open_data.iterdir()) + list(npy.open_data.iterdir()):
        (both / f.name).write_bytes(f.read_bytes())
    index = DumpIndex.scan(both)
    found = [index.lookup(f.op_name, f.io, f.index) for f in index.files]
    assert found and all(f.candidates == 1 and f.raw is not None for f in found)  # the raw file is preferred
    report = json.loads(json.dumps(_records(raw, both, raw.close_data)))
    assert "MULTIPLE_DUMPS" not in report["summary"]["statuses"]
