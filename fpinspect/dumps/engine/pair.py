"""Compare one pair of tensors the way ``fusion_precision_analyzer.py`` does, and more.

The handling of mismatched inputs follows the reference script: different dtypes are
compared in the promoted type (``DTYPE_CAST``); different shapes with the same element
count are compared flat (``SHAPE_FLATTENED``); different element counts give
``SHAPE_MISMATCH`` and no numbers; an unreadable file gives ``NPY_LOAD_ERROR``. On top of
that every comparison carries the full toolkit statistics (ULP, msaccucmp, msprobe), the
special-value counts as statuses, and the worst elements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import msgspec
import numpy as np
from msgspec.structs import replace

from ...numerics import (
    ErrorStats,
    float_format,
    is_supported,
    metrics_from_stats,
    ulp_diff,
    ulp_error,
    ulp_nan,
)
from ...numerics.chunks import CastView, ChunkReader, NpyFile, unravel
from ...numerics.dtypes import dtype_name
from ...numerics.results import to_builtins
from ...numerics.stats import PairStats, accumulate
from ..errors import InputError
from ..formats.npyio import open_npy
from .integers import integer_errors, integer_metrics, is_integer

#: Status codes of one comparison. The first block is the reference script's set.
STATUS_DOC = {
    "OK": "compared; nothing else to report",
    "FILE_NOT_FOUND": "no dump file for this tensor",
    "NPY_LOAD_ERROR": "the .npy file is unreadable, corrupt, truncated or holds pickled objects",
    "FORMAT_CONVERTED": "a storage layout was converted to the original layout before comparing",
    "FORMAT_UNSUPPORTED": "the two layouts differ and no conversion between them is known",
    "FORMAT_CONVERSION_ERROR": "a known conversion did not apply (wrong rank or inconsistent sizes)",
    "DTYPE_CAST": "the dtypes differ; compared in the promoted type, ULPs in the narrower one",
    "SHAPE_FLATTENED": "the shapes differ but the element counts agree; compared flat",
    "SHAPE_MISMATCH": "the element counts differ; nothing compared",
    "SKIPPED_CONST_DATA": "input fed by a data or constant source; not compared",
    "NO_MAPPING": "the fused output carries no _datadump_origin_name mapping",
    "COMPUTE_ERROR": "the metrics could not be computed (non-numeric data)",
    # fpinspect's additions
    "ORIGIN_NOT_FOUND": "the mapped original op is not in the fusion-off graph",
    "RAW_LOAD_ERROR": "the raw dump file is unreadable: truncated, a header that overruns the file or does not "
    "decode, sizes that do not add up, or a dtype that cannot be read",
    "MULTIPLE_DUMPS": "several dumps exist for this tensor; the latest was used",
    "AMBIGUOUS_DUMP": "several ops of one graph are written alike in dump file names (a.b, a/b, a_b); not compared",
    "TYPE_MISMATCH": "the two graphs give this op name to ops of different types (not the same op); not compared",
    "EMPTY": "both tensors have no elements",
    "NAN_MISMATCH": "NaN on exactly one side in some elements (counted, left out of the statistics)",
    "INF_MISMATCH": "an infinity against a number or the opposite infinity (counted, left out)",
    "BOTH_NAN": "NaN on both sides in some elements (equal, left out of the statistics)",
}


#: The reference script's own codes; its drop-in prints only these.
REFERENCE_STATUSES = tuple(list(STATUS_DOC)[:12])


#: fpinspect's own codes that the reference script would have reported as one of its own.
_AS_REFERENCE = {
    "ORIGIN_NOT_FOUND": "FILE_NOT_FOUND",
    "AMBIGUOUS_DUMP": "FILE_NOT_FOUND",
    "TYPE_MISMATCH": "NO_MAPPING",
    "EMPTY": "COMPUTE_ERROR",
    "RAW_LOAD_ERROR": "NPY_LOAD_ERROR",
}


def reference_status(status: list[str]) -> str:
    """The status as the reference script prints it: its own codes joined by ``_``."""
    codes = [_AS_REFERENCE.get(s, s) for s in status]
    return "_".join(dict.fromkeys(s for s in codes if s in REFERENCE_STATUSES and s != "OK")) or "OK"


class PairMetrics(msgspec.Struct, frozen=True, kw_only=True):
    """Every number of a compared pair besides the reference script's trio: the one-pass metrics
    of :func:`~fpinspect.numerics.metrics_from_stats` (msaccucmp, msprobe), msaccucmp's KL divergence when
    it was asked for, the error statistics, and for integer data the count of differing elements.
    :meth:`to_json` writes them as one flat object (``metrics`` of the JSON reports)."""

    rmse: float | None
    mean_abs: float | None
    mean_rel: float | None
    accumulated_rel: float | None
    max_rel_msaccucmp: float | None
    red: float | None  #: relative Euclidean distance (msaccucmp)
    mean_x: float | None
    std_x: float | None
    mean_y: float | None
    std_y: float | None
    one_thousandth: float | None
    five_thousandth: float | None
    kl: float | None | msgspec.UnsetType = msgspec.UNSET  #: left out unless asked for
    errors: ErrorStats
    mismatched: int | msgspec.UnsetType = msgspec.UNSET  #: integer data only

    def to_json(self) -> dict:
        """The metrics, then the error statistics' fields, then ``mismatched`` (NaN stays NaN)."""
        out = to_builtins(self)
        return {
            k: v
            for key, value in out.items()
            for k, v in (value.items() if key == "errors" else [(key, value)])
        }


