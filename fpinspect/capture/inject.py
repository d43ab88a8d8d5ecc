"""Simulated regressions for demos and tests: ``--inject REGION=KIND``.

A SIMULATED fault, clearly not fusion noise: one region of the fusion-on run computes
something slightly wrong, the way real fusion bugs do. Nothing in the dumped graphs
records it; finding the region is ``fpinspect compare``'s job. Kinds:

* ``bf16`` — the region's inputs and outputs are rounded to bfloat16, as a kernel that
  loads and stores bfloat16 (a missing upcast) computes. Relative error about 2**-9.
* ``scale`` — every output is multiplied by 1.03 (a wrong constant, a scale applied twice);
  ``scale:F`` by ``F`` (``scale:1.0005``: a fault too small to fail alone).
* ``nan`` — the largest 1% of each output (by magnitude, at least one element) become NaN,
  as an fp32 intermediate that overflows to ``inf - inf`` would produce.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .choices import INJECT_KINDS
from .errors import CaptureError

SCALE = 1.03
NAN_SHARE = 0.01


@dataclass(frozen=True)
class Injection:
    """``region`` is a region name (``autofuse_3_Add_LayerNorm``) or its number (``3``)."""

    region: str
    kind: str
    factor: float = SCALE  #: what ``scale`` multiplies by

    @classmethod
    def parse(cls, text: str) -> Injection:
        region, sep, spec = text.rpartition("=")
        if not sep or not region or not spec:
            raise CaptureError(f"--inject {text!r} is not REGION=KIND (for example 3=bf16)")
        kind, colon, factor = spec.partition(":")
        if kind not in INJECT_KINDS:
            raise CaptureError(f"--inject kind {kind!r} is unknown; use one of {', '.join(INJECT_KINDS)}")
        if not colon:
            return cls(region, kind)
        if kind != "scale":
            raise CaptureError(f"--inject {text!r}: only scale takes a factor (scale:1.0005)")
        try:
            value = float(factor)
        except ValueError:
            raise CaptureError(f"--inject {text!r}: the factor {factor!r} is not a number") from None
        if not (value > 0 and value != 1 and value < 1e3):
            raise CaptureError(f"--inject {text!r}: the factor must be a positive number other than 1")
        return cls(region, kind, value)

    def __str__(self) -> str:
        kind = self.kind if self.factor == SCALE or self.kind != "scale" else f"scale:{self.factor:g}"
        return f"{self.region}={kind}"

    def matches(self, index: int, name: str) -> bool:
        return self.region in (name, str(index))

    def check_dtype(self, dtype: torch.dtype) -> None:
        if self.kind == "bf16" and dtype == torch.bfloat16:
            raise CaptureError("--inject bf16 changes nothing in a bfloat16 capture; use scale or nan")

    def changes(self, graph, region) -> bool:
        """Whether this fault can change anything region ``region`` (of ``graph``, a
        :class:`~.trace.TracedGraph`) writes: ``scale`` and ``nan`` touch floating outputs only,
        ``bf16`` floating inputs too. A region whose outputs are all integer or boolean (an
        argmax, a mask, a top-k's indices) is out of reach of ``scale`` and ``nan``."""
        refs = region.outputs + (region.inputs if self.kind == "bf16" else [])
        return any(ref.op in graph.by_name and graph.meta(ref).dtype.is_floating_point for ref in refs)

    def before(self, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        """The region's inputs as the faulty kernel reads them."""
        return [_through_bf16(t) for t in inputs] if self.kind == "bf16" else inputs

    def after(self, outputs: list[torch.Tensor]) -> list[torch.Tensor]:
        """The region's outputs as the faulty kernel writes them."""
        if self.kind == "bf16":
            return [_through_bf16(t) for t in outputs]
        if self.kind == "scale":
            return [(t.float() * self.factor).to(t.dtype) if t.is_floating_point() else t for t in outputs]
        return [_nan_largest(t) if t.is_floating_point() and t.numel() else t for t in outputs]


def _through_bf16(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.bfloat16).to(t.dtype) if t.is_floating_point() else t


def _nan_largest(t: torch.Tensor) -> torch.Tensor:
    flat = t.detach().reshape(-1).clone()
    count = max(1, int(flat.numel() * NAN_SHARE))
    flat[flat.float().abs().topk(count).indices] = float("nan")
    return flat.reshape(t.shape)
