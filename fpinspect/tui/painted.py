"""Call back once what a handler changed on a screen is on the terminal.

Why not ``call_after_refresh`` alone: a widget tells its screen what to repaint by a message,
posted when the widget's own queue runs empty, so the screen's next refresh may still be of
what came before (measured: it came after the op list's cursor line, while the detail's parts
waited for the following one). Here each widget of the screen first handles what was queued
for it and posts its repaint requests; the screen handles those, then refreshes, then calls back.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen


def when_painted(screen: Screen, callback: Callable[[], object], rounds: int = 2) -> None:
    """Run ``callback`` on ``screen`` once every widget of it has handled the messages queued
    for it now and the screen has painted what they asked for; ``rounds`` times over, since a
    widget that a repaint resized asks for one more layout, on the frame after."""
    left = 0

    def painted() -> None:
        if rounds > 1:
            when_painted(screen, callback, rounds - 1)
        else:
            callback()

    def told() -> None:
        nonlocal left
        left -= 1
        if left == 0:
            screen.call_after_refresh(painted)

    def hop() -> None:
        # posted by a widget just before its queue ran empty, so just before its repaint
        # requests: posted again, this lands behind them
        screen.call_later(told)

    for widget in [screen, *screen.walk_children()]:
        if widget.call_later(screen.call_later, hop):
            left += 1
    if left == 0:
        screen.call_after_refresh(painted)
