"""Assembling an inspection: how a comparison is made and judged, declared once for every command
and the inspector (:mod:`.settings`). Above :mod:`fpinspect.replay` and :mod:`fpinspect.store`,
below :mod:`fpinspect.reports` and the front ends."""

from .settings import CompareSettings, SettingsError

__all__ = ["CompareSettings", "SettingsError"]
