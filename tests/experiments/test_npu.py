"""The NPU backend's configuration, tested with stand-ins for torch_npu and torchair; the
run on real hardware is skipped where torch_npu is absent."""

import importlib.machinery
import importlib.util
import os
import sys
import types

import pytest

from fpinspect.experiments.backends import BackendUnavailable, open_backend
from fpinspect.experiments.backends.npu import AutofuseConfig, NpuBackend, kernel_meta_sources

HAS_TORCH_NPU = importlib.util.find_spec("torch_npu") is not None


def test_autofuse_flags_follow_the_documented_syntax(tmp_path):
    assert AutofuseConfig().flags() == "--enable_autofuse=true;--autofuse_enable_pass=reduce"
    assert AutofuseConfig(enable_passes=("reduce", "concat")).flags() == (
        "--enable_autofuse=true;--autofuse_enable_pass=reduce,concat"
    )
    assert AutofuseConfig(enable=False).flags() == "--enable_autofuse=false"
    assert AutofuseConfig().env() == {
        "AUTOFUSE_FLAGS": "--enable_autofuse=true;--autofuse_enable_pass=reduce"
    }
    env = AutofuseConfig(debug_dir=tmp_path).env()
    assert env["AUTOFUSE_DFX_FLAGS"] == f"--codegen_compile_debug=true;--debug_dir={tmp_path}"


def test_kernel_meta_sources_takes_new_folders_only(tmp_path):
    old = tmp_path / "kernel_meta_1"
    old.mkdir()
    (old / "a.cpp").write_text("old")
    new = tmp_path / "kernel_meta_2" / "op"
    new.mkdir(parents=True)
    (new / "k.cpp").write_text(f"// built in {tmp_path}\nkernel();\n")
    (new / "k.o").write_bytes(b"\0\1")
    kernels = kernel_meta_sources(tmp_path, {old}, {str(tmp_path): "<workdir>"})
    assert [(k.name, k.source) for k in kernels] == [("op/k.cpp", "// built in <workdir>\nkernel();\n")]


@pytest.mark.skipif(
    HAS_TORCH_NPU, reason="torch_npu is installed; the missing-package path cannot be exercised"
)
def test_missing_torch_npu_is_reported():
    with pytest.raises(BackendUnavailable, match="torch_npu is not installed"):
        open_backend("npu")


def _module(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__spec__ = importlib.machinery.ModuleSpec(name, None)
    m.__dict__.update(attrs)
    return m


class FakeCompilerConfig:
    def __init__(self):
        self.mode = "reduce-overhead"


@pytest.fixture
def fake_ascend(monkeypatch):
    """torch_npu and torchair stand-ins recording what the backend asks of them."""
    seen = {}

    def is_available():
        seen["AUTOFUSE_FLAGS at init"] = os.environ.get("AUTOFUSE_FLAGS")
        return True

    npu = types.SimpleNamespace(
        is_available=is_available, synchronize=lambda: None, get_device_name=lambda: "Ascend910B"
    )

    def get_npu_backend(compiler_config):
        seen["config"] = compiler_config
        return "ge-backend"

    monkeypatch.setitem(sys.modules, "torch_npu", _module("torch_npu", npu=npu, __version__="2.14.0"))
    monkeypatch.setitem(
        sys.modules,
        "torchair",
        _module("torchair", CompilerConfig=FakeCompilerConfig, get_npu_backend=get_npu_backend),
    )
    for var in ("AUTOFUSE_FLAGS", "AUTOFUSE_DFX_FLAGS", "ASCEND_CACHE_PATH"):
        monkeypatch.delenv(var, raising=False)
    return seen


def test_backend_configures_ge_graph_mode_with_autofuse(fake_ascend, tmp_path):
    backend = open_backend("npu", tmp_path)
    assert isinstance(backend, NpuBackend)
    assert fake_ascend["AUTOFUSE_FLAGS at init"] == "--enable_autofuse=true;--autofuse_enable_pass=reduce"
    assert os.environ["AUTOFUSE_DFX_FLAGS"].endswith(f"--debug_dir={tmp_path / 'autofuse_debug'}")
    assert fake_ascend["config"].mode == "max-autotune"
    assert backend.npu_backend == "ge-backend"
    facts = backend.describe()
    assert facts["device_name"] == "Ascend910B" and facts["torchair_mode"] == "max-autotune"
    assert facts["AUTOFUSE_FLAGS"] == os.environ["AUTOFUSE_FLAGS"]


def test_cold_start_points_the_operator_cache_at_an_empty_folder(fake_ascend, tmp_path, monkeypatch):
    backend = open_backend("npu", tmp_path)
    env = backend.cold_start_env(tmp_path / "cold")
    assert env == {"ASCEND_CACHE_PATH": str(tmp_path / "cold" / "ascend")}
    assert (tmp_path / "cold" / "ascend").is_dir()
    monkeypatch.setenv("ASCEND_CACHE_PATH", env["ASCEND_CACHE_PATH"])
    assert backend.cache_dir() == tmp_path / "cold" / "ascend" / "kernel_cache"
    assert backend.paths_to_normalise()[str(tmp_path)] == "<workdir>"


def test_auto_prefers_the_npu(fake_ascend, tmp_path):
    assert open_backend("auto", tmp_path).name == "npu"


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TORCH_NPU, reason="torch_npu is not installed (needs an Ascend NPU and CANN)")
def test_quick_c1_runs_on_the_npu():
    from fpinspect.experiments.engine import run_experiment

    report = run_experiment("C1", device="npu", profile="quick")
    assert report.device == "npu"
    assert sum(report.data["ulp_share"].values()) == pytest.approx(1.0)
