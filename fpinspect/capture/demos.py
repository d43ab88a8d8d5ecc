"""Built-in demo models, small enough that a capture is a few hundred KiB of dumps.

Each demo is a factory ``(seed) -> (module, example_inputs)``, the same shape of callable
``fpinspect capture package.module:factory`` accepts (which is called without arguments).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from .zoo import ZOO


class TransformerBlock(nn.Module):
    """A pre-LayerNorm Transformer block: attention with softmax, then a GELU MLP."""

    def __init__(self, dim: int = 64, heads: int = 4, hidden: int = 256):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = (
            t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in self.qkv(x).split(d, dim=-1)
        )
        scores = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        out = scores.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, s, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ConvBlock(nn.Module):
    """A residual conv block: conv, batch-norm, activation (twice), a 1x1 shortcut, then
    max pooling; returns the pooled feature map and its global average per channel."""

    def __init__(self, cin: int = 8, cout: int = 16):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Conv2d(cin, cout, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.silu(self.bn2(self.conv2(y)) + self.shortcut(x))
        pooled = F.max_pool2d(y, 2)
        return pooled, pooled.mean(dim=(2, 3))


class RotaryBlock(nn.Module):
    """RMSNorm, query and key projections, then a rotary position embedding as LLaMA
    writes it: cos / sin tables cut to the sequence length, ``rotate_half`` (the two halves
    of each head swapped, one negated), ``q * cos + rotate_half(q) * sin``."""

    def __init__(self, dim: int = 32, heads: int = 2, max_tokens: int = 16):
        super().__init__()
        self.heads = heads
        self.norm = nn.RMSNorm(dim)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        head = dim // heads
        inverse = 1.0 / 10000 ** (torch.arange(0, head, 2).float() / head)
        angles = torch.outer(torch.arange(max_tokens).float(), inverse)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    @staticmethod
    def rotate_half(x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return torch.cat([-x[..., half:], x[..., :half]], dim=-1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, s, d = x.shape
        h = self.norm(x)
        q, k = (proj(h).view(b, s, self.heads, d // self.heads).transpose(1, 2) for proj in (self.q, self.k))
        cos, sin = self.cos[:s], self.sin[:s]
        return q * cos + self.rotate_half(q) * sin, k * cos + self.rotate_half(k) * sin


class NormMLP(nn.Module):
    """LayerNorm, a GELU MLP, then softmax over the features."""

    def __init__(self, dim: int = 32, hidden: int = 64):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(self.norm(x)))).softmax(dim=-1)


class Cancellation(nn.Module):
    """A projection, then ``(exp(0.05 y) - 1) * 20``: ``exp`` of a small number is close to
    1, so subtracting 1 cancels its leading bits. Eager rounds ``exp`` to the model's
    dtype before the subtraction; a fused kernel keeps it in fp32 and is closer to the
    exact result."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (torch.exp(self.proj(x) * 0.05) - 1) * 20


def _randomise_norms(module: nn.Module, gen: torch.Generator) -> None:
    """Give normalisation layers non-trivial scales (and batch norms statistics), as a
    trained network has: a scale of exactly 1 would hide how a kernel rounds it."""
    for m in module.modules():
        if isinstance(m, (nn.LayerNorm, nn.RMSNorm)) and m.weight is not None:
            with torch.no_grad():
                m.weight.copy_(1 + 0.2 * torch.randn(m.weight.shape, generator=gen))
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(0.2 * torch.randn(m.num_features, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.num_features, generator=gen))
                m.weight.copy_(1 + 0.2 * torch.randn(m.num_features, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.num_features, generator=gen))


Demo = tuple[nn.Module, tuple[torch.Tensor, ...]]


def _seeded(
    seed: int, make: Callable[[], nn.Module], shape: tuple[int, ...], *, trained_norms: bool = False
) -> Demo:
    """``make()`` under ``torch.manual_seed(seed)`` and one input of ``shape`` drawn from a
    generator seeded ``seed + 1`` (which first gives the norms their statistics, if asked)."""
    torch.manual_seed(seed)
    model = make()
    gen = torch.Generator().manual_seed(seed + 1)
    if trained_norms:
        _randomise_norms(model, gen)
    return model, (torch.randn(*shape, generator=gen),)


def transformer(seed: int = 0) -> Demo:
    """Transformer block, batch 2 x 16 tokens x 64 features, 4 heads, MLP width 256."""
    return _seeded(seed, TransformerBlock, (2, 16, 64))


def conv(seed: int = 0) -> Demo:
    """Conv block, batch 2 x 8 channels x 16 x 16 pixels, 16 output channels."""
    return _seeded(seed, ConvBlock, (2, 8, 16, 16), trained_norms=True)


def encoder(seed: int = 0) -> Demo:
    """``nn.TransformerEncoderLayer`` (post-norm, ReLU, dropout 0.1 off in eval), batch 2 x
    8 tokens x 32 features, 2 heads, feed-forward width 64."""
    return _seeded(
        seed,
        lambda: nn.TransformerEncoderLayer(32, 2, dim_feedforward=64, dropout=0.1, batch_first=True),
        (2, 8, 32),
    )


def rotary(seed: int = 0) -> Demo:
    """RMSNorm + query / key projections + rotary embedding, batch 2 x 8 tokens x 32
    features, 2 heads; returns the rotated queries and keys."""
    return _seeded(seed, RotaryBlock, (2, 8, 32), trained_norms=True)


def mlp(seed: int = 0) -> Demo:
    """LayerNorm + GELU MLP + softmax, batch 2 x 8 tokens x 32 features, width 64."""
    return _seeded(seed, NormMLP, (2, 8, 32), trained_norms=True)


def cancellation(seed: int = 0) -> Demo:
    """Projection + ``(exp(0.05 y) - 1) * 20``, 16 rows x 64 features."""
    return _seeded(seed, Cancellation, (16, 64))


#: Demo name -> factory.
DEMOS: dict[str, Callable[[int], Demo]] = {
    "transformer": transformer,
    "conv": conv,
    "encoder": encoder,
    "rotary": rotary,
    "mlp": mlp,
    "cancellation": cancellation,
    **ZOO,
}
