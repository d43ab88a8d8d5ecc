"""The command-line layer: every ``fpinspect`` click command, and the rich rendering they print.

``main`` (the ``fpinspect`` group, :mod:`.group`) is the console-script entry point. Each
command module imports its layer below only when the command runs, so ``compare``, ``diff``
and ``open`` work where torch is not installed.
"""

from .group import main

__all__ = ["main"]
