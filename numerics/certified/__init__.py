"""Certified work (docs/model.md §7, evidence level *certified*), one subpackage per concept:

* :mod:`~stumpcheck.numerics.certified.enclosures`: Arb balls (python-flint) for e, ∇e and ∇²e at a
  point and for L, ∇L and ∇²L as rigorous θ-integrals of the generated Arb integrands;
* :mod:`~stumpcheck.numerics.certified.proofs`: boxes and domains with exact ends, certified margins
  enclosed over whole boxes, and the provers that bisect until every leaf is decided;
* :mod:`~stumpcheck.numerics.certified.certificates`: lemma and box certificates, the statements they
  prove, the limits checked before any work, and the re-checks;
* :mod:`~stumpcheck.numerics.certified.tube`: the certified tube around the population flow on [0, T];
* :mod:`~stumpcheck.numerics.certified.region`: the forward-invariant region beyond the tube.

They depend in that order (a later one may import an earlier one, never the reverse; an import-linter
contract in pyproject.toml holds them to it). The names below are the ones most work starts from.
"""

from stumpcheck.numerics.certified.enclosures.balls import (ESTIMATORS, Enclosure, EnclosureTooWide, arb_to_mpf,
                                                            format_ball, mpf_to_arb, require_relative_width,
                                                            to_arb, working_bits)
from stumpcheck.numerics.certified.enclosures.pointwise import certified_error, error_ball
from stumpcheck.numerics.certified.enclosures.theta_integrals import (certified_loss, certified_loss_gradient,
                                                                      certified_loss_hessian)
from stumpcheck.numerics.certified.enclosures.arb_quadrature import ArbMoments, loss_gradient_hessian_arb
from stumpcheck.numerics.certified.proofs.boxes import Box
from stumpcheck.numerics.certified.proofs.predicates import PREDICATES
from stumpcheck.numerics.certified.proofs.box_certificate import STATUSES, Certificate
from stumpcheck.numerics.certified.proofs.box_prover import certify

__all__ = [
    "Enclosure", "EnclosureTooWide", "format_ball", "require_relative_width", "error_ball", "certified_error",
    "certified_loss", "certified_loss_gradient", "certified_loss_hessian", "to_arb", "working_bits",
    "ESTIMATORS", "arb_to_mpf", "mpf_to_arb", "ArbMoments", "loss_gradient_hessian_arb", "Box", "Certificate",
    "certify", "PREDICATES", "STATUSES",
]
