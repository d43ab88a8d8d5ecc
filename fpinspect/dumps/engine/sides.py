"""Loading the two sides of one planned pair, once, in the layout and format they are compared in.

A side's layout, dtype and shapes are its raw dump header's when it has one, else the graph's
(:func:`~.tensors.dump_desc`). A side in a storage layout (NC1HWC0, FRACTAL_NZ, ...) is restored to its own origin layout
and shape, padding cropped: when both sides are stored padded, both are restored (padding
bytes are undefined). Then, if the two plain layouts still differ (NCHW vs NHWC), the fused
side is permuted to the original side's layout. Last, a side stored wider than the float
format both graphs declare is cast back to it (:func:`_as_declared`). Sides needing no
conversion stay chunked file readers (never loaded whole); each file's header is read once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ...numerics import float_format, is_supported
from ...numerics.chunks import CastView
from ..errors import InputError
from ..formats.ge_decode import TensorDesc
from ..formats.ge_types import numpy_dtype_name
from ..formats.layouts import PLAIN_LAYOUTS, LayoutError, convert_layout, needs_conversion
from ..formats.tensors import dump_desc, load_dump, open_dump
from .plan import PairPlan


@dataclass(frozen=True)
class Sides:
    """The two tensors of one pair as compared: ``fused`` (under test) and ``original`` (the
    reference), each an array, a memory map or a chunked reader (:class:`~.chunks.NpyFile`,
    :class:`~.chunks.CastView`), of equal element count when the pair is comparable."""

    fused: object
    original: object
    #: the layout both are compared in, by its logical (origin) name: the restored layout of a
    #: stored original side, else the original's declared origin format or layout (None: undeclared)
    layout: str | None
    notes: tuple[str, ...] = ()  #: each conversion or cast made, e.g. ``"fused NC1HWC0->NCHW"``
    converted: bool = False  #: a side's layout was converted (status ``FORMAT_CONVERTED``)

    @property
    def status(self) -> list[str]:
        return ["FORMAT_CONVERTED"] if self.converted else []

    @property
    def conversion(self) -> str | None:
        """The notes as one line (the record's ``conversion``), ``None`` without any."""
        return "; ".join(self.notes) or None


#: What :func:`load_sides` raises for a pair it cannot load; ``str()`` is one sentence, ``code`` a status.
SIDE_ERRORS = (InputError, LayoutError)


def load_sides(plan: PairPlan) -> Sides:
    """Both sides of a comparable ``plan`` (see the module docstring). Raises
    :class:`~.errors.InputError` for an unreadable file and :class:`~.layouts.LayoutError`
    for a layout that cannot be converted (:data:`SIDE_ERRORS`)."""
    fa, fb = plan.fused_file, plan.origin_file
    a, b = open_dump(fa), open_dump(fb)
    opened_a, opened_b = a, b
    da, db = dump_desc(fa, plan.fused_desc), dump_desc(fb, plan.origin_desc)
    la, lb = _layout(da), _layout(db)
    compared = (db.origin_format or db.layout) if db else None
    notes: list[str] = []
    if _is_storage(la):
        a, la = _restore(load_dump(fa, opened_a), da, lb, b.shape, notes, "fused")
    if _is_storage(lb):
        b, lb = _restore(load_dump(fb, opened_b), db, la, a.shape, notes, "original")
        compared = lb
    if needs_conversion(la, lb):
        src = a if isinstance(a, np.ndarray) else load_dump(fa, opened_a)
        a = np.ascontiguousarray(convert_layout(src, la, lb, b.shape))
        notes.append(f"fused {la}->{lb}")
    converted = bool(notes)
    a, b = _as_declared(a, b, plan, notes)
    return Sides(a, b, compared, tuple(notes), converted)


def _as_declared(a, b, plan: PairPlan, notes: list[str]):
    """Both sides in the float format the graphs declare, when the dumps store it widened.

    msaccucmp saves bfloat16 tensors as float32: judged as float32 they would be measured
    against float32's epsilon and ULPs. Casting back is exact, and ULPs and thresholds are
    then those of the declared format.
    """
    name = _declared_float(*(d.dtype if d else None for d in (plan.fused_desc, plan.origin_desc)))
    if name is None:
        return a, b
    out = []
    for side in (a, b):
        stored = np.dtype(side.dtype)
        if _more_precise(stored, name):
            dtype = float_format(name).dtype
            side = side.astype(dtype) if isinstance(side, np.ndarray) else CastView(side, dtype)
            notes.append(f"{'fused' if not out else 'original'} stored {stored}, compared as declared {name}")
        out.append(side)
    return out[0], out[1]


@cache
def _declared_float(fused: str | None, origin: str | None) -> str | None:
    """The float format both sides' GE dtypes (``DT_BF16``) declare, by its name; ``None`` where
    they differ or declare none. Once per pair of names (a small pair's loading cost it ~2 us)."""
    name = numpy_dtype_name(fused)
    if name is None or name != numpy_dtype_name(origin) or not is_supported(name):
        return None
    return name


@cache
def _more_precise(stored: np.dtype, name: str) -> bool:
    """Whether a side stored as ``stored`` holds a more precise float format than ``name``."""
    return is_supported(stored) and float_format(stored).p > float_format(name).p


def _layout(desc: TensorDesc | None) -> str | None:
    """The layout with its sub-format (``FRACTAL_Z:16``): grouped layouts must not pass as plain."""
    return desc.full_layout if desc else None


def _is_storage(layout: str | None) -> bool:
    return layout is not None and layout.partition(":")[0].upper() not in PLAIN_LAYOUTS


def _restore(
    arr: np.ndarray,
    desc: TensorDesc | None,
    other_layout: str | None,
    other_shape,
    notes: list[str],
    side: str,
) -> tuple[np.ndarray, str]:
    """A storage-layout array in its origin layout (the other side's, if it has none recorded)."""
    layout = _layout(desc)
    if desc is not None and desc.origin_format:
        target, shape = desc.origin_format, desc.origin_shape or tuple(other_shape)
    else:
        target = other_layout if other_layout and not _is_storage(other_layout) else "ND"
        shape = tuple(other_shape)
    notes.append(f"{side} {layout}->{target}")
    return np.ascontiguousarray(convert_layout(arr, layout, target, shape)), target


@dataclass
class OpSides:
    """The loaded sides of one fused op's pairs, by output and input number: each fused-side
    tensor with its fusion-off counterpart. A pair with nothing to load, or that failed to load,
    is in ``problems`` instead: ``{(kind, number): why}``."""

    outputs: dict[int, Sides] = field(default_factory=dict)
    inputs: dict[int, Sides] = field(default_factory=dict)
    problems: dict[tuple[str, int], str] = field(default_factory=dict)


def load_op_sides(plans: list[PairPlan]) -> OpSides:
    """:func:`load_sides` for each of one op's ``plans`` (its outputs and inputs)."""
    out = OpSides()
    for plan in plans:
        where = (plan.kind, plan.fused_index)
        if not plan.comparable:
            out.problems[where] = plan.message or ", ".join(plan.status) or "no fusion-off side"
            continue
        try:
            sides = load_sides(plan)
        except SIDE_ERRORS as exc:
            out.problems[where] = str(exc)
            continue
        (out.outputs if plan.kind == "output" else out.inputs)[plan.fused_index] = sides
    return out
