"""Records computed on a real Dask cluster (a LocalCluster of worker processes) are the records
of one process; a worker killed mid-run loses no pair; an unreachable scheduler, another service
at its address, a scheduler without workers and one killed mid-run are each one sentence."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gefixtures import big_run, chain_comparison_paths, stop_compare_with_workers
from network import build_network

from fpinspect.dumps import DumpComparison
from fpinspect.dumps.engine.cluster import ClusterError, connect

distributed = pytest.importorskip("distributed", reason="Dask is the optional extra fpinspect[cluster]")


def _comparison(paths) -> DumpComparison:
    keys = ("af_open_graph", "af_close_graph", "af_open_data", "af_close_data")
    return DumpComparison(*(str(paths[k]) for k in keys))


def _report_json(comparison, **options) -> str:
    report = comparison.run(compare_input=True, **options)
    return json.dumps(report.to_json(), sort_keys=True)


@pytest.fixture(scope="module")
def client():
    with connect("local:2") as c:
        yield c


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """Enough small pairs for many batches (64 pairs a batch)."""
    return chain_comparison_paths(tmp_path_factory.mktemp("chain"), ops=640, n=64)


def test_the_cluster_report_is_the_local_report(client, tmp_path):
    paths = build_network(tmp_path, inject="R2=scale")
    local = _report_json(_comparison(paths))
    assert _report_json(_comparison(paths), cluster=client) == local
    assert '"introduced": ["autofuse_2_Gelu_Mul"]' in local  # the injected region


def test_a_worker_killed_mid_run_loses_no_pair(client, chain):
    expected = _report_json(_comparison(chain))
    comparison = _comparison(chain)
    pids = client.run(os.getpid)  # {worker address: pid}
    victim = next(iter(pids.values()))
    killed = []

    def progress(done, total):
        if done >= 64 and not killed:  # a batch is back: the others are queued or running
            os.kill(victim, signal.SIGKILL)
            killed.append(done)

    comparison.compute_all(progress=progress, cluster=client)
    assert killed
    report = comparison.run(compare_input=True)
    assert sum(1 for r in report.records if r.verdict is not None) == 640
    assert any("left during the run" in w for w in report.summary().warnings)
    clean = json.loads(expected)
    got = report.to_json()
    got["summary"]["warnings"] = clean["summary"]["warnings"]
    assert json.dumps(got, sort_keys=True) == expected
    deadline = time.monotonic() + 60
    while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)  # the nanny restarts the killed worker for the next tests


def test_an_unreachable_scheduler_is_one_sentence_within_seconds():
    start = time.monotonic()
    with pytest.raises(ClusterError, match=r"--scheduler tcp://127\.0\.0\.1:9: cannot be reached"):
        with connect("tcp://127.0.0.1:9"):
            pass
    assert time.monotonic() - start < 30


def test_a_refused_port_is_unreachable_even_with_a_short_handshake_bound():
    # Dask's connect retries a refused port until its timeout; the bound on the handshake must not
    # read that as a peer that accepts and stays silent (seen under load with the 5 s bound)
    with pytest.raises(ClusterError, match=r"cannot be reached \(ConnectionRefusedError"):
        with connect("tcp://127.0.0.1:9", timeout=0.3):
            pass


def test_bad_local_sizes_are_refused():
    with pytest.raises(ClusterError, match="give 1 to 256"):
        with connect("local:0"):
            pass


def test_a_local_clusters_workers_keep_their_log_lines_to_themselves():
    """A worker whose heartbeat meets the scheduler closing at the end of a run logs a traceback at
    ERROR level, now and then; a local cluster's workers must not print it on the user's stderr.
    (In a process of its own: pytest's logging capture changes the handlers this looks at.)"""
    script = (
        "import logging\n"
        "from fpinspect.dumps.engine.cluster import connect\n"
        "def printed():\n"
        "    handlers = logging.getLogger('distributed').handlers\n"
        "    return [h.level for h in handlers if isinstance(h, logging.StreamHandler)]\n"
        "if __name__ == '__main__':\n"
        "    with connect('local:2') as client:\n"
        "        print(min(min(v) for v in client.run(printed).values()))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > logging.ERROR


def test_ctrl_c_cancels_the_clusters_work_and_exits_130(tmp_path):
    """ctrl+c while a local cluster's workers compute: one line, status 130, no worker left, no
    partial report; and no warning about a port another cluster here holds (the module's)."""
    stop_compare_with_workers(tmp_path, ["--scheduler", "local:2"], ops=6, settle=2.0)


def test_a_worker_missing_from_a_refreshed_snapshot_is_not_reported_gone(client, chain, monkeypatch):
    """distributed's periodic refresh can replace the client's copy of the scheduler's identity by
    one that lists no workers: the run's departures come from the scheduler's events instead."""
    comparison = _comparison(chain)

    def progress(done, total):
        monkeypatch.setattr(client, "scheduler_info", lambda **_: {"type": "Scheduler", "workers": {}})

    comparison.compute_all(progress=progress, cluster=client)
    assert not any("left during the run" in w for w in comparison.run(compare_input=True).summary().warnings)


@contextlib.contextmanager
def _listening(greeting: bytes | None):
    """A server on 127.0.0.1 that is no Dask scheduler: it sends ``greeting`` to each connection
    (an SSH server's banner, then bytes), or accepts and stays silent where it is ``None``."""
    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def serve():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = server.accept()
                held.append(conn)
                if greeting is not None:
                    conn.sendall(greeting)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in held:
            conn.close()


SSH_BANNER = b"SSH-2.0-OpenSSH_9.6\r\n" + bytes(range(256)) * 4


def test_another_service_at_the_address_is_one_sentence_within_seconds(tmp_path):
    with _listening(SSH_BANNER) as address:
        start = time.monotonic()
        with pytest.raises(ClusterError, match="answers, but not as a Dask scheduler does"):
            with connect(address):
                pass
        assert time.monotonic() - start < 10
        build_network(tmp_path)
        r = subprocess.run(
            [sys.executable, "-m", "fpinspect", "compare", str(tmp_path), "--scheduler", address],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert r.returncode == 2 and r.stdout == "", r.stderr
        assert (
            r.stderr
            == f"fpinspect: --scheduler {address}: answers, but not as a Dask scheduler does: is another service listening there?\n"
        )
    with _listening(None) as address:
        start = time.monotonic()
        with pytest.raises(
            ClusterError, match="accepts connections but does not answer as a Dask scheduler does within 1 s"
        ):
            with connect(address, timeout=1):
                pass
        assert time.monotonic() - start < 10


@pytest.fixture
def scheduler():
    """A Dask scheduler in a process of its own on 127.0.0.1, without workers: its address and process."""
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
         "--dashboard-address", ":0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert proc.poll() is None and time.monotonic() < deadline, "the scheduler never started"
            time.sleep(0.1)
        yield f"tcp://127.0.0.1:{port}", proc
    finally:
        proc.kill()
        proc.wait()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _two_step_tree(root: Path) -> list[str]:
    """``compare`` flags of two numbered step folders per side (hard links to one big run's
    sparse dumps): step 0 holds one fusion-on dump (one pair, seconds), step 1 all six."""
    flags = big_run(root / "run", 6, 1 << 27)
    data = {flags[i]: Path(flags[i + 1]) for i in range(0, len(flags), 2)}
    for option in ("--af-open-data", "--af-close-data"):
        for step in ("0", "1"):
            folder = root / option.split("-")[3] / step
            folder.mkdir(parents=True)
            for file in sorted(data[option].iterdir()):
                if (
                    step == "1"
                    or option == "--af-close-data"
                    or file.name.startswith("AscBackend.autofuse_0.")
                ):
                    os.link(file, folder / file.name)
        flags[flags.index(option) + 1] = str(root / option.split("-")[3])
    return flags


def test_a_scheduler_without_workers_and_one_killed_mid_run_are_one_sentence(scheduler, tmp_path):
    address, process = scheduler
    start = time.monotonic()
    with pytest.raises(
        ClusterError, match=f"--scheduler {address}: has no workers: none joined it within 1 s"
    ):
        with connect(address, workers_timeout=1):
            pass
    assert time.monotonic() - start < 15
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
         "--dashboard-address", ":0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with connect(address):  # its worker has joined
            pass
        flags = _two_step_tree(tmp_path)
        compare = subprocess.Popen(
            [sys.executable, "-m", "fpinspect", "compare", *flags, "--steps", "all", "--scheduler", address,
             "--replay", "none", "--format", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        busy = _cpu_seconds(worker.pid)
        deadline = time.monotonic() + 120
        while _cpu_seconds(worker.pid) - busy < 4.0:  # step 0 (one pair) is done, step 1 computes
            assert compare.poll() is None and time.monotonic() < deadline, compare.communicate()
            time.sleep(0.05)
        process.kill()
        out, err = compare.communicate(timeout=60)
    finally:
        worker.kill()
        worker.wait()
    assert compare.returncode == 2, err
    assert err == f"fpinspect: --scheduler {address}: closed the connection mid-run: nothing was reported\n"
    assert out == ""  # not the step compared before the scheduler went: the report is whole or absent
