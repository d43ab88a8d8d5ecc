"""What every device backend provides to the tasks.

A backend runs a function *eager* (each operator its own library kernel, every result
rounded to its dtype) or *fused* (through the device's fusing compiler), captures the
fused kernels' source for hashing, and knows which environment makes a new process start
*cold* (an empty compile cache).
"""

from __future__ import annotations

import hashlib
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class BackendUnavailable(RuntimeError):
    """The requested device cannot be used here; ``str()`` says why in one sentence."""


@dataclass(frozen=True)
class KernelSource:
    """One generated kernel: its name and its source, already normalised."""

    name: str
    source: str


@dataclass(frozen=True)
class Compiled:
    """A function compiled by the fusing compiler, with the output and kernels of the
    compiling call."""

    fn: Callable[..., Any]
    output: Any
    kernels: tuple[KernelSource, ...]
    seconds: float
    #: Library kernels the compiled code calls instead of generating them (Inductor's
    #: ``extern_kernels.mm`` and the like), in first-call order; their code is not in
    #: ``kernels``.
    externs: tuple[str, ...] = ()


@dataclass(frozen=True)
class CodegenVariant:
    """One setting of the fusing compiler that changes how it orders arithmetic, for
    tasks that observe the framework's own choices: compiler ``options`` (Inductor config
    keys such as ``cpp.simdlen``) and the CPU ``threads`` kernels are compiled and run with
    (None: unchanged)."""

    label: str
    options: Mapping[str, Any] = field(default_factory=dict)
    threads: int | None = None


def normalise_source(text: str, paths: Mapping[str, str]) -> str:
    """Strip what changes from one compile to the next but not the kernel itself.

    Removes comment lines that carry run-specific ids (``# AOT ID: ...``, ``# kernel path:
    ...``), replaces each path in ``paths`` (for example the compile-cache directory) with
    its placeholder, and drops trailing whitespace.
    """
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("# AOT ID:", "# kernel path:")):
            continue
        for path, placeholder in paths.items():
            if path:
                line = line.replace(path, placeholder)
        lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"


def kernel_hash(kernels: tuple[KernelSource, ...] | list[KernelSource]) -> str | None:
    """SHA-256 over the kernels' names and normalised sources, in generation order; None
    when no kernel was captured."""
    if not kernels:
        return None
    h = hashlib.sha256()
    for k in kernels:
        h.update(k.name.encode() + b"\0" + k.source.encode() + b"\0")
    return h.hexdigest()


_TMP_ASSIGN = re.compile(r"^\s*(?:auto\s+)?tmp\d+\s*=.*$", re.MULTILINE)


def computation_lines(kernels: tuple[KernelSource, ...] | list[KernelSource]) -> list[str]:
    """The ``tmpN = …`` statements of Inductor kernels (C++ and Triton alike): the
    arithmetic a fused kernel performs, in order. Empty for backends whose kernels do not
    follow that naming."""
    return [m.group(0).strip() for k in kernels for m in _TMP_ASSIGN.finditer(k.source)]


_INPUT_BUFFER = re.compile(r"\bin_ptr\d+\b")


def input_buffers(kernels: tuple[KernelSource, ...] | list[KernelSource]) -> int:
    """How many distinct input buffers (``in_ptrN``) Inductor kernels read; 0 for backends
    whose kernels do not follow that naming."""
    return len({m for k in kernels for m in _INPUT_BUFFER.findall(k.source)})


def count_files(root: Path | None) -> int:
    """Regular files below ``root`` (0 when it does not exist)."""
    if root is None or not root.exists():
        return 0
    return sum(len(files) for _, _, files in os.walk(root))


class Backend(ABC):
    #: ``cpu``, ``cuda`` or ``npu``.
    name: str
    #: The torch device string tensors are moved to.
    device: str

    def eager(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` as it is: PyTorch dispatches each operator to its own library kernel,
        which rounds its result to the output dtype."""
        return fn

    @abstractmethod
    def fused(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` compiled by the device's fusing compiler (one graph, static shapes)."""

    @abstractmethod
    def compile(self, fn: Callable[..., Any], *args: Any) -> Compiled:
        """Compile ``fn`` for ``args``, run it once, and capture the generated kernels.

        Inductor backends reset Dynamo's in-memory state first, so finish all runs of one
        compiled function before compiling the next.
        """

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for queued device work (timings, and reading results on the host)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Facts that enter the kernels or the numbers: device name, ISA, threads,
        compiler and library versions, numerics-relevant compiler settings."""

    @abstractmethod
    def cache_dir(self) -> Path | None:
        """Where this process's compiled kernels are cached on disk."""

    @abstractmethod
    def compile_counters(self) -> dict[str, int]:
        """Compile-cache hit and miss counts of this process so far (empty when the
        compiler does not expose any)."""

    @abstractmethod
    def cold_start_env(self, root: Path) -> dict[str, str]:
        """Environment variables that give a new process empty compile caches below
        ``root`` (a fresh directory); creates the directories they name."""

    def codegen_variants(self) -> list[CodegenVariant]:
        """Compiler settings worth trying when observing the framework's own reduction
        order (task C2's fallback); the first is the default. None by default."""
        return []

    @contextmanager
    def variant(self, v: CodegenVariant) -> Iterator[None]:
        """Compile and run inside this block with ``v`` applied; backends without
        :meth:`codegen_variants` accept only the empty variant."""
        if v.options or v.threads is not None:
            raise ValueError(f"device {self.name} has no compiler variant {v.label!r}")
        yield

    def deterministic_mode(self) -> dict[str, Any]:
        """Switch on the device's deterministic-algorithm settings (task A) and return
        what was set; empty when the device has none to set."""
        return {}

    def paths_to_normalise(self) -> dict[str, str]:
        """Paths that appear in generated code and change between processes."""
        cache = self.cache_dir()
        return {str(cache): "<cache>"} if cache is not None else {}
