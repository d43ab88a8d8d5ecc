"""Resolve ``MODEL``: a built-in demo name or ``package.module:factory``."""

from __future__ import annotations

import importlib
import os
import sys
from contextlib import contextmanager

import torch

from .demos import DEMOS
from .errors import CaptureError, first_line


def load_model(spec: str, seed: int = 0) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """``(module, example_inputs)`` for ``spec``.

    A demo is built from ``seed``. A factory is any callable reachable as
    ``package.module:attr`` (``attr`` may be dotted), called without arguments after
    ``torch.manual_seed(seed)``; it returns ``(module, inputs)`` where ``inputs`` is a tensor
    or a tuple of tensors. The current directory is importable, as it is for ``python -m``.
    """
    if spec in DEMOS:
        return DEMOS[spec](seed)
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise CaptureError(
            f"MODEL {spec!r} is neither a built-in demo ({', '.join(DEMOS)}) nor 'package.module:factory'"
        )
    with _importable_cwd():
        factory = _resolve(spec, module_name, attr)
        torch.manual_seed(seed)
        try:
            result = factory()
        except Exception as exc:  # the user's code: any failure is reported, not re-raised
            raise CaptureError(f"{spec}() raised {type(exc).__name__}: {first_line(exc)}") from None
    return _checked(spec, result)


@contextmanager
def _importable_cwd():
    """The current directory on ``sys.path`` while the factory is imported and called."""
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if added:
            sys.path.remove(cwd)


def _resolve(spec: str, module_name: str, attr: str):
    try:
        factory = importlib.import_module(module_name)
    except Exception as exc:  # importing runs the user's module: any failure is reported
        raise CaptureError(
            f"cannot import {module_name} for MODEL {spec} ({type(exc).__name__}: {first_line(exc)})"
        ) from None
    try:
        for part in attr.split("."):
            factory = getattr(factory, part)
    except AttributeError:
        raise CaptureError(f"module {module_name} has no attribute {attr} (MODEL {spec})") from None
    if not callable(factory):
        raise CaptureError(f"{spec} is a {type(factory).__name__}, not a factory function")
    return factory


def _checked(spec: str, result) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    if not (
        isinstance(result, (tuple, list)) and len(result) == 2 and isinstance(result[0], torch.nn.Module)
    ):
        raise CaptureError(f"{spec}() must return (module, example_inputs), not {type(result).__name__}")
    module, inputs = result
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else inputs
    if (
        not isinstance(inputs, (tuple, list))
        or not inputs
        or not all(isinstance(x, torch.Tensor) for x in inputs)
    ):
        raise CaptureError(f"{spec}() must return example inputs that are a tensor or a tuple of tensors")
    return module, tuple(inputs)
