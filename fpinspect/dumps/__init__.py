"""Fusion-on vs fusion-off dumps, by job. Pure numpy + networkx: no torch, no textual.

- :mod:`.formats` reads the Ascend tool chain's files: GE dump graphs and their fusion mapping,
  datadump folders (``.npy`` and raw dumps), storage layouts.
- :mod:`.engine` is the comparison model every front end uses, one job a file:
  :mod:`~.engine.plan` (which tensors pair up), :mod:`~.engine.sides` (loading a pair's two
  tensors once, converted), :mod:`~.engine.records` (one record per pair),
  :mod:`~.engine.executing` (computing many, on any executor), :mod:`~.engine.localise` (which
  op introduced an error), :mod:`~.engine.report` (the summary), tied together by
  :class:`~.engine.compare.DumpComparison`.
- :mod:`.runs` finds runs on disk: run folders, whole dump trees paired leaf by leaf, the
  graphs of each leaf.
- :mod:`.errors` (one-sentence input errors) and :mod:`.switches` (AutoFuse's switches) serve all.

Inside, :mod:`.runs` may import :mod:`.engine` and :mod:`.formats`, :mod:`.engine` only
:mod:`.formats` (import-linter). Importing this package imports none of its modules: each name
below loads its module on first use, so ``fpinspect diff`` (:mod:`~.engine.pair` only) does not
pay for the graph readers.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    "DumpComparison": ".engine.compare",
    "input_warnings": ".engine.compare",
    "DumpFile": ".formats.datadump",
    "DumpIndex": ".formats.datadump",
    "normalise_name": ".formats.datadump",
    "InputError": ".errors",
    "FusedOp": ".formats.fusion",
    "fused_ops": ".formats.fusion",
    "original_subgraph": ".formats.fusion",
    "FUSED_TYPES": ".formats.ge_types",
    "GeModel": ".formats.graph",
    "load_graph": ".formats.graph",
    "Evidence": ".engine.localise",
    "Localisation": ".engine.localise",
    "OpFinding": ".engine.localise",
    "OpRecords": ".engine.localise",
    "localise": ".engine.localise",
    "PairResult": ".engine.pair",
    "STATUS_DOC": ".engine.pair",
    "compare_arrays": ".engine.pair",
    "compare_npy": ".engine.pair",
    "PairPlan": ".engine.plan",
    "PairPlans": ".engine.plan",
    "plan_pairs": ".engine.plan",
    "Record": ".engine.records",
    "Report": ".engine.report",
    "OpSides": ".engine.sides",
    "SIDE_ERRORS": ".engine.sides",
    "Sides": ".engine.sides",
    "load_sides": ".engine.sides",
    "DEFAULTS": ".engine.verdict",
    "ThresholdTable": ".engine.verdict",
    "Thresholds": ".engine.verdict",
    "format_score": ".engine.verdict",
    "judge": ".engine.verdict",
    "load_table": ".engine.verdict",
    "worst_verdict": ".engine.outcomes",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
