"""Symbolic core: the model, its population loss and large-scale asymptotics, derived by SymPy.

The names below are imported from their modules when first read (PEP 562), so that importing one
light module of the package (:mod:`stumpcheck.theory.errors`) does not import SymPy.
"""

from importlib import import_module

_LAZY = {
    "ESTIMATORS": "stumpcheck.theory.model", "closed_form_error": "stumpcheck.theory.model",
    "closed_form_estimate": "stumpcheck.theory.model", "stable_error": "stumpcheck.theory.model",
    "stable_estimate": "stumpcheck.theory.model",
    "flow_asymptotics": "stumpcheck.theory.asymptotics", "loss_layer_integral": "stumpcheck.theory.asymptotics",
    "right_layer_error": "stumpcheck.theory.asymptotics",
    "results": "stumpcheck.theory.catalogue", "summary": "stumpcheck.theory.catalogue",
    "to_numpy": "stumpcheck.theory.evaluate", "to_mpmath": "stumpcheck.theory.evaluate",
    "to_arb": "stumpcheck.theory.evaluate", "to_latex": "stumpcheck.theory.evaluate",
    "to_jax": "stumpcheck.theory.evaluate", "split_latex": "stumpcheck.theory.evaluate",
}

__all__ = list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if not name.startswith("__"):  # a submodule read as an attribute, as after the eager imports this package made
        try:
            return import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(_LAZY) | set(globals()))
