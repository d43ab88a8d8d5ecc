"""The one error capture raises for a problem the user can fix."""

from __future__ import annotations


class CaptureError(Exception):
    """The model cannot be captured: one sentence naming the operator, region or option.

    The command prints it and exits with status 2; it never carries a traceback for the user.
    """


def first_line(exc: BaseException) -> str:
    """The first informative line of an exception's message, without a trailing period:
    what a :class:`CaptureError` quotes from torch, whose messages run to many lines and
    often open with a header such as ``backend='inductor' raised:``."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    told = [line for line in lines if not line.endswith(":")] or lines or [type(exc).__name__]
    return told[0].rstrip(".")
