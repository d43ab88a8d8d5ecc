"""Messages that workers post; the screens' handlers own every state change they cause."""

from __future__ import annotations

from textual.message import Message

from ..dumps import FusedOp, PairResult, Record
from ..dumps.engine.drilldown import ErrorProfile
from ..dumps.engine.localise import Localisation, OpFinding
from ..replay.evidence import OpReplay
from .model import RunView, outline_rows


class Outlined(Message):
    """The fusion-on graph's fused ops, in file order, read before the whole run is loaded, and
    their list rows, built by the worker that posts the message (not by the screen's thread)."""

    def __init__(self, ops: list[FusedOp], *, complete: bool = True) -> None:
        super().__init__()
        self.ops = ops
        self.rows = outline_rows(ops)
        #: ``False``: the first ops only, the rest still being decoded (another message follows)
        self.complete = complete


class Loaded(Message):
    """Graphs read and dump folders indexed."""

    def __init__(self, inspection: RunView) -> None:
        super().__init__()
        self.inspection = inspection


class LoadFailed(Message):
    """The input could not be read; ``problem`` is one sentence naming the file."""

    def __init__(self, problem: str) -> None:
        super().__init__()
        self.problem = problem


class RecordsComputed(Message):
    """A batch of computed records; ``done`` of the sweep's ``total`` pairs are finished.
    ``on_demand``: the pairs of one op asked for after the sweep (not part of its count)."""

    def __init__(self, records: list[Record], done: int, total: int, *, on_demand: bool = False) -> None:
        super().__init__()
        self.records, self.done, self.total, self.on_demand = records, done, total, on_demand


def _lookups(localisation: Localisation) -> dict[str, OpFinding]:
    """The localisation's :attr:`~fpinspect.dumps.engine.localise.Localisation.by_name`, with its
    ``introduced`` list made too: built by the worker that posts the message, as both are kept
    once built (for 100 000 ops, scans the screen's thread need not take)."""
    localisation.introduced  # noqa: B018 (made now, kept by the localisation)
    return localisation.by_name


class Localised(Message):
    """Every pair is computed and each failing op is classified. ``findings`` is the
    localisation's :attr:`~fpinspect.dumps.engine.localise.Localisation.by_name` and ``flagged`` the
    names of the ops whose verdict is ``fail`` or ``warn``, in order; both made by the worker."""

    def __init__(self, localisation: Localisation) -> None:
        super().__init__()
        self.localisation = localisation
        self.findings = _lookups(localisation)
        self.flagged = [f.name for f in localisation.ops if f.verdict in ("fail", "warn")]


class Replayed(Message):
    """Fused op ``name`` was replayed; ``localisation`` is the localisation with every replay
    so far as evidence (None while pairs are still being compared)."""

    def __init__(self, name: str, replay: OpReplay, localisation: Localisation | None) -> None:
        super().__init__()
        self.name, self.replay, self.localisation = name, replay, localisation
        self.findings = _lookups(localisation) if localisation is not None else None  # as Localised's


class PairComputed(Message):
    def __init__(self, result: PairResult | None, record: Record | None) -> None:
        super().__init__()
        self.result, self.record = result, record


class ProfileComputed(Message):
    """Where the errors sit; ``profile`` is None and ``problem`` says why when it failed."""

    def __init__(self, profile: ErrorProfile | None, problem: str | None = None) -> None:
        super().__init__()
        self.profile, self.problem = profile, problem


class ConfirmProgress(Message):
    """A stage or model run of the confirm that runs (``v``)."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line


class Exported(Message):
    def __init__(self, path: str, records: int = 0, problem: str | None = None) -> None:
        super().__init__()
        self.path, self.records, self.problem = path, records, problem


class RunEvent(Message):
    """Events of a task run's child process (:mod:`fpinspect.experiments.events`), in order:
    those that arrived together."""

    bubble = False  # for the Tasks pane only

    def __init__(self, run_id: int, events: list) -> None:
        super().__init__()
        self.run_id, self.events = run_id, events


class RunEnded(Message):
    """A run's child has exited and its folder is complete: ``report`` and the files
    ``written`` when it finished, ``log_tail`` (tracebacks left out) when it failed."""

    bubble = False  # for the Tasks pane only

    def __init__(self, run_id: int, report=None, written: list | None = None, log_tail: str = "") -> None:
        super().__init__()
        self.run_id, self.report, self.written, self.log_tail = run_id, report, written or [], log_tail


class DevicesProbed(Message):
    """Device name -> None when it can run experiments here, else why not."""

    bubble = False  # for the Tasks pane only

    def __init__(self, devices: dict[str, str | None]) -> None:
        super().__init__()
        self.devices = devices


class HistoryRead(Message):
    """The History screen's runs: those ``recorded`` in the results database, or, when it cannot
    be read (``problem``, one sentence), the ``kept`` run folders."""

    bubble = False  # for the History screen only

    def __init__(self, recorded: list | None, kept: list | None = None, problem: str | None = None) -> None:
        super().__init__()
        self.recorded, self.kept, self.problem = recorded, kept, problem
