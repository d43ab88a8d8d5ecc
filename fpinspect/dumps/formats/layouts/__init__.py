"""Storage layout -> original layout conversions, one module per storage layout.

Every module of this package is imported here, and registers its conversions with
``@converter(SRC, DST)`` (and their inverses with ``@packer``): adding a layout is adding
a module. Formulas: ``ascend_formats.md`` §3.2.
"""

import importlib
import pkgutil

from .registry import (
    PLAIN_LAYOUTS,
    FormatConversionError,
    FormatUnsupported,
    LayoutError,
    conversions,
    convert_layout,
    converter,
    needs_conversion,
    pack_layout,
    packer,
    split_layout,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "PLAIN_LAYOUTS",
    "FormatConversionError",
    "FormatUnsupported",
    "LayoutError",
    "conversions",
    "convert_layout",
    "converter",
    "needs_conversion",
    "pack_layout",
    "packer",
    "split_layout",
]
