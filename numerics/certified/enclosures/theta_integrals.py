"""Certified enclosures of L, ∇L and ∇²L as rigorous θ-integrals (evidence level *certified*).

    L = ∫₀¹ ½ e² dθ,   ∇L = ∫₀¹ e ∇e dθ,   ∇²L = ∫₀¹ (∇e ∇eᵀ + e ∇²e) dθ     (prior Uniform[0, 1])

(for a prior Uniform[l, u] with exact binary ends, ``prior=(l, u)``: the integrals over [l, u] divided by
u − l, on the same pieces cut at l and u) are integrated with Arb's rigorous integrator ``acb.integral`` (``analytic=True``: the integrands
return a non-finite ball wherever they are not analytic) on pieces of [0, 1] with exact binary
endpoints: any exact tiling of [0, 1] gives a rigorous result, the pieces only save the
integrator work. L of the one-head, reflected and averaged estimators integrates the closed form
of the definition (:func:`stumpcheck.numerics.certified.enclosures.pointwise.closed_form_error_ball`: a few exp calls,
no logarithms or series) on a short ladder of pieces (θ = 0 and θ = 1 at 4^k/(4b), and the
softmax switch), on which ``acb.integral``'s own bisection resolves the layers; everything else
integrates the generated Arb code (:mod:`stumpcheck.numerics.generated.population_arb`) on the model's
breakpoint pieces (:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64`, or the mpmath
:func:`~stumpcheck.numerics.population.quadrature.breakpoints` if that fails). Two components share one
complex integral, each scaled by 2^k ≈ 1/|component| from a float64 estimate (never part of a
result) so that one absolute tolerance means the same relative accuracy for both; a component
that misses ``rel_width`` is recomputed at a higher precision. Supported for
b ≤ ``MAX_INTEGRAL_SCALE``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import mpmath
from flint import acb, arb, ctx, fmpq

from stumpcheck.numerics.certified.enclosures.balls import (_LOG2_10, Enclosure, EnclosureTooWide, _magnitude, _next_bits, _parameters,
                                      _tag, _validate_rel_width, arb_to_mpf, mpf_to_arb, require_relative_width,
                                      working_bits)
from stumpcheck.numerics.certified.enclosures.pointwise import CLOSED_FORM_ESTIMATORS, closed_form_error_ball
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.population.quadrature import breakpoints, breakpoints_float64, transition_point_float64
from stumpcheck.numerics.population.quantities import MAX_INTEGRAL_SCALE
from stumpcheck.numerics.precision import InputError, validate_dps

__all__ = ["LOSS_INTEGRANDS", "certified_loss", "certified_loss_gradient", "certified_loss_hessian", "ladder_pieces"]

#: How many times a missed ``rel_width`` triggers a re-evaluation at a higher precision
#: (the attempts cost far more than pointwise ones).
_MAX_INTEGRAL_ATTEMPTS = 4
#: The θ-integrals give up (EnclosureTooWide) beyond this many times the initial precision:
#: a component that is 0 or exponentially small (∂L/∂a of the pooled head at large b is
#: ~1e-217178) has no relative width worth grinding for.
_MAX_INTEGRAL_BITS_FACTOR = 8


def _as_float(value) -> float:
    if isinstance(value, arb):
        return float(value.mid())
    if isinstance(value, (str, Decimal)):
        return float(Decimal(str(value).strip()))
    if isinstance(value, Fraction):
        return value.numerator / value.denominator
    return float(value)


def _prior_ends(prior):
    """None for the prior Uniform[0, 1], else its ends (l, u) as exact arb numbers, 0 ≤ l < u ≤ 1.

    An end must be an exact binary number (an int, a float, an mpf, or a Fraction, Decimal or decimal string
    with a power-of-two denominator such as "0.25"): the integrals run between exact points."""
    try:
        lo, hi = prior
    except (TypeError, ValueError):
        raise InputError(f"prior must be a pair (l, u), got {prior!r:.40}") from None
    ends = []
    for end in (lo, hi):
        if isinstance(end, bool):
            raise InputError(f"a prior end must be a number, got {end!r}")
        try:
            if isinstance(end, mpmath.mpf):
                man, exp = end.man_exp
                exact = Fraction(int(man)) * Fraction(2) ** int(exp)
            else:
                exact = Fraction(str(end).strip()) if isinstance(end, (str, Decimal)) else Fraction(end)
        except (TypeError, ValueError, ArithmeticError):
            raise InputError(f"a prior end must be a real number, got {end!r:.40}") from None
        if exact.denominator & (exact.denominator - 1):
            raise InputError(f"a certified θ-integral needs prior ends that are exact binary numbers, got {end!r:.40}")
        ends.append(exact)
    if not 0 <= ends[0] < ends[1] <= 1:
        raise InputError(f"prior Uniform[l, u] needs 0 <= l < u <= 1, got [{lo}, {hi}]")
    if ends == [0, 1]:
        return None
    return tuple(arb(fmpq(e.numerator, e.denominator)) for e in ends)


def _within(pieces, ends):
    """The piece function ``pieces`` cut to the prior's [l, u] (``ends``; None: [0, 1] as it is)."""
    if ends is None:
        return pieces
    lo, hi = ends

    def cut(a_ball, b_ball, estimator, bits):
        inner = [p for p in pieces(a_ball, b_ball, estimator, bits) if lo < p < hi]
        return [lo] + inner + [hi]
    return cut


