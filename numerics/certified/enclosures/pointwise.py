"""Pointwise certified enclosures of e(θ) = θ̂∞(a, b; θ) − θ (evidence level *certified*).

:func:`certified_error` encloses the population error e(θ) of an estimator at a point θ, or
for every θ of a ball or interval ⊆ [0, 1] (the interval is bisected, widest enclosure first,
and the hull of the pieces returned), with a and b numbers or balls. The values come from the
generated Arb code (:mod:`stumpcheck.numerics.generated.population_arb`, where e is finite at θ = 0 and
θ = 1); a missed relative width is retried at a precision raised by the bits that were lost
(Ziv's strategy), a few times at most. :func:`error_ball` is the raw generated e at the current
precision, without validation (the integrand of :mod:`stumpcheck.numerics.certified.enclosures.theta_integrals`).
"""

from __future__ import annotations

import heapq
import itertools
import math
from decimal import Decimal

from flint import acb, arb, ctx

from stumpcheck.numerics.certified.enclosures.balls import (Enclosure, _magnitude, _next_bits, _parameters, _tag, _validate_rel_width,
                                      require_relative_width, to_arb, working_bits)
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.precision import InputError, validate_dps

__all__ = ["error_ball", "closed_form_error_ball", "CLOSED_FORM_ESTIMATORS", "certified_error"]

#: How many times a missed ``rel_width`` triggers a re-evaluation at a higher precision.
_MAX_ATTEMPTS = 6


def _unit_ball(value, name: str) -> arb:
    """A ball for a θ value, checked to lie in [0, 1] exactly.

    Binary inputs convert exactly and are compared exactly; a decimal is
    compared as a Decimal and its ball (which may stick out of [0, 1] when it
    is within a rounding of an end) is cut back to [0, 1], θ's domain (up to
    the radius rounding of the new ball, which the generated code tolerates).
    """
    ball = to_arb(value, name)
    if isinstance(value, (str, Decimal)):
        if not 0 <= Decimal(str(value).strip()) <= 1:
            raise InputError(f"{name} must lie in [0, 1], got {value}")
        if ball.lower() >= 0 and ball.upper() <= 1:
            return ball
        return arb(ball.lower()).max(arb(0)).union(arb(ball.upper()).min(arb(1)))
    if not (ball.lower() >= 0 and ball.upper() <= 1):
        raise InputError(f"{name} must lie in [0, 1], got {value}")
    return ball


def _threshold(theta):
    """θ ⊆ [0, 1] as a ball (a number or an arb ball) or as exact ends (lo, hi) of an interval."""
    if isinstance(theta, (tuple, list)):
        if len(theta) != 2:
            raise InputError(f"a theta interval must be (lo, hi), got {theta!r}")
        lo, hi = _unit_ball(theta[0], "theta"), _unit_ball(theta[1], "theta")
        if not lo <= hi:
            raise InputError(f"a theta interval needs lo <= hi, got {theta!r}")
        return (arb(lo.lower()), arb(hi.upper()))
    ball = _unit_ball(theta, "theta")
    if isinstance(theta, arb) and not ball.rad().is_zero():
        return (arb(ball.lower()), arb(ball.upper()))
    return ball


def error_ball(a, b, theta, *, estimator: str = "one-head", analytic: bool = False) -> acb:
    """The generated Arb e(θ) at the current ``flint.ctx.prec``: an ``acb`` ball, no validation.

    ``theta`` may be a complex ball. With ``analytic=True`` the result is a
    non-finite ball wherever a logarithm evaluated inside may be non-analytic on
    the input balls (``acb.integral``'s contract).
    """
    function = getattr(gen_arb, f"error_{_tag(estimator)}")
    return function(a, b, theta, analytic)


#: The estimators :func:`closed_form_error_ball` covers (the pooled softmax is not written out).
CLOSED_FORM_ESTIMATORS = ("one-head", "reflected", "averaged")


