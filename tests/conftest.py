"""Shared test set-up: the helper modules in this folder are importable from every test."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