@dataclass
class PairResult:
    """One comparison of ``a`` (under test) with ``b`` (the reference): statuses, the reference
    script's trio, and every other number in ``metrics``. Nothing but ``status`` (and ``message``)
    is set when the pair could not be compared."""

    status: list[str]  #: codes of :data:`STATUS_DOC`, in the order they were found (no ``OK``)
    cosine: float | None = None  #: the reference script's cosine similarity
    max_abs: float | None = None  #: its largest absolute error
    max_rel: float | None = None  #: its largest relative error
    metrics: PairMetrics | None = None  #: ULP, msaccucmp and msprobe metrics, special-value counts
    worst: list[dict] = field(default_factory=list)  #: the worst elements: index, values, errors, bits
    message: str | None = None  #: one sentence on what went wrong, if anything did
    shape_a: tuple | None = None
    shape_b: tuple | None = None
    dtype_a: str | None = None
    dtype_b: str | None = None
    stats: PairStats | None = field(default=None, repr=False, compare=False)  #: the streamed statistics

    @property
    def compared(self) -> bool:
        """True when the pair was measured (there are numbers)."""
        return self.stats is not None

    def metrics_json(self) -> dict:
        """:attr:`metrics` as the JSON reports write them (empty when nothing was compared)."""
        return self.metrics.to_json() if self.metrics is not None else {}

    def to_json(self) -> dict:
        """``status``, the trio, ``metrics`` (with ``worst``) and ``message``, JSON-safe (:func:`json_clean`)."""
        out = {
            "status": list(self.status),
            "cosine": json_number(self.cosine),
            "max_abs": json_number(self.max_abs),
            "max_rel": json_number(self.max_rel),
            "metrics": json_clean({**self.metrics_json(), "worst": self.worst}),
        }
        if self.message:
            out["message"] = self.message
        return out


