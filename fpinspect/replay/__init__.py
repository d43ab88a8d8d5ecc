"""Replay: evaluate the original ops a fused op replaced, on that fused op's own inputs.

A layer above :mod:`fpinspect.dumps` (whose graph model, dump index and comparisons it
uses) and below the front ends. Pure numpy: no torch, no textual.

* :mod:`.ops` — the semantics of GE op types, one registered function per type;
* :mod:`.subgraph` — the fusion-off subgraph of one fused op and its boundary inputs;
* :mod:`.evaluate` — evaluating it eagerly (round after each op) or in float64.
"""

from .evaluate import EAGER, FP64, run_op
from .ops import OPS, Unsupported
from .subgraph import Subgraph, extract

__all__ = ["EAGER", "FP64", "OPS", "Subgraph", "Unsupported", "extract", "run_op"]
