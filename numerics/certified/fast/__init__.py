"""A fast rigorous layer: float64 interval enclosures of the one-head e, ∇e and of the θ-integrals L, ∇L.

Compiled (numba) interval arithmetic on float64 pairs, rounded outward after every operation without
changing the rounding mode; it encloses the same quantities as the Arb layer
(:mod:`stumpcheck.numerics.certified.enclosures`) at a fraction of its cost, under the assumptions in
:data:`ASSUMPTIONS` (round-to-nearest, no fused operations, libm's exp/expm1/log/log1p within 2 ulp),
which every certificate built on it copies. By concept:

* :mod:`~stumpcheck.numerics.certified.fast.rounding`: the widening of a round-to-nearest result, the
  libm bound, the rounding-mode check, :data:`ASSUMPTIONS`;
* :mod:`~stumpcheck.numerics.certified.fast.interval`: interval operations on (lo, hi) pairs;
* :mod:`~stumpcheck.numerics.certified.fast.cumulants`: κ₁, κ₂ at a rate and over a range of rates;
* :mod:`~stumpcheck.numerics.certified.fast.one_head`: e, ∂e/∂a, ∂e/∂b over a box of (a, b, θ);
* :mod:`~stumpcheck.numerics.certified.fast.complex_interval`: rectangular complex intervals;
* :mod:`~stumpcheck.numerics.certified.fast.complex_one_head`: bounds of the θ-integrands over complex θ;
* :mod:`~stumpcheck.numerics.certified.fast.gauss_legendre`: the Gauss–Legendre rule on a piece with a
  Bernstein-ellipse remainder (enclosed nodes and weights);
* :mod:`~stumpcheck.numerics.certified.fast.theta_integrals`: L and ∇L over θ ∈ [0, 1] at a point or
  over an (a, b) box (Gauss–Legendre on the breakpoint pieces, first-order fallback);
* :mod:`~stumpcheck.numerics.certified.fast.complex_parameters`: e, ∇e over complex (a, b, θ) rectangles, and
  ∇L over complex (a, b) rectangles (the tube's Bernstein-ellipse cells);
* :mod:`~stumpcheck.numerics.certified.fast.hessian`: ∇²L at a point or small box (the generated one-head jet
  translated, Gauss–Legendre with a Cauchy-estimate remainder; the tube's logarithmic norm);
* :mod:`~stumpcheck.numerics.certified.fast.corpus_algebra`: one task of a corpus, θ̂ − θ and ∇θ̂ over a box;
* :mod:`~stumpcheck.numerics.certified.fast.corpus`: the corpus L̂ and ∇L̂ at a point or over an (a, b) box.

sin and cos (complex exponentials of the remainder bound) are assumed within 2⁻⁴⁵ absolute
(:data:`~stumpcheck.numerics.certified.fast.complex_interval.TRIG_ASSUMPTION`, also in :data:`ASSUMPTIONS`).

The compiled code is cached on disk under a hash of all the kernel sources
(:mod:`stumpcheck.numerics.kernel_cache`): an edit of any module here, or of one it imports, recompiles
every kernel that could depend on it.
"""

from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS
from stumpcheck.numerics.certified.fast.one_head import error_gradient_enclosure, jet_box, jet_boxes
from stumpcheck.numerics.certified.fast.theta_integrals import (loss_gradient_enclosure,
                                                                loss_gradient_enclosure_counted)
from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure, task_enclosures

__all__ = ["ASSUMPTIONS", "corpus_enclosure", "error_gradient_enclosure", "jet_box", "jet_boxes",
           "loss_gradient_enclosure", "loss_gradient_enclosure_counted", "task_enclosures"]
