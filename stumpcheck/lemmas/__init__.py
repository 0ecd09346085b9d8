"""Lemmas (docs/lemmas.md): named statements "margin ≥ 0 on a domain", how they are defined and
registered (:mod:`~stumpcheck.lemmas.definitions`, whose :func:`lemma` decorator a user's lemma file
imports as ``from stumpcheck.lemmas import lemma``), the built-in ones and the catalogue that holds
them with the claims C1–C9, and how they are checked: sampled by Hypothesis, at high precision, or
certified over the whole domain (:mod:`~stumpcheck.lemmas.check`, :mod:`~stumpcheck.lemmas.certified_check`),
a user's file in a child process with a time limit; and how a lemma becomes a pytest test
(:meth:`Lemma.as_test`, :mod:`~stumpcheck.lemmas.testing`).

The definitions are imported here; :func:`check_lemma`, :func:`get`, :func:`registry` and
:func:`lemma_test` lazily (they pull in the engines and the built-ins).
"""

from stumpcheck.lemmas.definitions import (EVIDENCE_LEVELS, CertifiedSpec, ClaimCheck, Lemma, SymbolicSpec,
                                           certified, lemma, register, registered, symbolic,
                                           sympy_lemma)
from stumpcheck.lemmas.files import load_lemma
from stumpcheck.numerics.lazy import lazy_exports

_LAZY = {"check_lemma": "stumpcheck.lemmas.check", "run_entry": "stumpcheck.lemmas.check",
         "get": "stumpcheck.lemmas.catalogue", "registry": "stumpcheck.lemmas.catalogue",
         "lemma_test": "stumpcheck.lemmas.testing", "LemmaFailure": "stumpcheck.lemmas.testing"}

__all__ = ["EVIDENCE_LEVELS", "Lemma", "ClaimCheck", "CertifiedSpec", "SymbolicSpec", "certified", "symbolic",
           "lemma", "sympy_lemma", "register", "registered", "load_lemma", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
