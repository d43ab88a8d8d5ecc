"""Fusion-on vs fusion-off dumps: GE graph JSON, datadump folders, layouts, comparison,
verdicts and localisation. Pure numpy + networkx: no torch, no textual.

The comparison model every front end uses, one job a file: :mod:`.plan` (which tensors pair
up), :mod:`.sides` (loading a pair's two tensors once, converted), :mod:`.records` (one
record per pair), :mod:`.executing` (computing many, on any executor), :mod:`.localise`
(which op introduced an error), :mod:`.report` (the summary), tied together by
:class:`~.compare.DumpComparison`.

Importing this package imports none of its modules: each name below loads its module on
first use, so ``fpinspect diff`` (:mod:`.pair` only) does not pay for the graph readers.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    "DumpComparison": ".compare",
    "input_warnings": ".compare",
    "DumpFile": ".datadump",
    "DumpIndex": ".datadump",
    "normalise_name": ".datadump",
    "InputError": ".errors",
    "FusedOp": ".fusion",
    "fused_ops": ".fusion",
    "original_subgraph": ".fusion",
    "FUSED_TYPES": ".ge_types",
    "GeModel": ".graph",
    "load_graph": ".graph",
    "Evidence": ".localise",
    "Localisation": ".localise",
    "OpFinding": ".localise",
    "OpRecords": ".localise",
    "localise": ".localise",
    "PairResult": ".pair",
    "STATUS_DOC": ".pair",
    "compare_arrays": ".pair",
    "compare_npy": ".pair",
    "PairPlan": ".plan",
    "PairPlans": ".plan",
    "plan_pairs": ".plan",
    "Record": ".records",
    "Report": ".report",
    "OpSides": ".sides",
    "SIDE_ERRORS": ".sides",
    "Sides": ".sides",
    "load_sides": ".sides",
    "DEFAULTS": ".verdict",
    "ThresholdTable": ".verdict",
    "Thresholds": ".verdict",
    "format_score": ".verdict",
    "judge": ".verdict",
    "load_table": ".verdict",
    "worst_verdict": ".outcomes",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
