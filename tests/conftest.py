"""Shared test set-up: the helper modules in this folder are importable from every test, and the
tests marked ``sole_thread`` run first."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(scope="session", autouse=True)
def results_database(tmp_path_factory):
    """``fpinspect run`` records every run: into a database of the session's own, never the user's."""
    saved = os.environ.get("FPINSPECT_DB")
    os.environ["FPINSPECT_DB"] = str(tmp_path_factory.mktemp("results") / "results.sqlite")
    yield
    if saved is None:
        os.environ.pop("FPINSPECT_DB", None)
    else:
        os.environ["FPINSPECT_DB"] = saved


def pytest_collection_modifyitems(session, config, items):
    """Tests marked ``sole_thread`` (``compare --jobs N`` forking its workers, which it does only
    while it is the process's one thread) first: other tests leave threads behind in this
    process that are not fpinspect's (torch.compile's pools after the capture tests)."""
    items.sort(key=lambda item: item.get_closest_marker("sole_thread") is None)  # stable
