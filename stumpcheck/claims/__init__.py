"""The paper's claims C1–C9 as checks (docs/model.md §7), each returning a :class:`ClaimResult`.

* :mod:`stumpcheck.claims.result`: :class:`ClaimResult` (figure, tolerance, verdict, evidence, details);
* :mod:`stumpcheck.claims.population`: C1 (closed forms against direct quadrature), C2–C4 (the flow);
* :mod:`stumpcheck.claims.c5`: C5, finite-corpus gradient error along the progress direction;
* :mod:`stumpcheck.claims.c6`: C6, the frozen estimator's rate from a large-resolution start;
* :mod:`stumpcheck.claims.boundary`: C7 (the one-head boundary limitation), C8 (symmetrizations);
* :mod:`stumpcheck.claims.boundary_tables`: the sup-over-θ tables C7 and C8 read (population, fresh contexts);
* :mod:`stumpcheck.claims.c9`: C9, constant-step GD below the computed step bound.

The engines in :mod:`stumpcheck.numerics` never import this package. The check functions are re-exported lazily
(each pulls in the engines it needs only when called for).
"""

from stumpcheck.numerics.lazy import lazy_exports

_LAZY = {
    "ClaimResult": "stumpcheck.claims.result",
    "check_c1": "stumpcheck.claims.population", "check_c2": "stumpcheck.claims.population",
    "check_c3": "stumpcheck.claims.population", "check_c4": "stumpcheck.claims.population",
    "check_population_claims": "stumpcheck.claims.population",
    "check_c5": "stumpcheck.claims.c5", "check_c6": "stumpcheck.claims.c6",
    "check_c7": "stumpcheck.claims.boundary", "check_c8": "stumpcheck.claims.boundary",
    "check_c9": "stumpcheck.claims.c9",
}

__all__ = list(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
