"""Where the rocewan source tree is, for the parts of the package that need
it (the testbed's configs and binaries, ``rocewan golden``'s default output
directory), and the version a results document records.

The package itself needs no checkout: ``rocewan validate`` and the Scapy
layers work from an installed wheel. A checkout is found, in order:

1. ``ROCEWAN_ROOT`` (the environment variable), which must name one;
2. the directory this package was imported from, when it is the ``python/``
   directory of a checkout (``PYTHONPATH=python``, ``./testbed`` and an
   editable install, ``pip install -e ./python``, all import it from there).

A non-editable install lives in site-packages and finds none unless
``ROCEWAN_ROOT`` is set.
"""

import os
import subprocess

ENV = "ROCEWAN_ROOT"


class CheckoutError(RuntimeError):
    """No rocewan checkout: the message says how to name one."""


def is_checkout(path):
    """True if ``path`` looks like the top of a rocewan source tree."""
    return (os.path.isfile(os.path.join(path, "meson.build"))
            and os.path.isdir(os.path.join(path, "configs"))
            and os.path.isfile(os.path.join(path, "python", "rocewan", "__init__.py")))


def _from_package():
    """The checkout this package was imported from, or None."""
    pkg = os.path.dirname(os.path.abspath(__file__))           # .../python/rocewan
    top = os.path.dirname(os.path.dirname(pkg))                # .../
    return top if is_checkout(top) else None


def find():
    """The checkout's top directory, or None; never raises (modules call it at
    import time)."""
    env = os.environ.get(ENV)
    if env:
        path = os.path.abspath(env)
        return path if is_checkout(path) else None
    return _from_package()


def root():
    """The checkout's top directory; CheckoutError (naming ROCEWAN_ROOT) when
    there is none."""
    path = find()
    if path is not None:
        return path
    env = os.environ.get(ENV)
    if env:
        raise CheckoutError(f"{ENV}={env} is not a rocewan checkout (no meson.build, configs/ and "
                            "python/rocewan/ there)")
    raise CheckoutError(f"no rocewan checkout: this rocewan is installed at "
                        f"{os.path.dirname(os.path.abspath(__file__))}; set {ENV} to the top "
                        "of a built checkout (the directory with configs/ and build/), or "
                        "install the checkout with 'pip install -e ./python'")


def version():
    """``git describe`` of the checkout the package was imported from, else
    the installed package's version ("rocewan X.Y.Z")."""
    from . import __version__
    top = _from_package()
    if top is not None:
        try:
            out = subprocess.run(["git", "-C", top, "describe", "--always", "--dirty", "--tags"],
                                 capture_output=True, text=True, timeout=5, check=True)
            if out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return "rocewan " + __version__
