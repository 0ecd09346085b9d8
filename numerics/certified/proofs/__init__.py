"""Proofs over boxes (docs/model.md §7, evidence level *certified*): boxes and domains with exact
rational ends, their exact tiling check, certified margins compiled to Arb and enclosed over whole
boxes (directly, with θ-integrals over a box, or by a Taylor form along one variable), the margin
prover (:func:`prove`: bisection until margin ≥ 0 is decided on every leaf) and the box prover of
``stumpcheck certify`` (:func:`certify`: a predicate over a box of (a, b, θ)) with its certificate.
"""

from stumpcheck.numerics.lazy import lazy_exports

_LAZY = {
    "STATUSES": "stumpcheck.numerics.certified.proofs.box_certificate",
    "Certificate": "stumpcheck.numerics.certified.proofs.box_certificate",
    "generated_code_identity": "stumpcheck.numerics.certified.proofs.box_certificate",
    "certify": "stumpcheck.numerics.certified.proofs.box_prover",
    "Box": "stumpcheck.numerics.certified.proofs.boxes",
    "COORDINATES": "stumpcheck.numerics.certified.proofs.domains",
    "Domain": "stumpcheck.numerics.certified.proofs.domains",
    "exact_decimal": "stumpcheck.numerics.certified.proofs.domains",
    "to_fraction": "stumpcheck.numerics.certified.proofs.domains",
    "Leaf": "stumpcheck.numerics.certified.proofs.margin_proof",
    "Proof": "stumpcheck.numerics.certified.proofs.margin_proof",
    "prove": "stumpcheck.numerics.certified.proofs.margin_proof",
    "Margin": "stumpcheck.numerics.certified.proofs.margins",
    "PREDICATES": "stumpcheck.numerics.certified.proofs.predicates",
    "TilingFailure": "stumpcheck.numerics.certified.proofs.tiling",
    "tiling_failure": "stumpcheck.numerics.certified.proofs.tiling",
}

__all__ = list(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
