"""The terminal inspector behind ``fpinspect open`` (Textual).

Importing this package does not import Textual: :mod:`.commands` holds the click commands,
and the app itself (:mod:`fpinspect.tui.app`) is imported when it runs.
"""
