"""`fpinspect capture` as users run it: a factory of their own, and one-sentence errors."""

import subprocess
import sys
import textwrap

import pytest
from capturecases import compare
from click.testing import CliRunner

from fpinspect.capture.pipeline import DumpPair
from fpinspect.cli.capture import capture_command

FACTORIES = textwrap.dedent(
    """
    import torch


    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x):
            return torch.tanh(self.lin(x) * 2.0 + 1.0)


    class Noisy(torch.nn.Module):
        def forward(self, x):
            return x + torch.rand_like(x)


    class Branchy(torch.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x


    def tiny():
        return Tiny(), torch.randn(4, 8)


    def noisy():
        return Noisy(), (torch.randn(4, 8),)


    def branchy():
        return Branchy(), (torch.randn(4, 8),)


    def not_a_pair():
        return "a model"
    """
)


@pytest.fixture
def factories(tmp_path, monkeypatch):
    """A user module in the current directory, as ``fpinspect capture my_models:tiny`` finds it."""
    (tmp_path / "my_models.py").write_text(FACTORIES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "my_models", raising=False)
    yield tmp_path
    sys.modules.pop("my_models", None)


def run(*args):
    return CliRunner().invoke(capture_command, [str(a) for a in args])


def one_sentence(result, *words):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fpinspect: ") and lines[0].endswith("."), result.stderr
    assert "Traceback" not in result.output
    for w in words:
        assert w in lines[0], lines[0]


def test_a_factory_model_is_captured_and_compares_clean(factories):
    result = run("my_models:tiny", "--out", factories / "out", "--seed", 3)
    assert result.exit_code == 0, result.output
    assert "fpinspect compare --af-open-graph" in result.stdout
    report = compare(DumpPair.under(factories / "out"))
    assert report.summary().fused_ops == 1
    assert all(r.verdict in ("pass", None) for r in report.records)


def test_unknown_model_is_one_sentence():
    one_sentence(run("resnet", "--out", "unused"), "resnet", "transformer, conv")


def test_missing_module_is_one_sentence(factories):
    one_sentence(run("no_such_module:make", "--out", "unused"), "no_such_module")


def test_factory_returning_something_else_is_one_sentence(factories):
    one_sentence(run("my_models:not_a_pair", "--out", "unused"), "(module, example_inputs)")


def test_random_operator_is_named(factories):
    one_sentence(run("my_models:noisy", "--out", "unused"), "aten.rand_like", "random")


def test_model_that_cannot_be_traced_is_one_sentence(factories):
    one_sentence(run("my_models:branchy", "--out", "unused"), "torch.export could not trace the model")


def test_bad_injection_is_one_sentence():
    one_sentence(run("transformer", "--out", "unused", "--inject", "2=half"), "bf16, scale, nan")
    one_sentence(run("transformer", "--out", "unused", "--inject", "bf16"), "REGION=KIND")


def test_the_command_imports_without_torch():
    code = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "torch":
                    raise ImportError("blocked: " + name)
                return None

        sys.meta_path.insert(0, Block())
        import fpinspect.capture
        from fpinspect.cli.capture import capture_command
        assert capture_command.name == "capture"
        assert not [m for m in sys.modules if m.split(".")[0] == "torch"]
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
