"""The tasks of the test plan; each module defines one ``TASK`` (see :mod:`..task`)."""
