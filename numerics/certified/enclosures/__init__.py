"""Certified enclosures of e(θ), L and ∇L: rigorous ball arithmetic (python-flint / Arb).

Evidence level **certified** (docs/model.md §7): each value comes back as an
:class:`Enclosure`, a ball [mid ± rad] that provably contains the exact value
for the given inputs (decimal inputs are converted to balls that contain them).
A ball wider than requested is a failure, not a value: with ``rel_width`` the
functions raise :class:`EnclosureTooWide` instead of returning it.

Pointwise values come from :mod:`stumpcheck.numerics.generated.population_arb`, which
``stumpcheck export`` prints from the SymPy derivation (theory/codegen.py, the
Arb target): the truncated-exponential functions Λ and κ_k are summed from
their moment power series with a rigorous tail bound near β = 0 and from their
large-rate forms beyond, and the softmax weights are printed without the
logarithms of θ and 1 − θ, so e(θ) is finite at θ = 0 and θ = 1.

L = ∫₀¹ ½ e² dθ and ∇L = ∫₀¹ e ∇e dθ are integrated with Arb's rigorous
integrator ``acb.integral`` on the model's breakpoint pieces
(:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64`, or the mpmath
:func:`~stumpcheck.numerics.population.quadrature.breakpoints` if that fails), taken as exact binary
endpoints: any exact tiling of [0, 1] gives a rigorous result, the breakpoints
only save the integrator work. Its contract (see
``help(flint.acb.integral)``): called with ``analytic=True``, the integrand
must return a non-finite ball wherever it is not analytic on the input ball.

    >>> from flint import acb, arb
    >>> wrong = acb.integral(lambda x, _: x.sqrt(), 1, 4)          # WRONG: ignores the flag
    >>> right = acb.integral(lambda x, analytic: x.sqrt(analytic=analytic), 1, 4)
    >>> right.real.overlaps(arb(14) / 3), wrong.real.overlaps(arb(14) / 3)
    (True, False)

The generated functions forward the flag to every logarithm they evaluate
(Λ = log M₀ is the only one left once the softmax weights are rewritten), so
the integrand is analytic wherever it claims to be. Because the logarithms of
θ and 1 − θ are gone, the pieces that touch θ = 0 and θ = 1 have no endpoint
singularity and converge like the others (no crude endpoint bound is needed).

Precision: ``dps`` decimal digits (validated by
:func:`stumpcheck.numerics.precision.validate_dps`) are worked at
``⌈dps·log₂10⌉ + guard bits + log₂(2 + |a| + b)`` bits inside ``flint.ctx.workprec``,
which restores the previous precision on exit, also on error. If a requested
relative width is missed, the evaluation is repeated at a precision raised by
the number of bits that were lost (Ziv's strategy), a few times at most.

    >>> from stumpcheck.numerics.certified.enclosures import certified_error
    >>> enc = certified_error(25, 20, "0.95", dps=30, rel_width=1e-25)
    >>> enc.evidence, enc.relative_radius < 1e-25
    ('certified', True)
    >>> print(enc)  # doctest: +ELLIPSIS
    [0.017304114159858533636045942954... +/- ...e-32]

The code is split by concept: the balls and their helpers in :mod:`stumpcheck.numerics.certified.enclosures.balls`,
the pointwise enclosures in :mod:`stumpcheck.numerics.certified.enclosures.pointwise`, the θ-integrals in
:mod:`stumpcheck.numerics.certified.enclosures.theta_integrals`, the exact fresh-context risk (bias and MSE of
θ̂_N − θ on N fresh points, docs/fresh_risk.md) in :mod:`stumpcheck.numerics.certified.enclosures.fresh_risk`;
this module re-exports their public names.
"""

from stumpcheck.numerics.certified.enclosures.balls import (ESTIMATORS, Enclosure, EnclosureTooWide, arb_to_mpf, format_ball, mpf_to_arb,
                                      outward_bounds, require_relative_width, to_arb, working_bits)
from stumpcheck.numerics.certified.enclosures.pointwise import certified_error, error_ball
from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss, certified_loss_gradient, certified_loss_hessian
from stumpcheck.numerics.certified.enclosures.fresh_risk import FreshRisk, fresh_context_risk

__all__ = ["Enclosure", "EnclosureTooWide", "format_ball", "require_relative_width", "error_ball", "certified_error",
           "certified_loss", "certified_loss_gradient", "certified_loss_hessian", "to_arb", "working_bits", "ESTIMATORS",
           "arb_to_mpf", "mpf_to_arb", "fresh_context_risk", "FreshRisk", "outward_bounds"]
