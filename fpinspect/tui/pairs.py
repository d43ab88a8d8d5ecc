"""The two things the pair screen can show: one pair of the dump comparison (drill-down), or
any two ``.npy`` files (the quick mode-2 diff). No Textual here: the screen calls
:meth:`compute` and :meth:`arrays` from a worker thread.
"""

from __future__ import annotations

import os

from ..dumps import DumpComparison, PairPlan, PairResult, Record, Sides, compare_npy
from ..dumps.formats.npyio import open_npy
from .model import WORST


class RecordPair:
    """Output or input ``plan`` of the comparison against its original. :meth:`compute` loads
    the two sides once; :meth:`arrays` and :attr:`layout` are those same sides."""

    def __init__(self, comparison: DumpComparison, plan: PairPlan):
        self.comparison, self.plan = comparison, plan
        p = plan
        self.title = f"{p.fused_op} {p.kind} {p.fused_index}  vs  {p.origin_op or '-'}:{p.origin_index}"
        self.names = tuple(os.path.basename(f.path) if f else "-" for f in (p.fused_file, p.origin_file))
        self.sides: Sides | None = None

    @property
    def layout(self) -> str | None:
        """The layout both sides are compared in (known once computed)."""
        return self.sides.layout if self.sides else None

    def compute(self) -> tuple[PairResult | None, Record]:
        rec, self.sides = self.comparison.record_and_sides(self.plan)
        return rec.result, rec

    def arrays(self):
        """The two compared tensors, after any conversion (chunked readers when none)."""
        if self.sides is None:  # they loaded once but no longer do: raise why
            self.sides = self.comparison.sides(self.plan)
        return self.sides.fused, self.sides.original


class FilePair:
    """Two ``.npy`` files: ``a`` under test, ``b`` the reference."""

    def __init__(self, a: str, b: str):
        self.a, self.b = a, b
        self.title = f"{os.path.basename(a)}  vs  {os.path.basename(b)}"
        self.names = (os.path.basename(a), os.path.basename(b))
        self.layout = None

    def compute(self) -> tuple[PairResult, None]:
        return compare_npy(self.a, self.b, worst=WORST), None

    def arrays(self):
        return open_npy(self.a), open_npy(self.b)