def _float_prior(ends):
    return (0.0, 1.0) if ends is None else (float(ends[0].mid()), float(ends[1].mid()))


def _float_estimate(a, b, estimator, ends=None):
    """(L, ∂L/∂a, ∂L/∂b) in float64, only to scale tolerances (never part of a result)."""
    from stumpcheck.numerics.population.quantities import loss_and_gradient_float64

    try:
        value, gradient = loss_and_gradient_float64(_as_float(a), _as_float(b), estimator=estimator,
                                                    prior=_float_prior(ends))
        return float(value), float(gradient[0]), float(gradient[1])
    except (ArithmeticError, ValueError, TypeError):
        return None


def _pieces(a_ball: arb, b_ball: arb, estimator: str, bits: int) -> list[arb]:
    """Exact binary arb endpoints of the breakpoint pieces of [0, 1] (from the midpoints of a, b).

    The breakpoints only steer the integrator (any exact points tiling [0, 1] give a
    rigorous result): the float64 ones are used, the mpmath ones if those fail.
    """
    a_mid, b_mid = arb_to_mpf(a_ball.mid()), arb_to_mpf(b_ball.mid())
    points = None
    try:
        points = breakpoints_float64(float(a_mid), float(b_mid), estimator=estimator, lo=0.0, hi=1.0)
    except (ArithmeticError, ValueError, FloatingPointError):
        points = None
    if not points or not all(math.isfinite(p) for p in points) or points[0] != 0 or points[-1] != 1:
        with mpmath.workprec(bits):
            points = breakpoints(a_mid, b_mid, estimator=estimator, lo=0, hi=1)
    ends = sorted({mpf_to_arb(p).mid() for p in points}, key=float)
    return [arb(0)] + [p for p in ends if 0 < p < 1] + [arb(1)]


#: Growth of the ladders of the closed-form loss's pieces (from 1/(4b) at θ = 0 and θ = 1).
_LADDER_GROWTH = 4


def ladder_pieces(a_ball: arb, b_ball: arb, estimator: str, bits: int) -> list[arb]:
    """Exact binary endpoints for the closed-form L: θ = 0, 1, the points 4^k/(4b) from each
    end and the softmax switch θ* (and 1 − θ* for the reflected head), as doubles.

    Fewer pieces than the model's breakpoints: ``acb.integral`` bisects toward a layer
    by itself, so a piece only has to keep a layer near one of its ends. The switch
    comes from :func:`stumpcheck.numerics.population.quadrature.transition_point_float64` (a
    steering choice: rigour does not depend on it).
    """
    a_mid, b_mid = float(a_ball.mid()), float(b_ball.mid())
    points = {0.0, 1.0}
    step = 1 / (4 * b_mid)
    while step < 0.5:
        points.update((step, 1 - step))
        step *= _LADDER_GROWTH
    try:
        switch, rest, _ = transition_point_float64(a_mid, b_mid)
        if estimator in ("one-head", "averaged"):
            points.add(float(switch))
        if estimator in ("reflected", "averaged"):
            points.add(float(rest))
    except (ArithmeticError, ValueError, FloatingPointError):
        pass
    inner = sorted(p for p in points if 0 < p < 1 and math.isfinite(p))
    return [arb(0)] + [arb(p) for p in inner] + [arb(1)]


