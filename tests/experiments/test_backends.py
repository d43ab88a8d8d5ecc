import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from fpinspect.experiments.backends import BackendUnavailable, open_backend
from fpinspect.experiments.backends.base import (
    KernelSource,
    computation_lines,
    count_files,
    input_buffers,
    kernel_hash,
    normalise_source,
)
from fpinspect.experiments.backends.inductor import parse_kernels
from fpinspect.experiments.engine import PACKAGE_ROOT

CPP_WRAPPER = textwrap.dedent(
    """\
    # AOT ID: ['7_inference']
    from torch._inductor.async_compile import AsyncCompile
    async_compile = AsyncCompile()


    cpp_fused_mul_0 = async_compile.cpp_pybinding(['const at::Half*', 'at::Half*'], r'''
    #include "CACHE/pb/cpp_prefix.h"
    extern "C" void kernel(const at::Half* in_ptr0, at::Half* out_ptr0)
    {
        auto tmp0 = in_ptr0[x0];
        auto tmp1 = static_cast<float>(0.7);
        auto tmp2 = tmp0 * tmp1;
    }
    ''')


    async_compile.wait(globals())
    """
)

TRITON_WRAPPER = textwrap.dedent(
    """\
    # kernel path: CACHE/ab/cabcdef.py
    triton_poi_fused_mul_0 = async_compile.triton('triton_poi_fused_mul_0', '''
    import triton
    @triton.jit
    def triton_poi_fused_mul_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
        tmp0 = tl.load(in_ptr0 + (x0), xmask)
        tmp1 = tl.load(in_ptr1 + (0))
        tmp2 = tmp0 * tmp1
    ''', device_str='cuda')
    """
)


def test_parse_kernels_finds_cpp_and_triton_kernels():
    (cpp,) = parse_kernels(CPP_WRAPPER, {})
    (tri,) = parse_kernels(TRITON_WRAPPER, {})
    assert cpp.name == "cpp_fused_mul_0" and "const at::Half*" in cpp.source and "tmp0 * tmp1" in cpp.source
    assert tri.name == "triton_poi_fused_mul_0" and "tl.load(in_ptr1" in tri.source
    assert computation_lines([cpp]) == [
        "auto tmp0 = in_ptr0[x0];",
        "auto tmp1 = static_cast<float>(0.7);",
        "auto tmp2 = tmp0 * tmp1;",
    ]
    assert computation_lines([tri])[-1] == "tmp2 = tmp0 * tmp1"
    assert (input_buffers([cpp]), input_buffers([tri])) == (1, 2)


def test_kernel_hash_ignores_run_specific_ids_and_cache_paths():
    a = parse_kernels(CPP_WRAPPER.replace("CACHE", "/tmp/one"), {"/tmp/one": "<cache>"})
    b = parse_kernels(
        CPP_WRAPPER.replace("CACHE", "/tmp/two").replace("7_inference", "9_inference"),
        {"/tmp/two": "<cache>"},
    )
    assert kernel_hash(a) == kernel_hash(b) is not None
    changed = parse_kernels(CPP_WRAPPER.replace("0.7", "0.8"), {})
    assert kernel_hash(changed) != kernel_hash(parse_kernels(CPP_WRAPPER, {}))
    assert kernel_hash([]) is None


def test_normalise_source_drops_id_comments():
    text = "# AOT ID: ['3_inference']\n  # kernel path: /x/y.py\ncode /x/y  \n"
    assert normalise_source(text, {"/x": "<cache>"}) == "code <cache>/y\n"


def test_kernel_hash_depends_on_order_and_names():
    k1, k2 = KernelSource("a", "x\n"), KernelSource("b", "y\n")
    assert kernel_hash([k1, k2]) != kernel_hash([k2, k1])


def test_count_files(tmp_path):
    assert count_files(tmp_path / "missing") == 0
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("1")
    (tmp_path / "g").write_text("1")
    assert count_files(tmp_path) == 2


def test_unknown_device_is_refused():
    with pytest.raises(BackendUnavailable, match="unknown device"):
        open_backend("tpu")


def test_cpu_backend_describes_what_enters_the_kernels(tmp_path):
    pytest.importorskip("torch")
    backend = open_backend("cpu")
    facts = backend.describe()
    for key in ("device_name", "threads", "cpu_capability", "inductor_isa", "cxx", "inductor", "cache_dir"):
        assert key in facts
    assert facts["cache_dir"] == os.environ["TORCHINDUCTOR_CACHE_DIR"]
    env = backend.cold_start_env(tmp_path / "cold")
    assert env["TORCHINDUCTOR_CACHE_DIR"] != os.environ["TORCHINDUCTOR_CACHE_DIR"]
    assert count_files(tmp_path / "cold") == 0


def test_cuda_backend_reports_why_it_is_unavailable():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present; the unavailable path cannot be exercised")
    with pytest.raises(BackendUnavailable, match="device 'cuda' is not available"):
        open_backend("cuda")


def test_cuda_backend_compiles_with_triton():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    backend = open_backend("cuda")
    x = torch.arange(1024, dtype=torch.float16, device="cuda")
    compiled = backend.compile(lambda t: t * 0.7, x)
    assert compiled.kernels and compiled.kernels[0].name.startswith("triton_")
    assert torch.equal(compiled.output, compiled.fn(x))
    assert backend.cold_start_env(backend.cache_dir().parent / "x").keys() == {
        "TORCHINDUCTOR_CACHE_DIR",
        "TRITON_CACHE_DIR",
    }


def test_engine_and_commands_import_without_torch():
    code = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError("torch is blocked")
        sys.meta_path.insert(0, Block())
        import fpinspect.experiments
        from fpinspect.cli.experiments import run_command, tasks_command
        from fpinspect.experiments.registry import all_tasks
        from fpinspect.experiments.engine import ExperimentProcess
        from fpinspect.experiments.registry import TASK_IDS
        assert len(all_tasks()) == len(TASK_IDS) >= 5
        assert "torch" not in sys.modules
        """
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_auto_takes_the_first_available_device():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or importlib.util.find_spec("torch_npu") is not None:
        pytest.skip("an accelerator stack is installed")
    assert open_backend("auto").name == "cpu"


@pytest.mark.needs("torch")
def test_codegen_variants_apply_inside_the_block_and_are_restored():
    import torch
    import torch._inductor.config as config

    from fpinspect.experiments.backends.base import Backend
    from fpinspect.experiments.backends.cpu import CpuBackend

    backend = CpuBackend()
    variants = backend.codegen_variants()
    assert not variants[0].options and variants[0].threads is None  # the default comes first
    scalar_one = (
        next(v for v in variants if v.options and v.threads == 1) if torch.get_num_threads() > 1 else None
    )
    threads, simdlen = torch.get_num_threads(), config.cpp.simdlen
    if scalar_one is not None:
        with backend.variant(scalar_one):
            assert torch.get_num_threads() == 1 and config.cpp.simdlen == 1 and config.fx_graph_cache is False
    assert (torch.get_num_threads(), config.cpp.simdlen) == (threads, simdlen)
    # the base implementation (backends without variants) refuses one
    with pytest.raises(ValueError, match="no compiler variant"), Backend.variant(backend, variants[1]):
        pass
