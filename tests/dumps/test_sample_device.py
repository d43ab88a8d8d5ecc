"""The bundled device/ sample: raw dump files with storage layouts, compared and converted end to end."""

import json
from pathlib import Path

from click.testing import CliRunner

from fpinspect.cli import main
from fpinspect.dumps.engine.compare import DumpComparison
from fpinspect.dumps.formats.datadump import DumpIndex

SAMPLE = Path(__file__).resolve().parents[2] / "sample_dumps" / "device"


def _report(open_data: Path, close_data: Path) -> dict:
    return (
        DumpComparison(
            str(SAMPLE / "dumpgraph_af_open" / "Build.json"),
            str(SAMPLE / "dumpgraph_af_close" / "Build.json"),
            str(open_data),
            str(close_data),
        )
        .run(compare_input=True)
        .to_json()
    )


def test_device_sample_is_raw_and_compares_clean():
    index = DumpIndex.scan(SAMPLE / "datadump_af_open")
    assert index.files and all(f.raw is not None for f in index.files)
    report = _report(SAMPLE / "datadump_af_open", SAMPLE / "datadump_af_close")
    outputs = [r for r in report["records"] if r["kind"] == "output"]
    assert outputs and all(r["verdict"] == "pass" for r in outputs)
    assert any("FORMAT_CONVERTED" in r["status"] for r in outputs)  # NC1HWC0 restored
    assert "RAW_LOAD_ERROR" not in report["summary"]["statuses"]


def test_device_sample_converts_to_the_same_records(tmp_path):
    for side in ("open", "close"):
        result = CliRunner().invoke(
            main, ["convert", str(SAMPLE / f"datadump_af_{side}"), str(tmp_path / side)]
        )
        assert result.exit_code == 0, result.output
    converted = _report(tmp_path / "open", tmp_path / "close")
    raw = _report(SAMPLE / "datadump_af_open", SAMPLE / "datadump_af_close")

    def strip(report):
        return [{k: v for k, v in r.items() if not k.endswith("_file")} for r in report["records"]]

    assert strip(converted) == strip(raw)
    assert json.dumps(converted["summary"]["verdicts"]) == json.dumps(raw["summary"]["verdicts"])
