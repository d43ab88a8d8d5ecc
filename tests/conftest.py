"""Shared test set-up: the helper modules in this folder are importable from every test, the
tests marked ``sole_thread`` run first, and the whole session shares one Inductor cache."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from extras import missing  # noqa: E402


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
    process that are not fpinspect's (torch.compile's pools after the capture tests). Tests
    marked ``needs("torch")`` skip before they start where torch is not installed, instead of
    failing or waiting for a child that cannot start."""
    items.sort(key=lambda item: item.get_closest_marker("sole_thread") is None)  # stable
    for item in items:
        reasons = [r for m in item.iter_markers("needs") for r in map(missing, m.args) if r]
        if reasons:
            item.add_marker(pytest.mark.skip(reason="; ".join(dict.fromkeys(reasons))))


@pytest.fixture(scope="session", autouse=True)
def inductor_cache(tmp_path_factory):
    """One ``TORCHINDUCTOR_CACHE_DIR`` for the session, restored afterwards: every test and child
    process that compiles (capture, the tasks, the Tasks pane, the hostile runs) reuses what an
    earlier one compiled, instead of paying Inductor's first compile again in each folder."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the workers of one run share the cache too
        path = tmp_path_factory.getbasetemp().parent / "inductor-cache"
        path.mkdir(exist_ok=True)
    else:
        path = tmp_path_factory.mktemp("inductor-cache")
    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    else:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved
