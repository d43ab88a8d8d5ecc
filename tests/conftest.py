"""Shared test set-up: the helper modules in this folder are importable from every test, and the
tests marked ``sole_thread`` run first."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_modifyitems(session, config, items):
    """Tests marked ``sole_thread`` (``compare --jobs N`` forking its workers, which it does only
    while it is the process's one thread) first: other tests leave threads behind in this
    process that are not fpinspect's (torch.compile's pools after the capture tests)."""
    items.sort(key=lambda item: item.get_closest_marker("sole_thread") is None)  # stable
