"""The results store: recorded runs of ``fpinspect run`` and ``compare --record`` in one
SQLite file, their figures, and baselines to check new runs against.

A layer of its own beneath the experiments and the front ends (which record into it and
read it); it imports neither torch nor textual, and nothing of fpinspect outside itself.
"""

from .check import REGRESSED, CheckResult, FigureCheck, check_run, judge
from .database import DB_ENV, SCHEMA_VERSION, ResultsDB, StoredRun, StoreError, default_path
from .figures import Fields, Figure, Figures, Rows, Rule, Whole

__all__ = [
    "DB_ENV",
    "REGRESSED",
    "SCHEMA_VERSION",
    "CheckResult",
    "Figure",
    "FigureCheck",
    "Figures",
    "Fields",
    "ResultsDB",
    "Rows",
    "Rule",
    "StoreError",
    "StoredRun",
    "Whole",
    "check_run",
    "default_path",
    "judge",
]
