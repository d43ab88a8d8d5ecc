"""fp64_reference on numpy callables and on every kind of torch graph."""

import numpy as np
import pytest

from fpinspect.numerics import error_stats, fp64_reference

torch = pytest.importorskip("torch")


def test_numpy_callable_gets_float64_inputs_and_returns_float64():
    x = np.random.default_rng(0).standard_normal(100).astype(np.float16)
    idx = np.array([3, 1])
    seen = {}

    def graph(a, i):
        seen["dtypes"] = (a.dtype, i.dtype)
        return {"y": np.tanh(a) * 0.7, "picked": a[i]}

    out = fp64_reference(graph, (x, idx))
    assert seen["dtypes"] == (np.float64, idx.dtype)  # integer indices pass unchanged
    assert out["y"].dtype == np.float64
    assert np.array_equal(out["y"], np.tanh(x.astype(np.float64)) * 0.7)


def test_torch_callable_and_structure():
    x = torch.randn(64, dtype=torch.float16)
    out = fp64_reference(lambda t: (torch.nn.functional.gelu(t), t.sum()), [x])
    assert isinstance(out, tuple) and all(o.dtype == torch.float64 for o in out)
    assert torch.equal(out[0], torch.nn.functional.gelu(x.double()))


def test_module_is_copied_and_run_in_float64():
    torch.manual_seed(0)
    mod = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.LayerNorm(16), torch.nn.GELU()).half()
    x = torch.randn(4, 16, dtype=torch.float16)
    ref = fp64_reference(mod, (x,))
    assert ref.dtype == torch.float64
    assert next(mod.parameters()).dtype == torch.float16  # the caller's module is untouched
    # the fp16 module is within a few fp16 ULPs of its own float64 evaluation
    with torch.no_grad():
        y = mod.float()(x.float()).half()
    s = error_stats(y.numpy(), ref.numpy())
    assert s.ulp.kind == "error" and s.ulp.max < 8


def test_graph_module_casts_are_retargeted_to_float64():
    def f(a):
        return (a * 3.0).to(torch.float16) / 7.0

    gm = torch.fx.symbolic_trace(f)
    x = torch.randn(32, dtype=torch.float32)
    ref = fp64_reference(gm, (x,))
    assert ref.dtype == torch.float64
    assert torch.allclose(ref, x.double() * 3.0 / 7.0, rtol=1e-15, atol=0)


def test_kind_can_be_forced():
    out = fp64_reference(lambda a: a + 1, (np.ones(2, np.float32),), kind="numpy")
    assert out.dtype == np.float64
    with pytest.raises(ValueError):
        fp64_reference(lambda a: a, (1.0,), kind="jax")
