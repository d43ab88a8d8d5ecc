"""Activation functions (``ge_op_semantics.md`` §2.2, §2.3): the functions themselves, not
the devices' approximations of them; constants exactly as GE writes them."""

from __future__ import annotations

import math

import numpy as np

from .base import OpCall, Unsupported, semantics
from .special import erf


def _sigmoid(z: np.ndarray, one) -> np.ndarray:
    return one / (one + np.exp(-z))


@semantics("Relu", elementwise=True)
def relu(call: OpCall) -> list[np.ndarray]:
    x = call.x(0)
    return [np.maximum(x, x.dtype.type(0))]


@semantics("LeakyRelu", elementwise=True)
def leaky_relu(call: OpCall) -> list[np.ndarray]:
    """``x if x > 0 else negative_slope * x``; GE's default slope is 0 (torch's is 0.01)."""
    x = call.x(0)
    return [np.where(x > 0, x, call.float_attr("negative_slope", 0.0) * x)]


@semantics("Sigmoid", elementwise=True)
def sigmoid(call: OpCall) -> list[np.ndarray]:
    return [_sigmoid(call.x(0), call.const(1.0))]


@semantics("Tanh", elementwise=True)
def tanh(call: OpCall) -> list[np.ndarray]:
    return [np.tanh(call.x(0))]


def _gelu_tanh(call: OpCall, x: np.ndarray) -> np.ndarray:
    """``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    c = call.compute.type(math.sqrt(2.0 / math.pi))
    half, one = call.const(0.5), call.const(1.0)
    return half * x * (one + np.tanh(c * (x + call.const(0.044715) * x * x * x)))


def _gelu_erf(call: OpCall, x: np.ndarray) -> np.ndarray:
    """``0.5 x (1 + erf(x / sqrt(2)))``; erf in float64, rounded to the compute type."""
    inner = erf(x.astype(np.float64) / math.sqrt(2.0)).astype(call.compute)
    return call.const(0.5) * x * (call.const(1.0) + inner)


@semantics("Gelu", elementwise=True)
def gelu(call: OpCall) -> list[np.ndarray]:
    """GE's ``Gelu`` is the tanh form (its kernels; the header's x*Phi(x) is not what runs)."""
    return [_gelu_tanh(call, call.x(0))]


@semantics("GeluV2", elementwise=True)
def gelu_v2(call: OpCall) -> list[np.ndarray]:
    """``approximate="none"`` (default): the erf form, torch's exact gelu; ``"tanh"``: as Gelu."""
    mode = call.attrs.get("approximate", "none")
    if mode == "none":
        return [_gelu_erf(call, call.x(0))]
    if mode == "tanh":
        return [_gelu_tanh(call, call.x(0))]
    raise Unsupported(f"GeluV2 {call.name}: approximate={mode!r} is neither 'none' nor 'tanh'")


@semantics("FastGelu", elementwise=True)
def fast_gelu(call: OpCall) -> list[np.ndarray]:
    """``x * sigmoid(1.702 x)``."""
    x = call.x(0)
    return [x * _sigmoid(call.const(1.702) * x, call.const(1.0))]


@semantics("FastGeluV2", elementwise=True)
def fast_gelu_v2(call: OpCall) -> list[np.ndarray]:
    """GE's polynomial gelu: ``x * (s * (-0.1444 u^2 + 0.5) + 0.5)`` with ``u = min(|0.7071 x|,
    1.769) - 1.769`` and ``s = (x + 1e-12) / |x + 1e-12|``, the sign of ``x`` (1 at 0); the
    0.7071 the header leaves out is in both kernels (``ge_op_semantics.md`` §2.3)."""
    x = call.x(0)
    shifted = x + call.const(1e-12)
    s = np.minimum(shifted / np.abs(shifted), call.const(1.0))  # K-35 clamps s to <= 1
    u = np.minimum(np.abs(call.const(0.7071) * x), call.const(1.769)) - call.const(1.769)
    half = call.const(0.5)
    return [x * (s * (call.const(-0.1444) * u * u + half) + half)]


@semantics("Swish", "SiLU", "Silu", elementwise=True)
def swish(call: OpCall) -> list[np.ndarray]:
    """``x * sigmoid(scale * x)``, scale 1 by default (GE has no SiLU op: aten.silu is Swish)."""
    x = call.x(0)
    return [x * _sigmoid(call.float_attr("scale", 1.0) * x, call.const(1.0))]


@semantics("HardSwish", elementwise=True)
def hard_swish(call: OpCall) -> list[np.ndarray]:
    """``x * min(max(x + 3, 0), 6) / 6``."""
    x = call.x(0)
    three, six = call.const(3.0), call.const(6.0)
    return [x * np.minimum(np.maximum(x + three, call.const(0.0)), six) / six]


@semantics("HardSigmoid", elementwise=True)
def hard_sigmoid(call: OpCall) -> list[np.ndarray]:
    """``max(0, min(1, alpha x + beta))`` with GE's defaults alpha = 0.16666666, beta = 0.5."""
    x = call.x(0)
    z = call.float_attr("alpha", 0.16666666) * x + call.float_attr("beta", 0.5)
    return [np.maximum(call.const(0.0), np.minimum(call.const(1.0), z))]


@semantics("Softplus", elementwise=True)
def softplus(call: OpCall) -> list[np.ndarray]:
    """``ln(1 + e^x)``, computed as ``max(x, 0) + log1p(exp(-|x|))`` (no overflow)."""
    x = call.x(0)
    return [np.maximum(x, call.const(0.0)) + np.log1p(np.exp(-np.abs(x)))]


@semantics("SoftplusV2", elementwise=True)
def softplus_v2(call: OpCall) -> list[np.ndarray]:
    """``ln(1 + e^(beta x)) / beta`` where ``beta x <= threshold``, else ``x``."""
    x = call.x(0)
    beta, threshold = call.float_attr("beta", 1.0), call.float_attr("threshold", 20.0)
    z = beta * x
    soft = (np.maximum(z, call.const(0.0)) + np.log1p(np.exp(-np.abs(z)))) / beta
    return [np.where(z > threshold, x, soft)]


@semantics("Elu", elementwise=True)
def elu(call: OpCall) -> list[np.ndarray]:
    """``scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1))``, all attrs 1 by default."""
    x = call.x(0)
    alpha, scale = call.float_attr("alpha", 1.0), call.float_attr("scale", 1.0)
    inner = call.float_attr("input_scale", 1.0)
    return [scale * np.where(x > 0, x, alpha * np.expm1(inner * x))]


@semantics("Mish", elementwise=True)
def mish(call: OpCall) -> list[np.ndarray]:
    """``x * tanh(ln(1 + e^x))``."""
    x = call.x(0)
    sp = np.maximum(x, call.const(0.0)) + np.log1p(np.exp(-np.abs(x)))
    return [x * np.tanh(sp)]
