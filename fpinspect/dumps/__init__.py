"""Fusion-on vs fusion-off dumps: GE graph JSON, datadump folders, layouts, comparison,
verdicts and localisation. Pure numpy + networkx: no torch, no textual.
"""

from .compare import DumpComparison, PairPlan, Record, Report
from .datadump import DumpFile, DumpIndex, normalise_name
from .errors import InputError
from .graph import FUSED_TYPES, FusedOp, GeModel, fused_ops, load_graph, original_subgraph
from .localise import Localisation, OpFinding
from .pair import STATUS_DOC, PairResult, compare_arrays, compare_npy
from .verdict import DEFAULTS, Thresholds, ThresholdTable, judge, load_table

__all__ = [
    "DEFAULTS", "FUSED_TYPES", "STATUS_DOC", "DumpComparison", "DumpFile", "DumpIndex", "FusedOp", "GeModel",
    "InputError", "Localisation", "OpFinding", "PairPlan", "PairResult", "Record", "Report", "ThresholdTable",
    "Thresholds", "compare_arrays", "compare_npy", "fused_ops", "judge", "load_graph", "load_table",
    "normalise_name", "original_subgraph",
]  # fmt: skip
