import importlib.util
import json
import sys

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from fpinspect.cli.experiments import render_report, run_command, tasks_command
from fpinspect.experiments.output import write_outputs
from fpinspect.experiments.registry import TASK_IDS
from fpinspect.experiments.results import Histogram, Table, TaskReport, Verdict


@click.group()
def cli():
    """Stands in for fpinspect.cli:main, which registers the same commands."""


cli.add_command(run_command)
cli.add_command(tasks_command)


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def assert_one_sentence(result, code, text):
    assert result.exit_code == code
    assert result.stderr.strip().startswith("fpinspect run: ") and text in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_tasks_lists_every_task_with_both_profiles():
    result = invoke("tasks")
    assert result.exit_code == 0
    for task_id in TASK_IDS:
        assert f"{task_id} " in result.stdout
    assert "quick" in result.stdout and "full" in result.stdout and "[8, 2048, 4096]" in result.stdout
    assert "docs/test-plan.md" in result.stdout  # where the claims' section numbers are defined
    # D sweeps dtypes: its unused common dtype field is not listed, lists are JSON
    out = result.stdout
    d = out[out.index("D  Pure data movement") : out.index("B  Accumulated error")]
    assert '["float16", "bfloat16", "float32"]' in d and "dtype " not in d


def test_unknown_task_is_one_sentence_and_exit_2():
    assert_one_sentence(invoke("run", "Q"), 2, "unknown task 'Q'; choose one of " + ", ".join(TASK_IDS))


@pytest.mark.needs("torch")
@pytest.mark.skipif(importlib.util.find_spec("torch_npu") is not None, reason="an NPU stack is installed")
def test_unavailable_device_is_one_sentence_and_exit_2():
    assert_one_sentence(invoke("run", "C1", "--device", "npu"), 2, "device 'npu' is not available")


def test_unwritable_out_is_one_sentence_and_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_one_sentence(
        invoke("run", "C1", "--out", str(blocker / "sub")), 2, "cannot create the output folder"
    )


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_run_writes_json_report_and_figures(tmp_path):
    # task S, small: the command's outputs are the same for every task, and S needs no compiler
    # (the fused tasks' command path: test_overrides_reach_the_child_and_out_works_without_matplotlib)
    small = [f"--set={k}=4096" for k in ("float32_pairs", "stats_size", "device_size")]
    result = invoke("run", "s", "--device", "cpu", "--format", "json", "--out", str(tmp_path), *small)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["task"] == "S" and payload["all_passed"] is True and payload["histograms"]
    assert json.loads((tmp_path / "result.json").read_text()) == payload
    md = (tmp_path / "report.md").read_text()
    pngs = sorted((tmp_path / "figures").glob("*.png"))
    assert len(pngs) == len(payload["histograms"]) and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    assert all(f"(figures/{p.name})" in md for p in pngs)
    assert "## Expectation and measurement" in md and "## Environment" in md


def _report():
    return TaskReport(
        task="C2",
        title="Reduction order",
        claim="§1.2 (3)",
        profile="quick",
        environment={
            "device": "cpu",
            "torch": "2.x",
            "device_name": "test cpu",
            "inductor": {"fx_graph_cache": True},
        },
        settings={"dtype": "float16", "seed": 7},
        data={"ulp_matrix": [[0]]},
        verdicts=[Verdict("topic one", "expected this", "measured that | with a pipe", False)],
        tables=[
            Table("Main", ("a", "b"), ((1, 0.123456789),)),
            Table("Code", ("line",), (("x\ny",),), summary=False),
        ],
        histograms=[Histogram("h1", "Title", "x", ("0", "1"), (4, 1))],
    )


def test_render_report_shows_verdicts_and_summary_tables():
    console = Console(record=True, width=160)
    render_report(console, _report())
    text = console.export_text()
    assert "topic one" in text and "measured that" in text and "Main" in text and "0.123457" in text
    assert "Also in report.md" in text and "x\ny" not in text


@pytest.mark.needs("matplotlib")
def test_write_outputs_escapes_markdown_and_flattens_environment(tmp_path):
    written = write_outputs(_report(), tmp_path / "out")
    assert [p.name for p in written] == ["result.json", "report.md", "h1.png"]
    md = (tmp_path / "out" / "report.md").read_text()
    assert "measured that \\| with a pipe" in md and "x<br>y" in md
    assert "| inductor.fx_graph_cache | yes |" in md
    assert "![Title](figures/h1.png)" in md


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--set", "runs"], "--set expects KEY=VALUE, not 'runs'"),
        (["--set", "colour=red"], "task C2: there is no setting 'colour'; the settings are dtype, seed, n"),
        (["--set", "runs=many"], "setting 'runs' expects an integer, not 'many'"),
        (["--set", "chunk_sizes=384"], "these settings are refused: chunk size 384 must be a power of two"),
        (["--set", "dtype=float17"], "'float17' is not a float format name"),
        (["--seed", "-3"], "--seed must be an integer from 0 to 2**63 - 1, not -3"),
    ],
)
def test_bad_overrides_are_one_sentence_and_exit_2(args, text):
    assert_one_sentence(invoke("run", "C2", "--device", "cpu", *args), 2, text)


def _tiny_d(*extra):
    return invoke(
        "run",
        "D",
        "--device",
        "cpu",
        "--format",
        "json",
        "--seed",
        "11",
        "--set",
        "chains=reshape_squeeze_expand",
        "--set",
        "dtypes=float32",
        "--set",
        "shapes=[[4, 6]]",
        *extra,
    )


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_overrides_reach_the_child_and_out_works_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed: no import finds it
    result = _tiny_d("--out", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["settings"]["seed"] == 11 and payload["settings"]["shapes"] == [[4, 6]]
    assert [(r["chain"], r["dtype"], r["shape"]) for r in payload["table"]] == [
        ("reshape_squeeze_expand", "float32", [4, 6])
    ]
    assert json.loads((tmp_path / "result.json").read_text()) == payload
    assert not (tmp_path / "figures").exists()
    md = (tmp_path / "report.md").read_text()
    assert "Not drawn (matplotlib is not installed" in md and "Cells where fused differs from eager" in md
    assert "1 figure(s) were not drawn: Cells where fused differs from eager, per chain." in " ".join(
        result.stderr.split()
    )


def test_tables_keep_numbers_as_numbers(tmp_path):
    report = _report()
    write_outputs(report, tmp_path)
    rows = json.loads((tmp_path / "result.json").read_text())["tables"][0]["rows"]
    assert rows == [[1, 0.123456789]]


def test_cells_with_brackets_are_printed_as_they_are():
    report = _report()
    report.tables.append(Table("Chains [x]", ("expression",), (("cat([x.T, y.T], 0)",),)))
    report.verdicts.append(Verdict("t", "e", "shape [a, b] kept", None))
    console = Console(record=True, width=200)
    render_report(console, report)
    text = console.export_text()
    assert "cat([x.T, y.T], 0)" in text and "shape [a, b] kept" in text and "Chains [x]" in text
