"""The reference script's metric formulas (fusion_precision_analyzer.py), for parity tests.

Written from the documented formulas (ascend_formats.md §0): float64, flattened, over all
elements: cosine = dot(a, b) / (‖a‖·‖b‖ + 1e-8), max abs = max |a − b|,
max rel = max(|a − b| / (max(|a|, |b|) + 1e-8)).
"""

import numpy as np


def reference_trio(a, b):
    a = np.asarray(a).astype(np.float64).reshape(-1)
    b = np.asarray(b).astype(np.float64).reshape(-1)
    cos = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-8)
    d = np.abs(a - b)
    return cos, d.max(), np.max(d / (np.maximum(np.abs(a), np.abs(b)) + 1e-8))


def reference_script():
    """The reference ``fusion_precision_analyzer.py`` itself, where this machine has it: the path
    in ``FPINSPECT_REFERENCE_SCRIPT`` (it is not ours to ship; get it from gitcode.com/cann/
    graph-autofusion, ``autofuse/tools/nwa_tool/``, the version of 2026-07-13). None otherwise."""
    import os
    from pathlib import Path

    path = os.environ.get("FPINSPECT_REFERENCE_SCRIPT")
    return Path(path) if path and Path(path).is_file() else None
