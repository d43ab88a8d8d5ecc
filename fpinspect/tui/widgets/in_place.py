"""Show new text in a :class:`~textual.widgets.Static` without laying the screen out again
when its size stays the same.

Why: ``Static.update`` lays out the whole screen by default — every widget's box model, the
op list and the detail pane arranged anew, ~5 ms at 100x30 — and a laid-out card of another
height sets off a second layout on the next frame. Each key press in the op list updates the
detail's five parts: two layouts took half of a key's time on the screen's thread (24 ms of
CPU a press, 13 ms without them); the banner's spinner laid out ten times a second.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def update_in_place(widget: Static, content: Content) -> None:
    """``widget.update(content)``; laid out again only when the height ``content`` takes at
    the widget's current content width differs from the height it has now, or when its width
    follows its content (``width: auto``). The same text and styles again: nothing to do."""
    old = widget.content
    if isinstance(old, Content) and old.is_same(content):
        return
    size = widget.content_size
    width_rule = widget.styles.width
    follows = width_rule is not None and width_rule.is_auto
    same = not follows and size.width > 0 and content.get_height(widget.styles, size.width) == size.height
    widget.update(content, layout=not same)
    if same:
        # update() forgot the measured height; it is known: a container of auto height (the
        # detail's cards) then lays out without measuring the text again. Textual is pinned.
        widget._content_height_cache = (size.width, size.height)
