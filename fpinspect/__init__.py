"""fpinspect: find where operator fusion changed your numbers."""

__version__ = "0.1.0"
