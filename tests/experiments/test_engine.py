import importlib.util
import os
import signal

import pytest

from fpinspect.experiments.engine import ExperimentFailed, ExperimentProcess, collect
from fpinspect.experiments.events import Failed, Message, Started
from fpinspect.experiments.registry import UnknownTask

UNAVAILABLE = "npu" if importlib.util.find_spec("torch_npu") is None else None


def test_unknown_task_fails_before_any_process_starts():
    with pytest.raises(UnknownTask):
        ExperimentProcess("B7")


@pytest.mark.needs("torch")
@pytest.mark.skipif(UNAVAILABLE is None, reason="every device is available here")
def test_unavailable_device_is_a_usage_failure():
    with ExperimentProcess("C1", device=UNAVAILABLE) as p:
        events = list(p.events())
        workdir = p.workdir
    assert len(events) == 1 and isinstance(events[0], Failed)
    assert events[0].kind == "usage" and "not available" in events[0].message
    assert not workdir.exists()


def test_unknown_entry_is_a_usage_failure():
    with ExperimentProcess("C1", device="cpu", entry="nope") as p, pytest.raises(ExperimentFailed) as info:
        collect(p)
    assert info.value.kind == "usage" and "no entry 'nope'" in str(info.value)


@pytest.mark.needs("torch")
def test_cancel_stops_the_run():
    with ExperimentProcess("C2", device="cpu") as p:
        events = []
        for event in p.events():
            events.append(event)
            if isinstance(event, Message):
                p.cancel()
        workdir = p.workdir
    assert isinstance(events[0], Started)
    assert events[-1] == Failed("cancelled", "task C2 was cancelled")
    assert not workdir.exists()


@pytest.mark.needs("torch")
def test_a_child_that_dies_is_reported_as_a_crash_with_its_log():
    with ExperimentProcess("C2", device="cpu") as p:
        events = []
        for event in p.events():
            events.append(event)
            if isinstance(event, Started):
                os.kill(p._proc.pid, signal.SIGKILL)
        assert events[-1].kind == "crash" and "exited with status" in events[-1].message
        assert p.kept_log is not None and p.kept_log.exists()
    p.kept_log.unlink()
    p.workdir.rmdir()


def test_the_child_is_asked_to_lower_its_priority_only_when_told(tmp_path):
    assert "--nice" not in ExperimentProcess("S", workdir=tmp_path).command()
    command = ExperimentProcess("S", workdir=tmp_path, nice=5).command()
    assert command[command.index("--nice") + 1] == "5"
