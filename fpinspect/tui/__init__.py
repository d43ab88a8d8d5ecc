"""The terminal inspector behind ``fpinspect open`` (Textual).

Importing this package does not import Textual: ``fpinspect.cli.open`` holds the
click command, and the app itself (:mod:`fpinspect.tui.app`) is imported when it runs.
"""
