"""The values ``fpinspect capture`` accepts, importable without torch (the CLI lists them)."""

from __future__ import annotations

DTYPE_NAMES = ("float16", "bfloat16", "float32")
DEVICES = ("cpu", "cuda")
LAYOUT_MODES = ("plain", "ascend")
#: The model zoo's real ``transformers`` architectures (:mod:`.zoo`; the ``zoo`` extra).
ZOO_NAMES = ("hf-llama", "hf-gpt2", "hf-bert", "hf-vit", "hf-mixtral")
DEMO_NAMES = ("transformer", "conv", "encoder", "rotary", "mlp", "cancellation", *ZOO_NAMES)
#: The largest ``--seed`` (torch and numpy both take any seed of 32 bits).
SEED_MAX = 2**32 - 1

#: ``--inject`` kinds: SIMULATED regressions (see :mod:`.inject`).
INJECT_KINDS = {
    "bf16": "inputs and outputs rounded to bfloat16 (a kernel that loads and stores bfloat16)",
    "scale": "outputs multiplied by 1.03 (a wrong constant)",
    "nan": "the largest 1% of each output become NaN (an overflowing intermediate)",
}
