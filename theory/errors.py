"""The error raised for invalid user input, shared by every layer of the package.

It is defined here, in the lowest layer, so that :mod:`stumpcheck.theory` can raise it too;
:mod:`stumpcheck.numerics.precision` and :mod:`stumpcheck.api` re-export it.
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Invalid user input (parameters, precision, files); the CLI turns it into exit status 2."""
