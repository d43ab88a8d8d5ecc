"""`fpinspect report --plan`, `switches --plan` and `run all`: the whole test plan in one report."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fpinspect.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)

#: The cheapest settings of the tasks run for real: S (no compiler), D and B (one tiny chain).
TINY = {
    "S": ["--set", "anchors=4", "--set", "float32_pairs=4096", "--set", "stats_size=4096", "--set", "device_size=4096"],
    "D": ["--set", "chains=transpose_concat", "--set", "dtypes=float32", "--set", "shapes=[[4, 6]]"],
    "B": [
        "--set", "inputs=8", "--set", "rows=2", "--set", "hidden=64", "--set", "chains=mul_add_gelu_mul",
        "--set", "dtypes=float16", "--set", "distributions=normal",
    ],
}  # fmt: skip


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """S, D and B run once on the CPU with tiny settings, each into RESULTS/<task>/."""
    root = tmp_path_factory.mktemp("results")
    for task, settings in TINY.items():
        r = run("run", task, "--device", "cpu", "--out", root / task, *settings)
        assert r.exit_code == 0, r.output
    return root


@pytest.fixture
def copy(results, tmp_path):
    """A copy of the results to damage."""
    return Path(shutil.copytree(results, tmp_path / "results"))


@pytest.fixture(scope="module")
def page(results, tmp_path_factory):
    out = tmp_path_factory.mktemp("plan")
    r = run("report", "--plan", results, "--out", out / "plan.html", "--markdown", out / "plan.md")
    assert r.exit_code == 0, r.output
    return out / "plan.html", r


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_the_page_has_every_section_and_needs_no_other_file(page):
    html = page[0].read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "an external asset"
    for needle in ("id='index'", "id='s12'", "id='s61'", 'id="task-S"', 'id="task-D"', 'id="task-B"'):
        assert needle in html
    assert "3 of 8 tasks have a result; without one: A (missing), C1 (missing)" in html
    assert "Expectation and measurement" in html and "Error against float64, in ULP of the result" in html
    assert "data:image/png;base64," in html or "<svg" in html  # figures inline
    md = page[0].with_suffix(".md").read_text()
    assert "| S | P0 | precision toolkit" in md and "| A | P0 |" in md and "missing" in md
    # B's §12 table, ready to paste
    s12 = md.split("## §12 tables (A and B), ready to paste")[1].split("## §6.1")[0]
    assert "### A\n\nA has no result." in s12
    assert "### B: Error against float64" in s12 and "| mul_add_gelu_mul | float16 | normal | 8 |" in s12


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_missing_tasks_are_named_on_stderr(page):
    for task in ("A", "C1", "C2", "C3", "E"):
        assert f"fpinspect report: {task}: no result in" in page[1].stderr
    assert "Traceback" not in page[1].output


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_a_damaged_or_failed_result_is_named_not_raised(copy, tmp_path):
    (copy / "D" / "result.json").write_text('{"task": "D", "verdicts": [], "title": 3}')
    (copy / "C2").mkdir()
    (copy / "C2" / "run.json").write_text(
        json.dumps({"task": "C2", "status": "crash", "message": "the child died"})
    )
    out = tmp_path / "p.html"
    r = run("report", "--plan", copy, "--out", out)
    assert r.exit_code == 0 and "Traceback" not in r.output
    assert (
        f"D: {copy / 'D' / 'result.json'} is not a result this version can show: title must be text"
        in r.stderr
    )
    assert "C2: the run in" in r.stderr and "ended with crash (the child died)" in r.stderr
    html = out.read_text()
    assert '<tr class="damaged"><td>D</td>' in html and '<tr class="failed"><td>C2</td>' in html


def _b_with(results: Path, tmp_path: Path, counter: list, within: list) -> Path:
    root = tmp_path / "b"
    shutil.copytree(results / "B", root / "B")
    data = json.loads((root / "B" / "result.json").read_text())
    data["counter_examples"], data["worse_within_noise"] = counter, within
    data["expressions"]["softmax"] = "softmax(x, -1)"
    (root / "B" / "result.json").write_text(json.dumps(data))
    return root


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_the_switch_list_names_only_rows_worse_beyond_noise(results, tmp_path):
    worse = {
        "chain": "softmax", "dtype": "float16", "distribution": "large", "worse_in": ["P99", "max"],
        "fused": {"p99_ulp": 3.5, "max_ulp": 9.0}, "eager": {"p99_ulp": 1.5, "max_ulp": 4.0},
        "inputs_fused_worse": 7, "input_index": 12, "seed": 1246, "location": [1, 40],
        "fused_ulp_error": 9.0, "eager_ulp_error": 0.5,
    }  # fmt: skip
    within = {**worse, "chain": "mul_add_gelu_mul", "distribution": "normal"}
    root = _b_with(results, tmp_path, [worse], [within])
    r = run("switches", "--plan", root, "--format", "json")
    assert r.exit_code == 0, r.output
    listed = json.loads(r.stdout)
    assert [e["subject"] for e in listed["entries"]] == ["softmax"]
    entry = listed["entries"][0]
    assert entry["switches"][0]["setting"] == "--autofuse_disable_pass=reduce"
    assert "P99 3.5 fused vs 1.5 eager, max 9 vs 4 ULP" in entry["evidence"][0]
    assert "worst at input 12 (seed 1246), element [1, 40]" in entry["evidence"][0]
    assert any(
        "only within noise, so not counter-examples: mul_add_gelu_mul float16 normal" in n
        for n in listed["notes"]
    )
    text = run("switches", "--plan", root).stdout
    assert "softmax (B: softmax(x, -1))" in text and "--autofuse_disable_pass=reduce" in text
    # the same list is the plan report's §6.1
    md = tmp_path / "p.md"
    assert run("report", "--plan", root, "--out", tmp_path / "p.html", "--markdown", md).exit_code == 0
    assert "### softmax (B: `softmax(x, -1)`)" in md.read_text()


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_an_elementwise_chain_can_only_be_switched_off_whole(results, tmp_path):
    worse = {
        "chain": "mul_add_gelu_mul", "dtype": "float16", "distribution": "normal", "worse_in": ["max"],
        "fused": {"p99_ulp": 1.0, "max_ulp": 3.0}, "eager": {"p99_ulp": 1.0, "max_ulp": 2.0},
    }  # fmt: skip
    r = run("switches", "--plan", _b_with(results, tmp_path, [worse], []))
    assert r.exit_code == 0, r.output
    assert "--autofuse_enhance_precision_blacklist=all" in r.stdout and "--enable_autofuse=false" in r.stdout
    assert "pure elementwise fusion cannot be switched off" in r.stdout


@pytest.mark.parametrize(
    "args, needle",
    [
        (["report", "--plan", "{tmp}/nowhere", "--out", "{tmp}/p.html"], "does not exist"),
        (["report", "--plan", "{tmp}", "--out", "{tmp}/p.html"], "holds no task's result.json"),
        (["report", "{tmp}", "--plan", "{tmp}", "--out", "{tmp}/p.html"], "give either"),
        (
            ["report", "{tmp}", "--out", "{tmp}/p.html", "--markdown", "{tmp}/p.md"],
            "--markdown goes with --plan",
        ),
        (["switches", "--plan", "{tmp}/nowhere"], "does not exist"),
        (["switches"], "give either"),
        (["run", "all"], "run all takes --out DIR"),
        (["run", "all", "--out", "{tmp}/o", "--set", "runs=3"], "run all takes --out DIR"),
    ],
)
def test_bad_usage_is_one_sentence(tmp_path, args, needle):
    r = run(*(a.format(tmp=tmp_path) for a in args))
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.needs("torch")
@pytest.mark.slow
def test_run_all_goes_by_priority_past_a_failure_and_ends_with_the_report(results, tmp_path, monkeypatch):
    """The task runner is replaced by one that writes S's result under each task's name (a real
    run of every task is far too slow for the suite); C2 fails."""
    import fpinspect.cli.experiments as experiments
    from fpinspect.experiments.output import write_outputs
    from fpinspect.experiments.results import TaskReport

    calls = []

    def fake_run(task_id, settings, device, profile, out, err):
        calls.append((task_id, out))
        if task_id == "C2":
            raise experiments.TaskFailed("task C2 failed on device cpu: the child died", "crash")
        payload = {**json.loads((results / "S" / "result.json").read_text()), "task": task_id}
        report = TaskReport.from_dict(payload)
        write_outputs(report, out)
        return payload, report

    monkeypatch.setattr(experiments, "_run_and_write", fake_run)
    out = tmp_path / "all"
    r = run("run", "all", "--device", "cpu", "--out", out)
    assert r.exit_code == 1, r.output
    assert [t for t, _ in calls] == ["S", "A", "C1", "C2", "C3", "D", "B", "E"]
    assert all(folder.resolve() == (out / t).resolve() for t, folder in calls)
    assert json.loads((out / "C2" / "run.json").read_text())["status"] == "crash"
    assert json.loads((out / "E" / "run.json").read_text())["status"] == "finished"
    assert (out / "E" / "result.json").is_file() and not (out / "C2" / "result.json").exists()
    html = (out / "plan.html").read_text()
    assert "7 of 8 tasks have a result; without one: C2 (failed)." in html
    assert "ended with crash (task C2 failed on device cpu: the child died)" in (out / "plan.md").read_text()


@pytest.mark.needs("torch")
@needs_chromium
@pytest.mark.slow
def test_chromium_renders_the_plan_without_errors(page, tmp_path):
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--window-size=1200,1600", f"--screenshot={shot}", page[0].as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shot.exists(), proc.stderr[-2000:]
    image = pytest.importorskip("PIL.Image").open(shot).convert("RGB")
    assert len(image.getcolors(maxcolors=1 << 20) or []) > 10
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
