"""Lazy re-exports for a package ``__init__`` (PEP 562): a name is imported from its module when first
read, so that importing one light module of a package does not import the package's heavy ones.

    >>> import types
    >>> package = types.ModuleType("example")
    >>> package.__getattr__, package.__dir__ = lazy_exports("example", {"sqrt": "math"})
    >>> package.sqrt(4.0)
    2.0
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["lazy_exports"]


def lazy_exports(package: str, table: dict[str, str]):
    """(``__getattr__``, ``__dir__``) for the package named ``package``: ``table`` maps each exported
    name to the module that defines it. An unknown name raises AttributeError, as a module does."""

    def __getattr__(name):
        if name in table:
            return getattr(import_module(table[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(table) | set(import_module(package).__dict__))

    return __getattr__, __dir__
