"""compare --jobs N: records computed on worker processes are the records of one process, a
worker that dies leaves its batch to the caller (and the report says so), batches split the work
as documented, and ctrl+c, SIGTERM and SIGHUP stop every worker."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from gefixtures import chain_comparison_paths, stop_compare_with_workers
from network import build_network

from fpinspect.dumps import DumpComparison
from fpinspect.dumps.engine import executing as W

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forks (Linux)")


@pytest.fixture
def sole_thread():
    """The process has no other thread, so compare forks its workers (``can_fork``); the tests
    using this are marked ``sole_thread`` and run before any other (tests/conftest.py)."""
    import threading

    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    assert not others, f"threads left by earlier tests: {others}"


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return build_network(tmp_path_factory.mktemp("net"), inject="R2=scale")


def comparison(paths) -> DumpComparison:
    return DumpComparison(
        *(str(paths[k]) for k in ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data"))
    )


def _records(cmp: DumpComparison) -> dict:
    return {p.key: cmp.compute(p).to_json() for p in cmp.plans}


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """640 small pairs: ten batches of 64, so that both workers have batches and, after the
    first batch is back, others are still queued or running."""
    return chain_comparison_paths(tmp_path_factory.mktemp("chain"), ops=640, n=64)


def _warnings(cmp: DumpComparison) -> list[str]:
    return cmp.sources()["warnings"]


@pytest.mark.sole_thread
def test_worker_processes_compute_the_records_one_process_does(chain, sole_thread):
    import multiprocessing

    one = comparison(chain)
    one.compute_all(jobs=1)
    two = comparison(chain)
    progress, workers = [], []

    def noted(done, total):
        progress.append((done, total))
        workers.append(len(multiprocessing.active_children()))

    two.compute_all(jobs=2, progress=noted)
    assert progress == [(i + 1, 640) for i in range(640)]
    # the first pair is compared before the fork (a first run's compile happens once), then the
    # two workers compute the rest, and none is left once compute_all is done
    assert workers[0] == 0 and set(workers[1:]) == {2}
    assert multiprocessing.active_children() == []
    assert _records(two) == _records(one)
    assert _warnings(two) == _warnings(one)  # no worker died: no pair was taken back


@pytest.mark.sole_thread
def test_a_worker_that_dies_leaves_its_batch_to_the_caller(paths, monkeypatch, sole_thread):
    one = comparison(paths)
    one.compute_all(jobs=1)
    caller = os.getpid()
    compute = DumpComparison._compute

    def dying(self, plan):
        if os.getpid() != caller:
            os._exit(9)  # killed: no record, no reply
        return compute(self, plan)

    monkeypatch.setattr(DumpComparison, "_compute", dying)
    two = comparison(paths)
    two.compute_all(jobs=2)
    assert _records(two) == _records(one)
    left = sum(p.comparable for p in two.plans) - 1  # all but the first, computed before the fork
    said = f"a worker process died (killed or out of memory); its {left} pairs were compared by the main process instead"
    assert two.sources()["warnings"] == [*one.sources()["warnings"], said]


@pytest.mark.sole_thread
def test_an_interrupt_between_two_records_stops_every_worker(chain, sole_thread):
    """ctrl+c can land in the caller's own code between two records (here its progress): the
    workers stop then too, before the interrupt leaves compute_all, and it never waits for ever
    on a worker stopped while it sent a batch back (it did, about 3 runs in 4)."""
    import multiprocessing

    running = []

    def progress(done, total):
        if done == 2:  # a worker's first batch is back: the others are queued or running
            running.extend(multiprocessing.active_children())
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        comparison(chain).compute_all(jobs=2, progress=progress)
    assert len(running) == 2
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(
    ("sizes", "runs"),
    [
        ([], []),
        ([1] * 130, [range(0, 64), range(64, 128), range(128, 130)]),
        ([W.BATCH_BYTES + 1, 5, 5], [range(0, 1), range(1, 3)]),
        ([W.BATCH_BYTES // 2, W.BATCH_BYTES // 2, 1], [range(0, 2), range(2, 3)]),
    ],
)
def test_batches_hold_at_most_their_pairs_and_bytes(sizes, runs):
    assert W.batches(sizes) == runs


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["ctrl+c", "TERM", "HUP"])
def test_a_stopping_signal_stops_the_workers_and_is_one_line(tmp_path, sig):
    stop_compare_with_workers(tmp_path, ["--jobs", "2"], ops=4, settle=0.5, sig=sig)


@pytest.mark.sole_thread
def test_with_another_thread_running_the_pairs_are_computed_on_threads(paths, sole_thread):
    import threading

    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not W.can_fork()
        cmp = comparison(paths)
        cmp.compute_all(jobs=2)  # no fork: threads, the same records
        one = comparison(paths)
        one.compute_all(jobs=1)
        assert _records(cmp) == _records(one)
    finally:
        release.set()
        other.join()
    assert W.can_fork()
