"""Screens of the inspector: the op list, a pair's drill-down (also the quick diff), the
file picker, export and help."""
