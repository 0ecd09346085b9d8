"""Rigorous enclosures (docs/model.md §7, evidence level *certified*): Arb balls (python-flint) for
e, ∇e and ∇²e at a point, for L, ∇L and ∇²L as rigorous θ-integrals of the generated Arb
integrands, and the box prover that proves a margin ≥ 0 over boxes of (a, b, θ) by interval
evaluation and bisection, with the certificates it writes.
"""

from numerics.certified.balls import (Enclosure, EnclosureTooWide, format_ball, require_relative_width, to_arb,
    working_bits, ESTIMATORS, arb_to_mpf, mpf_to_arb)
from numerics.certified.pointwise import (error_ball, certified_error)
from numerics.certified.theta_integrals import (certified_loss, certified_loss_gradient, certified_loss_hessian)
from numerics.certified.arb_quadrature import (ArbMoments, loss_gradient_hessian_arb)
from numerics.certified.boxes import (Box)
from numerics.certified.predicates import (PREDICATES)
from numerics.certified.certificate import (Certificate, STATUSES)
from numerics.certified.prover import (certify)

__all__ = [
    "Enclosure", "EnclosureTooWide", "format_ball", "require_relative_width", "error_ball", "certified_error",
    "certified_loss", "certified_loss_gradient", "certified_loss_hessian", "to_arb", "working_bits",
    "ESTIMATORS", "arb_to_mpf", "mpf_to_arb", "ArbMoments", "loss_gradient_hessian_arb", "Box", "Certificate",
    "certify", "PREDICATES", "STATUSES",
]
