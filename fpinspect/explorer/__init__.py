"""GE graphs in Google's Model Explorer: an adapter extension (:mod:`.main`, loaded with
``model-explorer GRAPH --extensions=fpinspect.explorer``) that converts every graph fpinspect
reads (:mod:`.graphs`), and a run's two graphs side by side with the comparison's verdicts on
their nodes (:mod:`.run`, ``fpinspect explore``).

Model Explorer is the optional extra ``fpinspect[explorer]``: only the modules below import it,
and nothing of the core imports them.
"""

from __future__ import annotations

import importlib.util

#: How to get Model Explorer.
INSTALL = "pip install 'fpinspect[explorer]'"


def missing(what: str) -> str | None:
    """The sentence saying what ``what`` needs installed; ``None`` when Model Explorer is there
    (found without importing it: its import costs seconds)."""
    if importlib.util.find_spec("model_explorer") is not None:
        return None
    return f"{what} needs Google's Model Explorer; install it with {INSTALL}."
