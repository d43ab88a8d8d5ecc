"""Widgets of the inspector, one job each."""
