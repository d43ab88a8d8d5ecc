"""What a capture was made from (``capture.json`` beside its dump folders), so that it can be run
again: the model, its seed, dtype and device, the simulated faults planted in it and the regions
left unfused.

The file is data: a model factory it names (``package.module:factory``) is never imported on its
word, since a folder received from someone else would then run whatever it says. Only the
built-in demos run by name; a factory runs when the user names it on the command line
(:meth:`CaptureSpec.to_run`)."""

from __future__ import annotations

import json
import os
import shlex
import stat
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .choices import DEMO_NAMES, DEVICES, DTYPE_NAMES, SEED_MAX
from .errors import CaptureError

FILE = "capture.json"


@dataclass(frozen=True)
class CaptureSpec:
    """``model`` is a demo name or ``package.module:factory``; ``inject`` the ``--inject`` values,
    ``unfuse`` the ``--unfuse`` regions (names or numbers)."""

    model: str
    seed: int = 0
    dtype: str = "float16"
    device: str = "cpu"
    inject: list[str] = field(default_factory=list)
    unfuse: list[str] = field(default_factory=list)

    def write(self, out: str | os.PathLike) -> Path:
        path = Path(out) / FILE
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def read(cls, run_dir: str | os.PathLike) -> CaptureSpec:
        """The spec of the capture in ``run_dir``; :class:`CaptureError` (one sentence) when there is
        none or it is malformed."""
        path = Path(run_dir) / FILE
        if not Path(run_dir).is_dir():
            raise CaptureError(f"{run_dir} is not a folder")
        try:
            if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block the read forever
                raise CaptureError(f"{path} is not a regular file")
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CaptureError(
                f"{run_dir} has no {FILE}: it was not made by fpinspect capture (or by an older version); "
                "capture it again to run it again"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise CaptureError(f"{path} is not readable ({exc})") from None
        types = {"model": str, "seed": int, "dtype": str, "device": str, "inject": list, "unfuse": list}
        if not isinstance(data, dict) or "model" not in data:
            raise CaptureError(f"{path} names no model")
        for key, value in data.items():
            if key not in types:
                raise CaptureError(f"{path}: unknown field {key!r}")
            if not isinstance(value, types[key]) or isinstance(value, bool):
                raise CaptureError(f"{path}: field {key!r} is not a {types[key].__name__}")
        if not all(isinstance(i, str) for i in data.get("inject", [])):
            raise CaptureError(f"{path}: field 'inject' is not a list of REGION=KIND strings")
        if not all(isinstance(r, str) for r in data.get("unfuse", [])):
            raise CaptureError(f"{path}: field 'unfuse' is not a list of region names or numbers")
        if not 0 <= data.get("seed", 0) <= SEED_MAX:
            raise CaptureError(f"{path}: seed {data['seed']} is not between 0 and {SEED_MAX}")
        for key, allowed in (("dtype", DTYPE_NAMES), ("device", DEVICES)):
            if key in data and data[key] not in allowed:
                raise CaptureError(f"{path}: {key} {data[key]!r} is not one of {', '.join(allowed)}")
        return cls(**data)

    def to_run(self, named: str | None, source: str | os.PathLike) -> CaptureSpec:
        """This spec with the model to run again: ``named`` when the user named one (``--model``),
        else the recorded model when it is a built-in demo. A factory that only the file in
        ``source`` names is refused (:class:`CaptureError`): reading a file never runs code."""
        if named is not None:
            return replace(self, model=named)
        if self.model in DEMO_NAMES:
            return self
        raise CaptureError(
            f"{Path(source) / FILE} names the model factory {self.model}, and fpinspect runs no code "
            f"on a file's word: if you trust it, name it yourself with --model {shlex.quote(self.model)}"
        )
