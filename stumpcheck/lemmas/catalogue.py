"""The catalogue: the lemma registry filled with the paper's claims C1–C9 and the built-in lemmas.

:mod:`stumpcheck.lemmas` is the registry's machinery (the :func:`~stumpcheck.lemmas.lemma` decorator,
:func:`~stumpcheck.lemmas.register`) and imports none of its contents; importing this module imports
:mod:`stumpcheck.lemmas.builtin`, which registers them. ``verify`` and the tests look entries up here.
"""

from __future__ import annotations

from stumpcheck.lemmas import builtin as builtin_lemmas  # noqa: F401  (registers C1–C9 and the built-in lemmas on import)
from stumpcheck import lemmas
from stumpcheck.lemmas import ClaimCheck, Lemma
from stumpcheck.numerics.precision import InputError

__all__ = ["registry", "get", "load_lemma"]


def registry() -> dict[str, "Lemma | ClaimCheck"]:
    """All registered entries by name: C1–C9, the built-in lemmas, then any registered by imported modules."""
    return lemmas.registered()


def get(name: str) -> "Lemma | ClaimCheck":
    """The registered entry called ``name``; InputError if there is none."""
    entries = registry()
    if name not in entries:
        raise InputError(f"no lemma or claim named {name!r}; known: {', '.join(entries)}")
    return entries[name]


def load_lemma(spec: str) -> Lemma:
    """:func:`stumpcheck.lemmas.load_lemma` after the built-in entries are registered, so that a user file
    that imports them registers nothing new."""
    return lemmas.load_lemma(spec)
