"""Errors about user input, each rendered as one sentence that names the file."""

from __future__ import annotations

import errno
import os


class InputError(Exception):
    """A whole input (file or folder) is missing, unreadable or malformed.

    ``str(err)`` is one sentence naming the path and the problem; the CLI prints it and
    exits with status 2.
    """

    def __init__(self, path, problem: str, code: str = "NPY_LOAD_ERROR"):
        self.path = os.fspath(path) if path is not None else None
        self.problem = problem
        self.code = code
        super().__init__(f"{self.path}: {problem}" if self.path else problem)


def missing(path, noun: str = "file") -> str:
    """Why ``path``, which does not exist as far as ``os.path.exists`` can tell, is missing: a
    symbolic link loop, a link to nothing, or no such ``noun`` at all (a phrase to follow the
    path)."""
    if not os.path.islink(path):
        return f"{noun} does not exist"
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop"
    return f"is a symbolic link to a {noun} that does not exist"
