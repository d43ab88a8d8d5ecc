"""Which optional extras a test needs: ``@pytest.mark.needs("torch")`` skips it at once, naming
the extra to install, where the module is not installed (``conftest.py``)."""

from __future__ import annotations

import importlib.util

#: The optional extra of pyproject.toml that installs each module a test may need.
EXTRAS = {
    "torch": "experiments",
    "matplotlib": "experiments",
    "distributed": "cluster",
    "transformers": "zoo",
    "model_explorer": "explorer",
}


def missing(module: str) -> str | None:
    """Why a test that needs ``module`` cannot run here (None: it is installed)."""
    if importlib.util.find_spec(module) is not None:
        return None
    extra = EXTRAS.get(module)
    return f"needs {module}: pip install 'fpinspect[{extra}]'" if extra else f"needs {module}"
