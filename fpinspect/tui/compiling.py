"""Why a first comparison takes seconds: the first time on a machine numba compiles the statistics
kernels (:func:`fpinspect.numerics.compile_ahead.on_compile`). The inspector says so in a
notification instead of sitting silent."""

from __future__ import annotations

from contextlib import suppress

from textual.app import App


def tell_when_compiling(app: App) -> None:
    """From a worker thread about to compare: a compile of the kernels shows as a notification
    of ``app`` (the latest app to ask is the one told)."""
    from ..numerics import compile_ahead

    def tell(sentence: str) -> None:
        with suppress(Exception):  # the app closed meanwhile: nobody to tell
            app.call_from_thread(app.notify, f"{sentence[0].upper()}{sentence[1:]}.", timeout=8)

    compile_ahead.on_compile(tell)
