"""GE op semantics for replay, one registered function per op type (see :mod:`.base`)."""

from . import activations, elementwise, movement, norms, reductions  # noqa: F401  (they register)
from .base import ELEMENTWISE, OPS, ROWS_INDEPENDENT, OpCall, Unsupported, reduced_axes, semantics

__all__ = ["ELEMENTWISE", "OPS", "ROWS_INDEPENDENT", "OpCall", "Unsupported", "reduced_axes", "semantics"]
