"""Driving the inspector in tests: build the app as `fpinspect open` does, press real keys,
and wait until every worker is done."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from fpinspect.dumps.runs.sources import resolve
from fpinspect.tui.app import AppSettings, InspectorApp, make_app

SIZE = (100, 30)


def app_for(root: Path | str, *args, **settings) -> InspectorApp:
    """The app as ``fpinspect open ROOT [ARGS...]`` builds it."""
    return make_app(AppSettings(resolve(str(root), *args), **settings))


def _running(app) -> list:
    # a DirectoryTree's loader waits for work for as long as the tree lives
    return [w for w in app.workers if w.is_running and w.group != "_loader"]


async def until(pilot, ready, timeout: float = 120.0, what: str = "the condition") -> None:
    """Wait (in real time: workers and child processes run meanwhile) until ``ready()``, a state
    the user sees; fail, naming ``what``, after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
    await pilot.pause()


async def settle(pilot) -> None:
    """Wait until no worker runs and every message they posted is handled."""
    app = pilot.app
    while True:
        await pilot.pause()
        running = _running(app)
        if not running:
            await pilot.pause()
            if not _running(app):
                return
            continue
        await app.workers.wait_for_complete(running)


def drive(app: InspectorApp, scenario: Callable[..., Awaitable[None]], size=SIZE) -> None:
    """Run ``scenario(pilot)`` against ``app`` headless."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())
