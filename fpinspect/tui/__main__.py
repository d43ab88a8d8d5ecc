"""``python -m fpinspect.tui [GRAPH] [DATA] ...``: the same as ``fpinspect open``."""

from .commands import open_command

open_command(prog_name="fpinspect open")
