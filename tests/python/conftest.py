"""pytest setup: keep the shared test module (rwtest) importable. The rocewan package
is the one the interpreter imports: python/ of the checkout with
PYTHONPATH=python (scripts/test.sh), or the package installed in a venv
(tests/python/venv_run.py); test_package.py checks which."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
