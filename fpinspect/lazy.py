"""Package attributes that load their module on first use (PEP 562).

A package lists the names it exports and the module that defines each; importing the package
imports none of them, so a command pays only for the modules it touches (``fpinspect diff``
does not import the graph readers, ``fpinspect --help`` not even numpy). Used by
:mod:`fpinspect.dumps`, :mod:`fpinspect.capture` and :mod:`fpinspect.experiments`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], object], list[str]]:
    """``(__getattr__, __all__)`` for ``package``: ``exports`` maps each exported name to the
    relative module defining it (``{"Report": ".report"}``). A name is imported on its first
    access and then set on the package, so later accesses are plain attribute reads."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__, sorted(exports)
