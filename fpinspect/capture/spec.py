"""What a capture was made from (``capture.json`` beside its dump folders), so that it can be run
again: the model, its seed, dtype and device, the simulated faults planted in it and the regions
left unfused."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

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
        return cls(**data)