def closed_form_error_ball(a, b, *, estimator: str = "one-head"):
    """The function θ ↦ e(θ) (an ``acb`` ball) of ``estimator`` at fixed balls a, b > 0, from
    the closed form of the definition, at the current precision.

    The one-head e is the generated ``closed_form_error_one_head_at(a, b)`` (SymPy's integrals of the
    definition shifted by e^{bθ}, u = 1 − θ: e = [expm1(bθ) − bθe^{bθ} − e^a(expm1(−bu) +
    bu·e^{−bu})] / [b(expm1(bθ) − e^a·expm1(−bu))], theory/closed_form_codegen.py): a few
    exponentials, meromorphic in θ, so ``acb.integral``'s ``analytic`` flag needs no check (a
    ball division by a ball that may contain 0 is not finite); the cancellations near θ = 0 and
    θ = 1 only widen the ball.

    The reflected head is the reflection of the one head, e'(θ) = −e(1 − θ) (docs/model.md §5:
    θ̂'(θ) = 1 − θ̂(1 − θ); the one head is passed θ itself as its 1 − θ, which keeps a tiny θ
    from being swamped by 1 − (1 − θ)), and the averaged error is (e + e')/2. Returns a function
    ``f(theta, analytic)`` for ``acb.integral`` (``analytic`` needs no check, see above). On a
    real interval of θ the ball is cut to e's range [−θ, 1 − θ] (θ̂∞ ∈ [0, 1] for every
    estimator), which keeps the integrator's crude bounds finite near a narrow switch.
    The pooled estimator is not covered (InputError): its integrand is the generated one.
    """
    if estimator not in CLOSED_FORM_ESTIMATORS:
        _tag(estimator)
        raise InputError(f"no closed-form integrand for the {estimator} estimator; "
                         f"expected one of {', '.join(CLOSED_FORM_ESTIMATORS)}")
    one_head = gen_arb.closed_form_error_one_head_at(a, b)  # e^a computed once
    if estimator == "one-head":
        def error(theta):
            return one_head(theta)
    elif estimator == "reflected":
        def error(theta):
            return -one_head(1 - theta, one_minus_theta=theta)
    else:
        def error(theta):
            return (one_head(theta) - one_head(1 - theta, one_minus_theta=theta)) / 2

    def error_in_range(theta, analytic=False):
        theta = acb(theta)
        value = error(theta)
        if not theta.imag.is_zero() or theta.real.rad().is_zero():
            return value
        # a real interval of θ: θ̂∞ is a mean of x ∈ [0, 1], so e ∈ [−θ, 1 − θ]; the closed
        # form's terms can be e^{a−b} times larger than e, and their ball as wide
        span = arb(-theta.real.upper()).union(arb(1 - theta.real.lower()))
        if not value.is_finite() or not value.imag.is_zero():
            return acb(span)
        return acb(value.real.intersection(span))
    return error_in_range


def _enclose_over(function, a_ball, b_ball, theta, rel_width, digits: int, max_pieces: int) -> arb:
    """A real ball containing e(θ) for every θ in ``theta`` (a ball, or exact ends (lo, hi)).

    A ball (a point or a decimal's enclosure) is evaluated once. An interval is bisected, widest enclosure
    first, until every piece's radius is at most an eighth of the spread of
    the values sampled at the ends and the middle (plus 10^-digits relative),
    or rel_width/4 relative when a width is requested, or until there are
    ``max_pieces`` pieces; the hull of the pieces' enclosures is returned.
    """
    def value(t):
        return function(a_ball, b_ball, t).real

    if not isinstance(theta, tuple):
        return value(theta)
    lo, hi = theta
    if lo == hi:
        return value(lo)
    samples = [value(t) for t in (lo, ((lo + hi) / 2).mid(), hi)]
    spread = samples[0].union(samples[1]).union(samples[2])
    size = _magnitude(spread)
    tolerance = float(spread.rad()) / 8 + 10.0 ** -digits * size
    if rel_width is not None:
        tolerance = max(tolerance, rel_width * size / 4)
    counter = itertools.count()

    def entry(left, right):
        ball = value(left.union(right))
        radius = _magnitude(ball.rad()) if ball.is_finite() else math.inf
        return (-radius, next(counter), left, right, ball)

    heap = [entry(lo, hi)]
    while len(heap) < max_pieces and -heap[0][0] > tolerance:
        _, _, left, right, _ = heapq.heappop(heap)
        middle = ((left + right) / 2).mid()
        heapq.heappush(heap, entry(left, middle))
        heapq.heappush(heap, entry(middle, right))
    hull = heap[0][4]
    for item in heap[1:]:
        hull = hull.union(item[4])
    return hull


def certified_error(a, b, theta, *, estimator: str = "one-head", dps: int = 30, rel_width=None,
                    max_pieces: int = 64) -> Enclosure:
    """A certified enclosure of e(θ) = θ̂∞(a, b; θ) − θ.

    ``theta`` is a number, an ``arb`` ball or an interval ``(lo, hi)`` ⊆ [0, 1];
    for a ball the enclosure holds for every θ in it (the ball is bisected into
    at most ``max_pieces`` pieces and the hull of their enclosures returned).
    ``a`` and ``b`` may be balls too. With ``rel_width`` the enclosure must have
    ``rad/|mid| ≤ rel_width`` or :class:`EnclosureTooWide` is raised; a non-finite
    enclosure always raises it.
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    if isinstance(max_pieces, bool) or not isinstance(max_pieces, int) or max_pieces < 1:
        raise InputError(f"max_pieces must be a positive int, got {max_pieces!r}")
    function = getattr(gen_arb, f"error_{_tag(estimator)}")
    with ctx.workprec(64):
        a0, b0 = _parameters(a, b)
        _threshold(theta)
        bits = working_bits(dps, _magnitude(a0), _magnitude(b0))
    for _ in range(_MAX_ATTEMPTS):
        with ctx.workprec(bits):
            a_ball, b_ball = _parameters(a, b)
            ball = _enclose_over(function, a_ball, b_ball, _threshold(theta), rel_width, dps, max_pieces)
        enclosure = Enclosure.from_ball(ball, prec_bits=bits, digits=dps)
        if enclosure.is_finite and (rel_width is None or enclosure.relative_radius <= rel_width):
            return enclosure
        if rel_width is None:
            break
        bits = _next_bits(bits, ball, rel_width)
    return require_relative_width(enclosure, rel_width)