def json_number(v):
    """NaN and infinities have no JSON spelling: they become ``null`` (the status says why)."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    v = float(v)
    return v if math.isfinite(v) else None


#: Values :func:`json_clean` returns as they are (by exact type: ``bool`` is not ``int`` here).
_PLAIN = frozenset((str, int, bool, type(None)))


def json_clean(obj, *, strict: bool = False):
    """``obj`` (dicts, lists, numbers, numpy scalars, a report's msgspec structs) with every number
    through :func:`json_number` and every key a string: what ``json.dumps`` writes without NaN or
    Infinity. A struct is the object of its fields in order, those unset left out
    (:mod:`fpinspect.dumps.engine.report_types`).

    With ``strict``, anything that is not a dict, list, tuple, string, number or ``None`` raises
    ``TypeError``, as ``json.dumps`` would: the report writer
    (:func:`~fpinspect.cli.output.indented_json`) encodes the result with msgspec, which would
    write sets, bytes and dataclasses where ``json.dumps`` refuses them."""
    return _clean(obj, strict)


def _clean(obj, strict: bool):
    """:func:`json_clean`."""
    # A record holds a hundred values, nearly all plain: those of a dict or list are taken as
    # they are where they stand, without a call of their own (half the time of a record), and
    # the walk recurses with a positional argument
    kind = type(obj)
    if kind is dict:
        return {
            k if type(k) is str else str(k): v
            if (t := type(v)) in _PLAIN or (t is float and -math.inf < v < math.inf)
            else _clean(v, strict)
            for k, v in obj.items()
        }
    if kind is list or kind is tuple:
        return [
            v if (t := type(v)) in _PLAIN or (t is float and -math.inf < v < math.inf) else _clean(v, strict)
            for v in obj
        ]
    if kind is float:
        return obj if math.isfinite(obj) else None
    if kind in _PLAIN:
        return obj
    if isinstance(obj, dict):
        return _clean(dict(obj), strict)
    if isinstance(obj, (list, tuple)):
        return _clean(list(obj), strict)
    if isinstance(obj, (float, int, np.floating, np.integer, np.bool_)) and not isinstance(obj, bool):
        return _clean(json_number(obj), strict)
    if isinstance(obj, msgspec.Struct):
        return _clean(msgspec.to_builtins(obj, enc_hook=json_number), strict)
    if strict:  # msgspec would encode what json.dumps refuses (sets, bytes, dates): it decides
        raise TypeError(f"{type(obj).__name__} is left to json.dumps")
    return obj


def _worst_elements(stats: PairStats, ra: ChunkReader, rb: ChunkReader, shape) -> list[dict]:
    index = stats.worst_index
    if not index.size:
        return []
    va, vb = ra.take(index), rb.take(index)  # one read per side for all of them
    ulps = _worst_ulps(stats, va, vb)
    a_bits, b_bits = va.view(_unsigned(va.dtype)).tolist(), vb.view(_unsigned(vb.dtype)).tolist()
    a_hex, b_hex = _hex(va.dtype.itemsize), _hex(vb.dtype.itemsize)
    places = [unravel(i, shape) for i in index.tolist()]
    out = []
    for place, a, b, ulp, a_bit, b_bit in zip(
        places, va.astype(np.float64).tolist(), vb.astype(np.float64).tolist(), ulps, a_bits, b_bits
    ):
        ad = abs(a - b)
        out.append(
            {
                "index": place,
                "a": a,
                "b": b,
                "abs": ad,
                "rel": ad / abs(b) if b != 0 else (0.0 if ad == 0 else math.inf),
                "ulp": ulp,
                "a_bits": a_hex(a_bit),
                "b_bits": b_hex(b_bit),
            }
        )
    return out


def _worst_ulps(stats: PairStats, va: np.ndarray, vb: np.ndarray) -> list:
    """The ULPs of the worst elements ``va`` against ``vb``: :func:`ulp_diff` of each (``None`` for
    a NaN against a number) when both sides have one format, else the narrower side's
    :func:`ulp_error` against the wider one."""
    if stats.same:
        # The pass scored each finite element by its ULP distance, in float64: exact up to
        # 32-bit formats. Only a special-value mismatch (scored inf) needs ulp_diff.
        scores = stats.worst_score.tolist()
        if stats.fmt.bits <= 32 and math.inf not in scores:
            return [int(s) for s in scores]
        nan = ulp_nan(stats.fmt)
        return [None if d == nan else d for d in ulp_diff(va, vb).tolist()]
    # the narrower side is measured in ULPs of its own format against the wider one
    x, ref = (va, vb) if _fmt_or_none(va) == stats.fmt else (vb, va)
    return ulp_error(x, ref.astype(np.float64), dtype=stats.fmt).tolist()


@cache
def _hex(itemsize: int):
    """The formatter of an element's bits, ``0x`` and two digits per byte: ``0x3c00``."""
    return f"0x{{:0{2 * itemsize}x}}".format


#: The unsigned integer type of each element size (numpy parses a name such as "u2" anew each time).
_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def _unsigned(dtype: np.dtype) -> np.dtype:
    """The unsigned integer type of ``dtype``'s size (``TypeError`` where there is none: long double)."""
    return _UNSIGNED.get(dtype.itemsize) or np.dtype(f"u{dtype.itemsize}")


def _fmt_or_none(v: np.ndarray):
    return float_format(v.dtype) if is_supported(v.dtype) else None


def _numeric(dtype: np.dtype) -> bool:
    return dtype.kind in "fiub" or is_supported(dtype)


def compare_arrays(
    a, b, *, status: list[str] | None = None, jobs: int = 1, worst: int = 10, kl: bool = True
) -> PairResult:
    """Compare ``a`` (under test) with ``b`` (reference side).

    ``a`` and ``b`` are arrays, memory maps or :class:`NpyFile` readers. ``status`` carries
    codes decided earlier (e.g. ``FORMAT_CONVERTED``). Never raises for bad data: problems
    become status codes with a ``message``.
    """
    status = list(status or [])
    da, db = np.dtype(a.dtype), np.dtype(b.dtype)
    shape_a, shape_b = tuple(a.shape), tuple(b.shape)
    res = PairResult(
        status=status, shape_a=shape_a, shape_b=shape_b, dtype_a=dtype_name(da), dtype_b=dtype_name(db)
    )
    if not (_numeric(da) and _numeric(db)):
        res.status.append("COMPUTE_ERROR")
        res.message = f"cannot compare non-numeric data ({da} vs {db})"
        if any(d.kind == "V" and d.itemsize in (1, 2) for d in (da, db)):
            res.message += (
                "; raw 1- or 2-byte values are how numpy saves bfloat16 / float8 arrays, "
                "losing their type: save them as float32"
            )
        return res
    if da != db:
        status.append("DTYPE_CAST")
    size = int(a.size)
    if shape_a != shape_b:
        if size != int(b.size):
            status.append("SHAPE_MISMATCH")
            res.message = f"element counts differ: {shape_a} has {a.size}, {shape_b} has {b.size}"
            return res
        status.append("SHAPE_FLATTENED")
    if size == 0:
        status.append("EMPTY")
        return res
    shape = shape_a if shape_a == shape_b else (size,)
    a, b = as_shape(a, shape), as_shape(b, shape)
    a, b, read_shape = _storage_order(a, b, shape)
    try:
        st = accumulate(a, b, jobs=jobs, worst=worst, kl=kl)
        m = metrics_from_stats(st)
        res.worst = _worst_elements(st, ChunkReader(a), ChunkReader(b), read_shape)
        st.compact()  # computes the error statistics once and keeps them
        errors = st.error_stats()
    except (ValueError, TypeError, OverflowError, MemoryError) as exc:
        status.append("COMPUTE_ERROR")
        res.message = f"metrics could not be computed ({exc})"
        return res
    res.stats = st
    res.cosine, res.max_abs, res.max_rel = m.pop("cosine"), m.pop("max_abs"), m.pop("max_rel")
    mismatched = msgspec.UNSET
    if is_integer(da) and is_integer(db):
        # float64 cannot tell 2**62 from 2**62 + 1: integers are measured as integers
        e = integer_errors(a, b, worst=worst)
        exact = integer_metrics(e, dtype_name(np.promote_types(da, db)), read_shape)
        mismatched = exact.pop("mismatched")
        rel = replace(errors.rel, max=e.max_rel)
        errors = replace(errors, ulp=exact.pop("ulp"), abs=exact.pop("abs"), rel=rel)
        m.update(exact)
        res.max_abs, res.max_rel = e.max, e.max_rel
        res.worst = _integer_worst(e.worst_indices(), ChunkReader(a), ChunkReader(b), read_shape)
    if read_shape != shape:  # indices of the reversed shape, reversed, are the array's own
        blocks = {k: getattr(errors, k) for k in ("ulp", "abs", "rel")}
        errors = replace(
            errors,
            **{k: replace(b, argmax=b.argmax[::-1]) for k, b in blocks.items() if b.argmax is not None},
        )
        for element in res.worst:
            element["index"] = element["index"][::-1]
        st.shape = shape  # what a later reader of both arrays (the drill-down) walks
    res.metrics = PairMetrics(**m, kl=st.kl if kl else msgspec.UNSET, errors=errors, mismatched=mismatched)
    for code, n in (
        ("NAN_MISMATCH", st.nan_mismatch),
        ("INF_MISMATCH", st.inf_mismatch),
        ("BOTH_NAN", st.both_nan),
    ):
        if n:
            status.append(code)
    return res


def _storage_order(a, b, shape: tuple) -> tuple:
    """``(a, b, shape read)``: two Fortran-ordered ``.npy`` files of one shape read as what
    their bytes are, the C-order arrays of the reversed shape, element ``[i, j, k]`` at
    ``[k, j, i]``: both in one order, so every statistic is the same, from plain file reads
    instead of a gather of each chunk's elements from a memory map (index arrays of 8 bytes an
    element per axis, and the map's pages resident). Other sides are returned as they are."""
    if not (
        isinstance(a, NpyFile)
        and isinstance(b, NpyFile)
        and a.fortran_order
        and b.fortran_order
        and a.data is None
        and b.data is None
        and len(shape) > 1
        and a.header_shape == b.header_shape == shape
    ):
        return a, b, shape
    read = shape[::-1]
    return (
        NpyFile(a.path, read, a.stored_dtype, False, a.data_offset),
        NpyFile(b.path, read, b.stored_dtype, False, b.data_offset),
        read,
    )


def _integer_worst(index: list[int], ra: ChunkReader, rb: ChunkReader, shape) -> list[dict]:
    """The worst elements of an integer pair, their values and differences as exact integers."""
    if not index:
        return []
    va, vb = ra.take(index), rb.take(index)
    a_hex, b_hex = _hex(va.dtype.itemsize), _hex(vb.dtype.itemsize)
    a_bits, b_bits = va.view(_unsigned(va.dtype)).tolist(), vb.view(_unsigned(vb.dtype)).tolist()
    out = []
    for i, a, b, a_bit, b_bit in zip(index, va.tolist(), vb.tolist(), a_bits, b_bits):
        d = abs(int(a) - int(b))
        out.append(
            {
                "index": unravel(i, shape),
                "a": int(a),
                "b": int(b),
                "abs": d,
                "rel": d / abs(int(b)) if b else math.inf,
                "ulp": d,
                "a_bits": a_hex(a_bit),
                "b_bits": b_hex(b_bit),
            }
        )
    return out


def as_shape(x, shape):
    """``x`` (an array, memory map, :class:`NpyFile` or :class:`CastView`) seen with ``shape``,
    of equal size, in C order: the flattening of ``SHAPE_FLATTENED`` pairs. Every pass over
    compared sides uses it, so each pass reads the same elements in the same order."""
    if tuple(x.shape) == shape:
        return x
    if isinstance(x, (NpyFile, CastView)):
        return x.with_shape(shape)
    return np.asarray(x).reshape(shape)


def finish_status(status: list[str]) -> list[str]:
    """The status a user sees: the codes found, or ``["OK"]`` when there are none (``OK`` is
    never stored beside another code)."""
    return status or ["OK"]


def compare_npy(path_a, path_b, *, jobs: int = 1, worst: int = 10, kl: bool = True) -> PairResult:
    """Compare two ``.npy`` files (mode 2). Unreadable files become ``NPY_LOAD_ERROR``."""
    sides = []
    for p in (path_a, path_b):
        try:
            sides.append(open_npy(p))
        except InputError as exc:
            return PairResult(status=[exc.code], message=str(exc))
    res = compare_arrays(sides[0], sides[1], jobs=jobs, worst=worst, kl=kl)
    res.status = finish_status(res.status)
    return res
