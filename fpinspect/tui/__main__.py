"""``python -m fpinspect.tui [GRAPH] [DATA] ...``: the same as ``fpinspect open``."""

from ..cli.open import open_command

open_command(prog_name="fpinspect open")
