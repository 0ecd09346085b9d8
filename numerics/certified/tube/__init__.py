"""The certified tube around the population flow (docs/certified_flow.md): boxes that provably
contain (a(t), b(t)) for t ∈ [0, T]. A float64 approximate solution in Chebyshev pieces
(:mod:`~stumpcheck.numerics.certified.tube.float_solution`, not part of any proof) is bounded
rigorously on each interval (its defect on a Bernstein ellipse, the logarithmic norm, a Gronwall
step, with θ-integrals in the fast float64 layer and Arb fallbacks,
:mod:`~stumpcheck.numerics.certified.tube.arithmetic`); :func:`certified_tube` builds the tube, :mod:`~stumpcheck.numerics.certified.tube.certificate`
writes and re-checks its certificate (format ``stumpcheck-flow-certificate/3``, /2 still read; /1 is re-checked by
:mod:`~stumpcheck.numerics.certified.tube.certificate_v1`), the ``reading*`` modules read C2–C4
from its exact rows, and :func:`certified_flow` returns its enclosures of a(t), b(t).
"""

from stumpcheck.numerics.lazy import lazy_exports

_LAZY = {
    "Tube": "stumpcheck.numerics.certified.tube.build",
    "TubeInterval": "stumpcheck.numerics.certified.tube.build",
    "certified_tube": "stumpcheck.numerics.certified.tube.build",
    "check_tube_arguments": "stumpcheck.numerics.certified.tube.build",
    "CertifiedFlow": "stumpcheck.numerics.certified.tube.flow_enclosures",
    "certified_flow": "stumpcheck.numerics.certified.tube.flow_enclosures",
    "flow_certificate": "stumpcheck.numerics.certified.tube.certificate",
    "is_flow_certificate": "stumpcheck.numerics.certified.tube.certificate",
    "recheck_flow_certificate": "stumpcheck.numerics.certified.tube.certificate",
    "write_flow_certificate": "stumpcheck.numerics.certified.tube.certificate",
    "box_at": "stumpcheck.numerics.certified.tube.intervals",
    "proved_until": "stumpcheck.numerics.certified.tube.intervals",
    "tube_rationals": "stumpcheck.numerics.certified.tube.intervals",
    "tube_summary": "stumpcheck.numerics.certified.tube.report",
    "write_tube_outputs": "stumpcheck.numerics.certified.tube.report",
}

__all__ = list(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