def _closed_form_bits(b_ball: arb) -> int:
    """Bits the closed form loses for b < 1: 1 − e^{−bu}(1 + bu) and e^{bθ}(bθ − 1) + 1 are
    O((bθ)²) differences of O(1) terms, 2·log₂(1/b) bits below 1 (plus a margin of 8)."""
    small = float(b_ball.lower())
    return 8 + (math.ceil(2 * math.log2(1 / small)) if 0 < small < 1 else 0)


def _midpoint_estimate(a, b, estimator: str, prior_ends=None):
    """∫ ½e² ≈ Σ (hi − lo)·½e(mid)² over the ladder pieces (in the prior's [l, u]) at 64 bits, only to scale
    the tolerance (never part of a result): the pieces follow the layers, so it is within a small factor."""
    try:
        with ctx.workprec(64):
            a_ball, b_ball = _parameters(a, b)
        with ctx.workprec(64 + _closed_form_bits(b_ball)):
            a_ball, b_ball = _parameters(a, b)
            ends = _within(ladder_pieces, prior_ends)(a_ball, b_ball, estimator, 64)
            error = closed_form_error_ball(a_ball, b_ball, estimator=estimator)
            total = arb(0)
            for lo, hi in zip(ends, ends[1:]):
                e = error(acb((lo + hi) / 2)).real
                total += (hi - lo) * e * e / 2
            value = float(total.mid())
    except (ArithmeticError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def _integrate(integrand, pieces: list[arb], goal_bits: int, abs_tol: arb) -> acb:
    total = acb(0)
    for lo, hi in zip(pieces, pieces[1:]):
        part = acb.integral(integrand, lo, hi, rel_tol=arb(2) ** -goal_bits, abs_tol=abs_tol)
        if not part.is_finite():
            raise EnclosureTooWide(f"acb.integral returned a non-finite ball on the piece [{lo}, {hi}]")
        total += part
    return total


def _scale_power(estimate) -> int:
    """An exponent k with 2^k ≈ 1/|estimate| (0 when there is no usable estimate)."""
    if estimate is None or not math.isfinite(estimate) or estimate == 0:
        return 0
    return -math.floor(math.log2(abs(estimate)))


def _goal_bits(dps: int, rel_width) -> int:
    goal = math.ceil(dps * _LOG2_10)
    if rel_width is not None:
        goal = max(goal, math.ceil(-math.log2(rel_width)))
    return goal + 10


def _rescaled(ball, goal: int, previous: int) -> int:
    """A new scale exponent from a computed ball: its midpoint if the ball fixes the sign,
    else from its radius (the value is below it) so that the next tolerance is finer."""
    if not ball.is_finite():
        return previous
    if not ball.contains(0):
        return _scale_power(float(ball.mid()))
    radius = float(ball.rad())
    return _scale_power(radius * 2.0 ** -(goal // 2)) if radius > 0 else previous


def _certified_integrals(make_integrand, count: int, a, b, estimator: str, dps: int, rel_width,
                         estimates, pieces=None, extra_bits=None, prior_ends=None) -> list[Enclosure]:
    """Enclosures of ∫₀¹ f_k(θ) dθ for the ``count`` functions of ``make_integrand(a_ball, b_ball)``
    (a function of (θ, analytic) returning the tuple (f_0(θ), …), each real on the real axis
    and analytic where e and its derivatives are), on the pieces ``pieces(a_ball, b_ball,
    estimator, bits)`` (default: the model's breakpoints), at the working precision of
    :func:`~stumpcheck.numerics.certified.enclosures.balls.working_bits` plus ``extra_bits(b)`` bits (if given).

    Two components share one complex integral (f_j·2^(k_j) + i·f_k·2^(k_k)); the
    scales 2^k ≈ 1/|∫f| come from float64 ``estimates`` (or 1) and make one
    absolute tolerance 2^-(goal+8) mean the same relative accuracy for each. A
    component that misses ``rel_width`` is recomputed (paired with another such one)
    at a higher working precision and a scale taken from its last enclosure. With ``prior_ends`` (l, u)
    (exact balls) the integrals run over [l, u] and are divided by u − l.
    """
    pieces = _within(_pieces if pieces is None else pieces, prior_ends)
    scales = [_scale_power(x) for x in (estimates or [None] * count)]
    with ctx.workprec(64):
        a0, b0 = _parameters(a, b)
        if b0 > MAX_INTEGRAL_SCALE:
            raise InputError(f"θ-integrals (L, ∇L, ∇²L) are supported for b <= {MAX_INTEGRAL_SCALE:g}, got b={b}")
        bits = working_bits(dps, _magnitude(a0), _magnitude(b0))
        if extra_bits is not None:
            bits += extra_bits(b0)
    goal = _goal_bits(dps, rel_width)
    wanted = list(range(count))
    balls: list = [None] * count
    enclosures: list = [None] * count
    most_bits = _MAX_INTEGRAL_BITS_FACTOR * bits
    for _ in range(_MAX_INTEGRAL_ATTEMPTS):
        with ctx.workprec(bits):
            a_ball, b_ball = _parameters(a, b)
            ends = pieces(a_ball, b_ball, estimator, bits)
            components = make_integrand(a_ball, b_ball)
            weights = [arb(2) ** k for k in scales]
            for pair in (wanted[i:i + 2] for i in range(0, len(wanted), 2)):
                if len(pair) == 1:
                    def integrand(t, analytic, k=pair[0], weight=weights[pair[0]]):
                        return components(t, analytic)[k] * weight
                else:
                    def integrand(t, analytic, j=pair[0], k=pair[1], wj=weights[pair[0]],
                                  wk=acb(0, weights[pair[1]])):
                        values = components(t, analytic)
                        return values[j] * wj + values[k] * wk

                total = _integrate(integrand, ends, goal, arb(2) ** -(goal + 8))
                if prior_ends is not None:
                    total /= prior_ends[1] - prior_ends[0]
                balls[pair[0]] = total.real / weights[pair[0]]
                if len(pair) == 2:
                    balls[pair[1]] = total.imag / weights[pair[1]]
        for k in wanted:
            enclosures[k] = Enclosure.from_ball(balls[k], prec_bits=bits, digits=dps)
        wanted = [k for k in range(count) if not enclosures[k].is_finite
                  or (rel_width is not None and enclosures[k].relative_radius > rel_width)]
        if not wanted or rel_width is None or bits >= most_bits:
            break
        bits = min(most_bits, max(_next_bits(bits, balls[k], rel_width) for k in wanted))
        for k in wanted:
            scales[k] = _rescaled(balls[k], goal, scales[k])
    return [require_relative_width(enclosure, rel_width) for enclosure in enclosures]


#: The integrands :func:`certified_loss` accepts.
LOSS_INTEGRANDS = ("auto", "closed-form", "generated")


def certified_loss(a, b, *, estimator: str = "one-head", dps: int = 30, rel_width=None,
                   integrand: str = "auto", prior=(0, 1)) -> Enclosure:
    """A certified enclosure of L(a, b) = ∫₀¹ ½ e(θ)² dθ (prior Uniform[0, 1]; ``prior=(l, u)`` with exact binary
    ends: (u − l)⁻¹ ∫ₗᵘ ½ e(θ)² dθ).

    Rigorous integration (``acb.integral``, honouring its ``analytic`` flag).
    ``integrand="closed-form"`` (one-head, reflected, averaged): the closed form of the
    definition on the ladder pieces (:func:`ladder_pieces`); ``"generated"``: the
    generated e on the model's breakpoint pieces; ``"auto"``: the first where it
    exists. ``rel_width`` as in :func:`certified_error`.
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    tag = _tag(estimator)
    ends = _prior_ends(prior)
    if integrand not in LOSS_INTEGRANDS:
        raise InputError(f"integrand must be one of {', '.join(LOSS_INTEGRANDS)}, got {integrand!r}")
    if integrand == "closed-form" and estimator not in CLOSED_FORM_ESTIMATORS:
        raise InputError(f"no closed-form integrand for the {estimator} estimator")
    if estimator in CLOSED_FORM_ESTIMATORS and integrand != "generated":
        estimate = (_midpoint_estimate(a, b, estimator, ends),)
        def make_integrand(a_ball, b_ball):
            error = closed_form_error_ball(a_ball, b_ball, estimator=estimator)

            def components(t, analytic):
                e = error(t)
                return (e * e / 2,)
            return components
        pieces = ladder_pieces
    else:
        error = getattr(gen_arb, f"error_{tag}")
        estimate = _float_estimate(a, b, estimator, ends)

        def make_integrand(a_ball, b_ball):
            def components(t, analytic):
                e = error(a_ball, b_ball, t, analytic)
                return (e * e / 2,)
            return components
        pieces = None

    (enclosure,) = _certified_integrals(make_integrand, 1, a, b, estimator, dps, rel_width,
                                        estimate[:1] if estimate else None, pieces,
                                        _closed_form_bits if pieces is not None else None, ends)
    return enclosure


def certified_loss_gradient(a, b, *, estimator: str = "one-head", dps: int = 30,
                            rel_width=None, extra_bits: int = 0, prior=(0, 1)) -> tuple[Enclosure, Enclosure]:
    """Certified enclosures of (∂L/∂a, ∂L/∂b) = ∫₀¹ e ∇e dθ.

    Both components come from one complex integral: the integrand
    e·(2^{k_a} ∂e/∂a + i·2^{k_b} ∂e/∂b) is analytic wherever e and ∇e are, and
    its integral along the real segment has the two (scaled) components as real
    and imaginary parts; ``2^k ≈ 1/|component|`` (from a float64 estimate) gives
    both the same relative accuracy. A component that misses ``rel_width`` is
    recomputed at a higher precision. ``extra_bits`` (≥ 0) more bits of working precision, not of
    the goal: what a switch layer at 1 − θ ≈ 2^−k needs (about k) for θ-balls to resolve it. ``prior`` as
    in :func:`certified_loss`.
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    more = _extra_bits(extra_bits)
    tag = _tag(estimator)
    ends = _prior_ends(prior)
    error = getattr(gen_arb, f"error_{tag}")
    gradient = getattr(gen_arb, f"error_gradient_{tag}")
    estimate = _float_estimate(a, b, estimator, ends)

    def make_integrand(a_ball, b_ball):
        def components(t, analytic):
            e = error(a_ball, b_ball, t, analytic)
            g = gradient(a_ball, b_ball, t, analytic)
            return (e * g[0], e * g[1])
        return components

    return tuple(_certified_integrals(make_integrand, 2, a, b, estimator, dps, rel_width,
                                      estimate[1:] if estimate else None, extra_bits=more, prior_ends=ends))


def _extra_bits(extra_bits):
    """``extra_bits`` as the ``extra_bits`` function of :func:`_certified_integrals` (None for 0)."""
    if isinstance(extra_bits, bool) or not isinstance(extra_bits, int) or not 0 <= extra_bits <= 100_000:
        raise InputError(f"extra_bits must be an integer in [0, 100000], got {extra_bits!r}")
    return (lambda _b: extra_bits) if extra_bits else None


def certified_loss_hessian(a, b, *, estimator: str = "one-head", dps: int = 30, rel_width=None,
                           extra_bits: int = 0, prior=(0, 1)) -> tuple[Enclosure, Enclosure, Enclosure]:
    """Certified enclosures of (∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²) = ∫₀¹ (∇e ∇eᵀ + e ∇²e) dθ.

    Same rigorous integration as :func:`certified_loss_gradient`; the three
    integrands are analytic wherever e and its derivatives are. Tolerances are
    scaled by a float64 estimate of the Hessian (never part of the result). ``extra_bits`` and ``prior`` as
    in :func:`certified_loss_gradient`.
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    more = _extra_bits(extra_bits)
    tag = _tag(estimator)
    ends = _prior_ends(prior)
    gradient = getattr(gen_arb, f"error_gradient_{tag}")
    hessian = getattr(gen_arb, f"error_hessian_{tag}")
    error = getattr(gen_arb, f"error_{tag}")

    def make_integrand(a_ball, b_ball):
        def components(t, analytic):
            e = error(a_ball, b_ball, t, analytic)
            g = gradient(a_ball, b_ball, t, analytic)
            h = hessian(a_ball, b_ball, t, analytic)
            return (g[0] * g[0] + e * h[0], g[0] * g[1] + e * h[1], g[1] * g[1] + e * h[2])
        return components

    return tuple(_certified_integrals(make_integrand, 3, a, b, estimator, dps, rel_width,
                                      _float_hessian_estimate(a, b, estimator, ends), extra_bits=more,
                                      prior_ends=ends))


def _float_hessian_estimate(a, b, estimator, ends=None):
    """(H_aa, H_ab, H_bb) in float64, only to scale tolerances (never part of a result)."""
    try:
        from stumpcheck.numerics.population.quantities import loss_gradient_hessian_float64

        _, _, hessian = loss_gradient_hessian_float64(_as_float(a), _as_float(b), estimator=estimator,
                                                      prior=_float_prior(ends))
        import numpy as np

        hessian = np.asarray(hessian, dtype=float)
        if hessian.shape == (2, 2):
            hessian = hessian[0, 0], hessian[0, 1], hessian[1, 1]
        return tuple(float(h) for h in hessian)
    except (ArithmeticError, ValueError, TypeError, ImportError):
        return None
