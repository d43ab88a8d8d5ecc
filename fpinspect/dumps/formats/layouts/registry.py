"""The layout registry: which (storage layout, original layout) pairs convert, and how.

A conversion is a function registered with ``@converter(SRC, DST)``; its inverse (original
layout -> storage layout, used to write Ascend-format dumps and to test round trips) with
``@packer(STORAGE, ORIGIN)``. The package imports every module in this folder, so adding a
layout is adding one module with its decorated functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: storage array, origin shape (the result's shape, in the destination layout) -> array
Converter = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
#: original array, C0 (the channel / column block of the storage layout) -> storage array
Packer = Callable[[np.ndarray, int], np.ndarray]

#: Layouts that are plain row-major arrays (no blocking, no padding). ``ND`` means "as the
#: shape says", so converting between ``ND`` and any of these changes nothing.
PLAIN_LAYOUTS = frozenset(
    {
        "ND",
        "NC",
        "CN",
        "NCL",
        "NCHW",
        "NHWC",
        "HWCN",
        "CHWN",
        "NCDHW",
        "NDHWC",
        "DHWCN",
        "DHWNC",
    }
)


class LayoutError(Exception):
    """A layout conversion failed. ``code`` is the compare status the caller reports."""

    code = "FORMAT_CONVERSION_ERROR"

    def __init__(self, problem: str, src: str | None = None, dst: str | None = None):
        self.problem, self.src, self.dst = problem, src, dst
        super().__init__(f"cannot convert {src} to {dst}: {problem}" if src and dst else problem)


class FormatUnsupported(LayoutError):
    """No conversion is registered for this (source, destination) pair of layouts."""

    code = "FORMAT_UNSUPPORTED"


class FormatConversionError(LayoutError):
    """The pair is supported but this array cannot be converted: wrong rank, block sizes
    that do not match the origin shape, an origin shape larger than the storage ..."""

    code = "FORMAT_CONVERSION_ERROR"


def split_layout(layout: str) -> tuple[str, int | None]:
    """``"FRACTAL_Z:16"`` -> ``("FRACTAL_Z", 16)``; ``"NCHW"`` -> ``("NCHW", None)``.

    GE appends ``:<sub-format>`` (the group count of grouped convolution weights) to the
    layout name. Raises ``ValueError`` if the sub-format is not an integer.
    """
    name, sep, sub = layout.partition(":")
    if not sep:
        return layout, None
    try:
        return name, int(sub)
    except ValueError:
        raise ValueError(f"layout {layout!r} has a sub-format that is not an integer") from None


_CONVERTERS: dict[tuple[str, str], tuple[str, str, Converter]] = {}
_PACKERS: dict[tuple[str, str], tuple[str, str, Packer]] = {}


def _key(layout: str | None) -> str:
    """Registry key of a layout: upper case, no sub-format; missing or empty is ``ND``."""
    return layout.partition(":")[0].strip().upper() if layout else "ND"


def _grouped(layout: str | None) -> bool:
    """True if ``layout`` carries a sub-format other than 0 or 1 (a group count)."""
    sub = layout.partition(":")[2].strip() if layout else ""
    return sub not in ("", "0", "1")


def _register(table: dict, src: str, dst: str, fn: Callable) -> Callable:
    key = (_key(src), _key(dst))
    if key in table:
        raise ValueError(f"a conversion {src} -> {dst} is already registered")
    table[key] = (src, dst, fn)
    return fn


def converter(src: str, dst: str) -> Callable[[Converter], Converter]:
    """Register ``fn(storage_array, origin_shape) -> array`` converting ``src`` to ``dst``.

    The function raises :class:`FormatConversionError` (the problem only; the registry adds
    the layouts) when the array or origin shape does not fit.
    """
    return lambda fn: _register(_CONVERTERS, src, dst, fn)


def packer(storage: str, origin: str) -> Callable[[Packer], Packer]:
    """Register ``fn(array, c0) -> storage_array`` converting ``origin`` to ``storage``."""
    return lambda fn: _register(_PACKERS, storage, origin, fn)


def conversions() -> list[tuple[str, str]]:
    """The registered ``(src, dst)`` conversions, as spelled at registration, sorted."""
    return sorted((src, dst) for src, dst, _ in _CONVERTERS.values())


def needs_conversion(src: str | None, dst: str | None) -> bool:
    """True unless data in layout ``src`` already is data in layout ``dst``.

    Layouts are compared by name, case-insensitively and ignoring the sub-format; a missing
    layout counts as ``ND``. Equal names need nothing; ``ND`` and any plain layout
    (:data:`PLAIN_LAYOUTS`) need nothing either way, since ``ND`` means "as the shape says".
    """
    s, d = _key(src), _key(dst)
    return s != d and not (s in PLAIN_LAYOUTS and d in PLAIN_LAYOUTS and "ND" in (s, d))


def _origin(origin_shape: Sequence[int], src: str | None, dst: str | None) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in origin_shape)
    except (TypeError, ValueError):
        raise FormatConversionError(
            f"origin shape {origin_shape!r} is not a list of integers", src, dst
        ) from None
    if any(d < 0 for d in dims):
        raise FormatConversionError(f"origin shape {dims} has unknown (negative) dimensions", src, dst)
    return dims


def convert_layout(
    array: np.ndarray, src_layout: str | None, dst_layout: str | None, origin_shape: Sequence[int]
) -> np.ndarray:
    """``array`` (stored in ``src_layout``) in ``dst_layout``, padding cropped.

    ``origin_shape`` is the shape of the result, in ``dst_layout`` order (the tensor's
    ``origin_shape`` when ``dst_layout`` is its ``origin_format``); block sizes (C0, the
    16-row blocks, ...) are read from ``array.shape``. When :func:`needs_conversion` is false
    ``array`` is returned unchanged. The result may be a non-contiguous view of a copy.

    Raises :class:`FormatUnsupported` for a pair with no registered conversion or a grouped
    layout (sub-format > 1), :class:`FormatConversionError` when ``array`` or
    ``origin_shape`` does not fit the pair.
    """
    if not needs_conversion(src_layout, dst_layout):
        return array
    shape = tuple(getattr(array, "shape", ()))
    if _grouped(src_layout) or _grouped(dst_layout):
        raise FormatUnsupported(
            f"grouped layouts (a sub-format above 1) are not supported (dumped shape {shape})",
            src_layout,
            dst_layout,
        )
    entry = _CONVERTERS.get((_key(src_layout), _key(dst_layout)))
    if entry is None:
        targets = sorted(dst for src, dst, _ in _CONVERTERS.values() if _key(src) == _key(src_layout))
        known = (
            f"{src_layout} converts to {', '.join(targets)}"
            if targets
            else f"{src_layout} is not a known layout"
        )
        raise FormatUnsupported(f"no conversion is registered ({known})", src_layout, dst_layout)
    origin = _origin(origin_shape, src_layout, dst_layout)
    try:
        return entry[2](array, origin)
    except FormatConversionError as exc:
        raise FormatConversionError(
            f"{exc.problem} (dumped shape {shape}, origin shape {origin})", src_layout, dst_layout
        ) from None


def pack_layout(array: np.ndarray, src_layout: str, storage_layout: str, c0: int = 16) -> np.ndarray:
    """``array`` (in plain layout ``src_layout``) stored as ``storage_layout``, zero padded.

    ``c0`` is the channel / column block (16 for fp16/bf16/fp32 on common platforms, 32 for
    int8 and fp8); row blocks of FRACTAL_NZ and the N blocks of FRACTAL_Z are 16. The
    inverse of :func:`convert_layout`. Raises like it.
    """
    entry = _PACKERS.get((_key(storage_layout), _key(src_layout)))
    if entry is None:
        raise FormatUnsupported("no packer is registered", src_layout, storage_layout)
    if c0 < 1:
        raise FormatConversionError(f"C0 must be positive, not {c0}", src_layout, storage_layout)
    try:
        return entry[2](array, c0)
    except FormatConversionError as exc:
        raise FormatConversionError(
            f"{exc.problem} (shape {tuple(array.shape)})", src_layout, storage_layout
        ) from None
