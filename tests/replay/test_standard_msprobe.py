"""fpinspect's msprobe standard against msprobe's own functions (PyPI ``mindstudio-probe``,
the optional ``peers`` extra): the same four metrics, ratios and verdicts on float16 and
bfloat16 outputs, to the last bit."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from fpinspect.replay.standard import BENCH_FORMAT, METRICS, OP_CLASSES, benchmark_standard

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("msprobe") is None or importlib.util.find_spec("torch") is None,
    reason="msprobe is not installed (pip install -e '.[peers]'; it needs torch for its checker)",
)


def _msprobe_metrics(device: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """msprobe's BenchmarkCompare on ``device`` against its benchmark; the bfloat16 cast is
    msprobe's ``_compare_torch_tensor`` (compare/compare.py): both sides to float32 first."""
    import torch
    from msprobe.pytorch.api_accuracy_checker.compare.compare_input import CompareInput
    from msprobe.pytorch.api_accuracy_checker.precision_standard.benchmark_compare import BenchmarkCompare

    name = device.dtype.name
    bench_t = torch.from_numpy(truth.astype(BENCH_FORMAT[name]))
    if name == "bfloat16":  # exact both ways: numpy has no bfloat16 torch reads
        device_t = torch.from_numpy(device.astype(np.float32)).to(torch.bfloat16)
    else:
        device_t = torch.from_numpy(device)
    dtype = device_t.dtype
    if dtype == torch.bfloat16:
        bench_t, device_t = bench_t.to(torch.float32), device_t.to(torch.float32)
    compare = BenchmarkCompare(CompareInput(bench_t.numpy(), device_t.numpy(), None, dtype))
    compare._pre_compare()
    m = compare._compute_metrics()
    return {
        "MaxRelErr": float(m["max_rel_error"]),
        "MeanRelErr": float(m["mean_rel_error"]),
        "RMSE": float(m["rmse"]),
        "SmallValueErrRatio": float(m["small_value_err_ratio"]),
    }


#: One GE type of each class, the new ones included.
GE_TYPES = ("Muls", "GatherV2", "ScatterAddWithAxis", "RmsNormGrad", "CrossEntropyLossGrad", "MatMulV2")


def _cases(dtype: str):
    """Random outputs around their truth: normal values, small values, values near float16's
    largest, a few NaNs and infinities, on both sides."""
    rng = np.random.default_rng(7 if dtype == "float16" else 8)
    for case in range(12):
        n = 2000
        truth = rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 2, n)
        if case % 3 == 0:
            truth[:50] = rng.uniform(65400, 65600, 50) * rng.choice([-1, 1], 50)
        truth[50:60] = rng.uniform(-(2.0**-10), 2.0**-10, 10)
        noise = 1 + rng.standard_normal(n) * 2.0 ** rng.integers(-12, -6)
        if dtype == "bfloat16":
            from ml_dtypes import bfloat16

            fmt = bfloat16
        else:
            fmt = np.float16
        with np.errstate(over="ignore"):
            fused, eager = (truth * noise).astype(fmt), truth.astype(fmt)
        if case % 4 == 1:
            fused[60:63] = [np.nan, np.inf, -np.inf]
            truth[63] = np.nan
        yield case, fused, eager, truth


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_the_metrics_ratios_and_verdicts_are_msprobes(dtype):
    from msprobe.pytorch.api_accuracy_checker.compare.algorithm import calc_ratio
    from msprobe.pytorch.api_accuracy_checker.precision_standard.standard_config import StandardConfig

    names = {"MaxRelErr": "max_rel_err", "MeanRelErr": "mean_rel_err", "RMSE": "rmse"}
    for case, fused, eager, truth in _cases(dtype):
        for ge_type in GE_TYPES:
            api = OP_CLASSES.get(ge_type, ("L0", None))[1]
            s = benchmark_standard(fused, truth, eager, truth, [ge_type])
            theirs_fused, theirs_eager = _msprobe_metrics(fused, truth), _msprobe_metrics(eager, truth)
            for m in METRICS:
                assert s.fused.of(m) == theirs_fused[m], (case, m, "fused")
                assert s.eager.of(m) == theirs_eager[m], (case, m, "eager")
                ratio = calc_ratio(theirs_fused[m], theirs_eager[m], f"torch.{dtype}")
                assert s.ratio(m) == ratio, (case, m)
                limit = (
                    StandardConfig.get_benchmark_ratio_threshold(names[m], api_name=api)
                    if m in names
                    else 2.0
                )
                assert (m in s.failing) == (ratio > limit), (case, m, ge_type)
