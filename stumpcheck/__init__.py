"""stumpcheck: verified numerics and claim checks for arXiv:2610.07074.

The library lives in :mod:`stumpcheck.theory` (SymPy derivations) and :mod:`stumpcheck.numerics`
(evaluation, corpora, training, claim checks); this package holds the command
line (:mod:`stumpcheck.cli.commands`), the lemma registry and its property-based checker
(:mod:`stumpcheck.lemmas`, :mod:`stumpcheck.lemmas.builtin`), the public
Hypothesis strategies (:mod:`stumpcheck.strategies`) and the verify report
(:mod:`stumpcheck.report`).
"""

__version__ = "0.1.0"
