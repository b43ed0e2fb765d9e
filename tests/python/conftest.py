"""pytest setup: make the rocewan package importable from python/ even when
PYTHONPATH is not set, and keep test helpers importable."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, os.pardir, os.pardir, "python")
for path in (os.path.abspath(PYDIR), HERE):
    if path not in sys.path:
        sys.path.insert(0, path)
