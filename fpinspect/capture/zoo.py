"""Real architectures from Hugging Face ``transformers``, small enough to capture in seconds.

Each is built from a config alone (random weights, never the hub), with the library's own
modelling code: the attention, norms, rotary embeddings and routers nobody here wrote. They
are what fpinspect's verdicts are tested on beside the hand-written :mod:`.demos`. Each
factory has the demos' shape, ``(seed) -> (module, example_inputs)``, and its module returns
one tensor (the logits, or the last hidden state).

``transformers`` is an optional dependency (the ``zoo`` extra); :func:`zoo_factory` says in
one sentence when it is missing.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable

import torch
from torch import nn

from .errors import CaptureError

#: Zoo name -> what it is (the architecture and its parts worth testing).
ZOO_MODELS = {
    "hf-llama": "LLaMA decoder: RMSNorm, rotary embeddings, grouped-query attention, SwiGLU MLP",
    "hf-gpt2": "GPT-2 decoder: LayerNorm, learned positions, fused QKV (Conv1D), GELU (tanh) MLP",
    "hf-bert": "BERT encoder: post-norm LayerNorm, token types, GELU MLP, pooled output",
    "hf-vit": "ViT image encoder: a conv patch embedding, class token, LayerNorm, GELU MLP",
    "hf-mixtral": "Mixtral decoder: RMSNorm, rotary embeddings, a top-2 router over 4 experts",
}

TOKENS = 16
VOCAB = 128


class _Output(nn.Module):
    """The wrapped model's one output tensor (``field`` of what it returns), from keyword inputs."""

    def __init__(self, model: nn.Module, field: str, argument: str):
        super().__init__()
        self.model, self.field, self.argument = model, field, argument

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self.model(**{self.argument: x}), self.field)


def _transformers():
    if importlib.util.find_spec("transformers") is None:
        raise CaptureError(
            "the model zoo needs the transformers library: pip install 'fpinspect[zoo]' "
            "(configs only, nothing is downloaded)"
        )
    # nothing is downloaded: every model is built from its config; say so to the library too
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import transformers

    return transformers


def _tokens(seed: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (1, TOKENS), generator=torch.Generator().manual_seed(seed + 1))


def _built(seed: int, config, model, field: str, argument: str, inputs: torch.Tensor):
    """``model(config)`` in eval mode, its weights drawn after ``torch.manual_seed(seed)``, returning
    ``field`` of its output from ``inputs`` passed as ``argument``. The plain attention (matmul,
    softmax, matmul) rather than SDPA: every op of it is visible to the capture, as the fusion-off
    graph of a GE run holds them."""
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    return _Output(model(config).eval(), field, argument), (inputs,)


def llama(seed: int = 0):
    tf = _transformers()
    cfg = tf.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    return _built(seed, cfg, tf.LlamaForCausalLM, "logits", "input_ids", _tokens(seed))


def gpt2(seed: int = 0):
    tf = _transformers()
    cfg = tf.GPT2Config(
        vocab_size=VOCAB, n_positions=64, n_embd=64, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0
    )
    return _built(seed, cfg, tf.GPT2LMHeadModel, "logits", "input_ids", _tokens(seed))


def bert(seed: int = 0):
    tf = _transformers()
    cfg = tf.BertConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=64,
    )
    return _built(seed, cfg, tf.BertModel, "last_hidden_state", "input_ids", _tokens(seed))


def vit(seed: int = 0):
    tf = _transformers()
    cfg = tf.ViTConfig(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
    )
    pixels = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(seed + 1))
    return _built(seed, cfg, tf.ViTModel, "last_hidden_state", "pixel_values", pixels)


def mixtral(seed: int = 0):
    tf = _transformers()
    cfg = tf.MixtralConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=64,
    )
    return _built(seed, cfg, tf.MixtralForCausalLM, "logits", "input_ids", _tokens(seed))


#: Zoo name -> factory.
ZOO: dict[str, Callable[[int], tuple[nn.Module, tuple[torch.Tensor, ...]]]] = {
    "hf-llama": llama,
    "hf-gpt2": gpt2,
    "hf-bert": bert,
    "hf-vit": vit,
    "hf-mixtral": mixtral,
}
