"""Kept runs: one folder per run under a results directory, and reading them back.

A run folder ``<results>/<YYYYmmdd-HHMMSS>-<task>-<device>-<profile>/`` holds what
:func:`~.output.write_outputs` writes (``result.json``, ``report.md``, ``figures/``), the
child's ``run.log``, and ``run.json``: when it ran, how long it took, and how it ended
(``finished``, or the failure's ``kind``, message and the last lines of the log).

Any ``result.json`` can be read back with :func:`load_result`, including one copied from
another machine without its ``run.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy: loaded by load_result, not by the CLI's option defaults
    from .results import TaskReport

#: Where runs are kept unless told otherwise (relative to the current directory).
DEFAULT_RUNS_DIR = "fpinspect-runs"
#: Environment variable naming another results directory.
RUNS_DIR_ENV = "FPINSPECT_RUNS_DIR"


class ResultError(ValueError):
    """A result file cannot be read; ``str()`` is one sentence naming the file."""


def default_runs_dir() -> Path:
    return Path(os.environ.get(RUNS_DIR_ENV) or DEFAULT_RUNS_DIR)


def verdict_summary(report: TaskReport) -> str:
    """``agrees`` when every verdict agrees with the plan, ``disagrees`` when any
    contradicts it, ``cannot tell`` otherwise (no verdict, or some the device cannot show)."""
    agrees = [v.agrees for v in report.verdicts]
    if any(a is False for a in agrees):
        return "disagrees"
    if agrees and all(a is True for a in agrees):
        return "agrees"
    return "cannot tell"


def read_json(path: Path) -> Any:
    """The JSON document in ``path``: a regular file (a FIFO is refused, never waited on) of
    UTF-8 text; :class:`ResultError` (one sentence naming the file) otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ResultError(f"{path} does not exist.") from None
    except OSError as exc:
        raise ResultError(f"{path} cannot be read: {exc.strerror or exc}.") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ResultError(f"{path} is not a regular file.")
        try:
            raw = f.read()
        except OSError as exc:
            raise ResultError(f"{path} cannot be read: {exc.strerror or exc}.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultError(f"{path} is not UTF-8 text (byte {exc.start} is not), so not a result.") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ResultError(f"{path} nests its JSON too deeply to be a result.") from None
    except ValueError as exc:
        raise ResultError(f"{path} is not JSON ({exc}).") from None


def load_result(path: Path | str) -> TaskReport:
    """The report in ``path`` (a ``result.json``, or a run folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "result.json"
    data = read_json(path)
    if not isinstance(data, dict) or "task" not in data or "verdicts" not in data:
        raise ResultError(f"{path} is not an fpinspect result (no task and verdicts in it).")
    from .result_check import ResultFieldError, check_report
    from .results import TaskReport

    try:
        check_report(data)
        return TaskReport.from_dict(data)
    except ResultFieldError as exc:
        raise ResultError(f"{path} is not a result this version can show: {exc}.") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultError(f"{path} is an incomplete fpinspect result (missing or malformed {exc}).") from None


@dataclass(frozen=True)
class RunRecord:
    """What ``run.json`` says about one run."""

    task: str
    device: str
    profile: str
    settings: dict[str, Any]
    started: str
    seconds: float | None = None
    #: ``running``, ``finished``, or a failure kind (``usage``, ``error``, ``crash``, ``cancelled``).
    status: str = "running"
    message: str = ""
    log_tail: str = ""
    verdict: str = ""


@dataclass(frozen=True)
class KeptRun:
    """One entry of the history: a run folder and what is known about it."""

    folder: Path
    record: RunRecord

    @property
    def result_path(self) -> Path:
        return self.folder / "result.json"

    @property
    def has_result(self) -> bool:
        return self.result_path.is_file()


class RunStore:
    """The results directory: new run folders, their records, and the history."""

    def __init__(self, root: Path | str):
        # absolute: a child process works in its run folder, so relative paths would move
        self.root = Path(root).absolute()

    def new_run(self, task: str, device: str, profile: str, now: datetime | None = None) -> Path:
        """A new, empty folder for a run (a suffix keeps two runs of the same second apart)."""
        stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
        base = f"{stamp}-{task}-{device}-{profile}"
        self.root.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            folder = self.root / (base if n == 0 else f"{base}-{n}")
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                continue
        raise OSError(f"cannot make a new run folder under {self.root}")

    @staticmethod
    def write_record(folder: Path, record: RunRecord) -> None:
        (folder / "run.json").write_text(
            json.dumps(asdict(record), indent=2, ensure_ascii=False) + "\n", "utf-8"
        )

    @staticmethod
    def keep_log(folder: Path, log: Path) -> None:
        """Move the child's log into the run folder (it is the record of a failure)."""
        if log.is_file():
            shutil.move(str(log), folder / "run.log")

    @staticmethod
    def read_record(folder: Path) -> RunRecord | None:
        """The folder's ``run.json``, or one made from its ``result.json`` alone; None when
        neither can be read."""
        try:
            data = read_json(folder / "run.json")
            return RunRecord(**{k: v for k, v in data.items() if k in RunRecord.__dataclass_fields__})
        except (ResultError, AttributeError, TypeError):
            pass
        try:
            report = load_result(folder)
        except ResultError:
            return None
        return RunRecord(
            report.task,
            report.device,
            report.profile,
            report.settings,
            started="",
            status="finished",
            verdict=verdict_summary(report),
        )

    def history(self) -> list[KeptRun]:
        """Every readable run under the root, newest first (by folder name, which starts
        with the start time)."""
        if not self.root.is_dir():
            return []
        runs = []
        for folder in sorted(
            (p for p in self.root.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True
        ):
            record = self.read_record(folder)
            if record is not None:
                runs.append(KeptRun(folder, record))
        return runs

    def last_outcomes(self) -> dict[str, str]:
        """How each task's newest run went: its verdict summary when it finished (``finished``
        if it recorded none), ``running``, or ``failed (KIND)`` with the failure's kind."""
        out: dict[str, str] = {}
        for run in self.history():
            r = run.record
            if r.task in out:
                continue
            if r.status == "finished":
                out[r.task] = r.verdict or "finished"
            else:
                out[r.task] = r.status if r.status == "running" else f"failed ({r.status})"
        return out

    def last_seconds(self, task: str, device: str, profile: str) -> float | None:
        """How long the slowest finished run of ``task`` on ``device`` with ``profile``'s
        own settings took (no setting it records overridden; any seed): an estimate of the
        profile is never below it."""
        from .registry import get_task

        wanted = get_task(task).settings.profile(profile).to_dict()
        times = [
            r.seconds
            for r in (run.record for run in self.history())
            if (r.task, r.device, r.profile, r.status) == (task, device, profile, "finished")
            and r.seconds
            and all(wanted.get(k) == v for k, v in r.settings.items() if k != "seed")
        ]
        return max(times, default=None)


def readable_tail(text: str, lines: int = 12) -> str:
    """The last ``lines`` lines of a child's log for people: each Python traceback is cut
    down to its final line (the exception and its message)."""
    out: list[str] = []
    in_traceback = False
    for line in text.splitlines():
        if line.startswith("Traceback (most recent call last)"):
            in_traceback = True
            continue
        if in_traceback:
            if line.startswith((" ", "\t")) or not line.strip():
                continue
            in_traceback = False
            if line.startswith(("During handling", "The above exception")):
                continue
        out.append(line)
    return "\n".join(out[-lines:])


def shown_path(path: Path) -> str:
    """``path`` as people read it: relative to the current directory when it is below it."""
    try:
        return str(Path(path).absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
