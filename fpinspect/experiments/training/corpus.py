"""Byte-level training data that exists on every Python installation, and the batches.

The corpus is CPython's ``pydoc_data.topics`` (the text of ``help()``'s topics, about
466 000 bytes of English and code), its topics joined in sorted order and encoded as
UTF-8. Tokens are the bytes themselves (vocabulary 256), so no tokenizer or download is
needed. The first ``1 - eval_fraction`` of the bytes are the training split, the rest the
evaluation split; the split is fixed by the text, not drawn.

Batches are a pure function of ``(seed, step)``: step ``t`` draws its window offsets from
``numpy.random.default_rng([seed, t])``. Every run (eager, fused, the noise run, a resumed
run) therefore sees the same data in the same order without carrying generator state, and
a global batch is the same whatever the number of DDP ranks: rank ``r`` of ``w`` takes
rows ``r, r + w, r + 2w, ...`` of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VOCAB_SIZE = 256


def corpus_bytes() -> np.ndarray:
    """The whole corpus as ``uint8`` tokens."""
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[name] for name in sorted(topics))
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


@dataclass(frozen=True)
class Corpus:
    train: np.ndarray
    eval: np.ndarray

    @classmethod
    def load(cls, eval_fraction: float) -> Corpus:
        data = corpus_bytes()
        cut = int(round(len(data) * (1.0 - eval_fraction)))
        return cls(train=data[:cut], eval=data[cut:])


def windows(tokens: np.ndarray, offsets: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``tokens[o : o + block]`` and targets ``tokens[o + 1 : o + block + 1]`` for
    each offset, as ``int64`` arrays of shape ``(len(offsets), block)``."""
    index = offsets[:, None] + np.arange(block + 1)[None, :]
    rows = tokens[index].astype(np.int64)
    return rows[:, :-1], rows[:, 1:]


def train_batch(
    corpus: Corpus, seed: int, step: int, batch: int, block: int, rank: int = 0, world: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Rank ``rank``'s rows of the global training batch of ``step`` (module docstring)."""
    rng = np.random.default_rng([seed, step])
    offsets = rng.integers(0, len(corpus.train) - block - 1, size=batch)
    return windows(corpus.train, offsets[rank::world], block)


def eval_offsets(corpus: Corpus, batches: int, batch: int, block: int) -> np.ndarray:
    """The fixed evaluation windows: ``batches * batch`` offsets spread evenly over the
    evaluation split, the same for every run and every step."""
    count = batches * batch
    return np.linspace(0, len(corpus.eval) - block - 1, num=count).astype(np.int64)
