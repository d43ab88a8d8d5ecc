"""Fusion-on vs fusion-off dumps: GE graph JSON, datadump folders, layouts, comparison,
verdicts and localisation. Pure numpy + networkx: no torch, no textual.

The comparison model every front end uses, one job a file: :mod:`.plan` (which tensors pair
up), :mod:`.sides` (loading a pair's two tensors once, converted), :mod:`.records` (one
record per pair, and the sweep that computes many), :mod:`.localise` (which op introduced an
error), :mod:`.report` (the summary), tied together by :class:`~.compare.DumpComparison`.
"""

from .compare import DumpComparison
from .datadump import DumpFile, DumpIndex, normalise_name
from .errors import InputError
from .fusion import FusedOp, fused_ops, original_subgraph
from .ge_types import FUSED_TYPES
from .graph import GeModel, load_graph
from .localise import Evidence, Localisation, OpFinding, OpRecords, localise
from .pair import STATUS_DOC, PairResult, compare_arrays, compare_npy
from .plan import PairPlan, PairPlans, plan_pairs
from .records import Record, Sweep
from .report import Report
from .sides import SIDE_ERRORS, OpSides, Sides, load_sides
from .verdict import DEFAULTS, Thresholds, ThresholdTable, format_score, judge, load_table, worst_verdict

__all__ = [
    "DEFAULTS",
    "FUSED_TYPES",
    "SIDE_ERRORS",
    "STATUS_DOC",
    "DumpComparison",
    "DumpFile",
    "DumpIndex",
    "Evidence",
    "FusedOp",
    "GeModel",
    "InputError",
    "Localisation",
    "OpFinding",
    "OpRecords",
    "OpSides",
    "PairPlan",
    "PairPlans",
    "PairResult",
    "Record",
    "Report",
    "Sides",
    "Sweep",
    "ThresholdTable",
    "Thresholds",
    "compare_arrays",
    "compare_npy",
    "format_score",
    "fused_ops",
    "judge",
    "load_graph",
    "load_sides",
    "load_table",
    "localise",
    "normalise_name",
    "original_subgraph",
    "plan_pairs",
    "worst_verdict",
]
