"""stumpcheck: verified numerics and claim checks for arXiv:2610.07074.

The library lives in :mod:`theory` (SymPy derivations) and :mod:`numerics`
(evaluation); this package holds the command line (:mod:`stumpcheck.cli`).
"""

__version__ = "0.1.0"
