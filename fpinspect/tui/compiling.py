"""Why a first comparison takes seconds: the first time after an install numba compiles the
statistics kernels. The inspector says so in a notification instead of sitting silent."""

from __future__ import annotations

from contextlib import suppress

from textual.app import App


def tell_when_compiling(app: App) -> None:
    """From a worker thread about to compare: when the kernels are not in numba's disk cache yet,
    a notification of ``app`` says that they compile once."""
    from ..numerics import warmup

    if warmup.needs_compile():
        sentence = (
            f"Compiling the numerics kernels once (about {warmup.COMPILE_SECONDS} s; cached afterwards)."
        )
        with suppress(Exception):  # the app closed meanwhile: nobody to tell
            app.call_from_thread(app.notify, sentence, timeout=8)
