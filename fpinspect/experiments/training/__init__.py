"""Task E's training machinery: a small GPT, byte-level data from the standard library's
own text, one training run (eager or fused, one process or a DDP rank), the noise band and
the divergence between two curves.

``corpus`` and ``divergence`` are numpy only; ``gpt``, ``loop`` and ``distributed`` import
torch and are loaded by the experiment's child process alone.
"""
