"""`fpinspect switches CAPTURE_DIR` (Inductor): the regions to leave unfused, the code that does it
in the user's model, a check by running the capture again, and `capture --unfuse` that runs it."""

import json
import shlex

import pytest
from click.testing import CliRunner

from fpinspect.cli import main

INJECTS = ["0=bf16", "2=bf16"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def faulty(transformer_capture, tmp_path_factory):
    """A transformer capture with faults in region 0 (ln1's LayerNorm, one submodule) and region 2
    (the residual add in the model's own forward + ln2's LayerNorm), and a confirm.json that
    confirms region 4 and names a region this capture has not."""
    from fpinspect.capture import Injection
    from fpinspect.capture.spec import CaptureSpec

    out = tmp_path_factory.mktemp("faulty")
    transformer_capture.write(out, injections=[Injection.parse(i) for i in INJECTS])
    CaptureSpec("transformer", inject=INJECTS).write(out)
    (out / "confirm.json").write_text(
        json.dumps(
            {
                "regions": [{"name": "autofuse_4_Add", "verdict": "confirmed"}],
                "minimal_set": ["autofuse_9_Gone"],
            }
        )
    )
    return out


def test_switches_name_the_submodule_or_the_capture_exclusion_and_verify_them(faulty, tmp_path, monkeypatch):
    from fpinspect.capture import DumpPair, load_model

    r = run("switches", faulty, "--format", "json")  # a capture's default: AutoFuse's, then Inductor's
    assert r.exit_code == 0, r.output
    both = json.loads(r.stdout)
    out = both["inductor"]
    assert both["introduced"] == out["introduced"] == ["autofuse_0_LayerNorm", "autofuse_2_Add_LayerNorm"]
    assert both["autofuse_flags"].startswith("--enable_autofuse=true")
    assert out["compiler"] == "inductor" and out["stale"] == ["autofuse_9_Gone"]
    ln1, residual, add = out["regions"]
    assert (ln1["name"], ln1["submodule"]["path"]) == ("autofuse_0_LayerNorm", "ln1")
    assert "torch.compiler.disable" in ln1["code"] and "graph" in ln1["side_effects"]
    assert residual["name"] == "autofuse_2_Add_LayerNorm" and residual["submodule"] is None
    assert "no single submodule" in residual["notes"][0]
    assert add["reasons"] == ["confirmed (confirm.json)"]
    assert out["baseline"]["verdict"] == "fail"
    assert out["check"]["verdict"] == "pass" and out["verified"] is True

    # the capture's own exclusion runs, into a new folder (the capture analysed stays), and leaves
    # no fused op that introduces an error
    command = shlex.split(out["capture_command"])
    assert command[:2] == ["fpinspect", "capture"] and command.count("--unfuse") == 3
    again = tmp_path / command[command.index("--out") + 1]
    assert again.name == f"{faulty.name}_unfused"
    monkeypatch.chdir(tmp_path)
    r = run(*command[1:])
    assert r.exit_code == 0, r.output
    assert "Region 0 (autofuse_0_LayerNorm) left unfused" in r.output
    assert "SIMULATED regression in region 0" not in r.output  # unfused: the fault is not there
    assert "--inject 0=bf16 does nothing: region 0 is left unfused" in " ".join(r.output.split())
    assert json.loads((again / "capture.json").read_text())["unfuse"] == out["unfuse"]
    assert json.loads((faulty / "capture.json").read_text())["unfuse"] == []
    r = run("compare", *DumpPair.under(again).compare_args(), "--format", "json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["summary"]["introduced"] == []
    assert not {rec["fused_op"] for rec in report["records"]} & set(out["unfuse"])

    # the code keeps ln1 out of torch.compile in the user's own model
    import torch

    model, (x,) = load_model("transformer")
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    exec(ln1["code"], {"model": model, "torch": torch})
    with torch.no_grad():
        torch.compile(model.eval(), backend=record)(x)
    norms = [n for g in graphs for n in g.graph.nodes if "layer_norm" in str(n.target)]
    assert len(norms) == 1  # ln2's: ln1 ran eagerly


def test_inductor_switches_need_a_capture_folder(tmp_path):
    r = run("switches", tmp_path, "--for", "inductor")
    assert r.exit_code == 2 and "needs a capture folder" in r.output and "Traceback" not in r.output
    (tmp_path / "capture.json").write_text('{"model": "mlp", "unfuse": [3]}')
    r = run("confirm", tmp_path)
    assert r.exit_code == 2 and "field 'unfuse' is not a list of region names or numbers" in r.output


@pytest.mark.parametrize("damage", [{"minimal_set": 5}, {"regions": 7}])
def test_a_damaged_confirm_json_is_ignored_with_a_note(faulty, tmp_path, damage):
    import shutil

    folder = tmp_path / "capture"
    shutil.copytree(faulty, folder)
    (folder / "confirm.json").write_text(json.dumps(damage))
    r = run("switches", folder, "--for", "inductor", "--format", "json")
    assert r.exit_code == 0, r.output
    assert "fpinspect: note: confirm.json is not a readable confirm result: ignored." in r.stderr
    assert json.loads(r.stdout)["unfuse"] == ["autofuse_0_LayerNorm", "autofuse_2_Add_LayerNorm"]
