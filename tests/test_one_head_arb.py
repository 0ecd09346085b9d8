"""The one-head jet in real Arb balls (stumpcheck.numerics.certified.enclosures.one_head_arb) against the generated complex-ball jet,
and the per-piece Arb quadrature (stumpcheck.numerics.certified.enclosures.arb_quadrature.piece_moments_arb)."""

from __future__ import annotations

import mpmath
import pytest
from flint import arb, ctx
from hypothesis import given, settings
from hypothesis import strategies as st

import stumpcheck.numerics.certified.enclosures.arb_quadrature as arb_quadrature
from stumpcheck.numerics.certified.enclosures.arb_quadrature import loss_gradient_hessian_arb, piece_moments_arb
from stumpcheck.numerics.certified.enclosures.balls import arb_to_mpf
from stumpcheck.numerics.certified.enclosures.one_head_arb import exp_a, one_head_jet, segment_cumulants
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.population.quadrature import breakpoints

PREC = 150


def _node(log10_distance: float, near_one: bool) -> tuple[arb, arb, bool]:
    """(θ, 1 − θ, upper) with the node an exact ball at distance 10^log10_distance from its end."""
    with ctx.workprec(PREC):
        distance = arb(arb(10) ** log10_distance).mid()
    with ctx.workprec(PREC + 400):
        other = 1 - arb(distance)
    return (other, arb(distance), True) if near_one else (arb(distance), other, False)


@settings(max_examples=150, deadline=None)
@given(st.floats(0.3, 5e4), st.floats(-20.0, 40.0), st.floats(-14.0, -0.31), st.booleans(), st.booleans())
def test_jet_encloses_the_generated_jet(b, gap, log10_distance, near_one, hessian):
    """At exact (a, b) and an exact node θ (or 1 − θ) from 1e-14 to ½ away from its end, every component
    of one_head_jet overlaps the generated error_jet / error_and_gradient ball, and is as narrow: its
    midpoint within the generated ball's radius plus 2⁻¹³⁰ of the value."""
    with ctx.workprec(PREC):
        b_ball = arb(arb(b).mid())
        a_ball = arb((b_ball + gap).mid())
        theta, rest, upper = _node(log10_distance, near_one)
        ours = one_head_jet(b_ball, exp_a(a_ball, b_ball), theta, rest, hessian, upper)
        function = gen_arb.error_jet_one_head if hessian else gen_arb.error_and_gradient_one_head
        reference = [v.real for v in function(a_ball, b_ball, theta)]
        assert len(ours) == len(reference)
        for x, y in zip(ours, reference):
            assert x.is_finite() and x.overlaps(y)
            assert abs(x.mid() - y.mid()) <= y.rad() + abs(y.mid()) * arb(2) ** -130
            assert x.rad() <= y.rad() + abs(y.mid()) * arb(2) ** -130


@pytest.mark.parametrize("beta", ["1e-400", "1e-9", "0.001", "0.5", "3.99", "4.0", "30", "2000"])
def test_segment_cumulants_keep_their_relative_accuracy(beta):
    """κ₁, κ₂, κ₃ of the truncated exponential at an exact rate β = b·length (both with the working
    precision's bits, so that β itself needs twice as many), to 2⁻¹⁴⁰ relative on both sides of the
    switch to extra bits at β = 4 and below float64's range, against the same forms in mpmath at many more bits."""
    with ctx.workprec(PREC):
        b = arb((arb(7) / 3).mid())
        length = arb((arb(beta) / b).mid())
        found = segment_cumulants(b, length, 3)
    # the same closed forms, which cancel ~4·log₂(1/β) bits, at far more bits than that
    with mpmath.workprec(1200 + 6 * int(abs(mpmath.log(mpmath.mpf(beta), 2)))):
        x = arb_to_mpf(b.mid()) * arb_to_mpf(length.mid())
        p = 1 / mpmath.expm1(x)
        exact = (1 / x - p, 1 / x ** 2 - p * (1 + p), 2 / x ** 3 - p * (1 + p) * (1 + 2 * p))
        for value, reference in zip(found[2:], exact):
            assert abs(arb_to_mpf(value.mid()) - reference) <= abs(reference) * mpmath.mpf(2) ** -140
            assert arb_to_mpf(value.rad()) <= abs(reference) * mpmath.mpf(2) ** -140


@pytest.mark.parametrize("a, b", [(10.0, 10.0), (109.21, 100.0), (1201.99, 1187.83), (1000.0, 10.0), (-3.0, 0.5)])
def test_quadrature_with_the_closed_forms_is_the_generated_one(a, b):
    """loss_gradient_hessian_arb (one head) with the real-ball closed forms and with the generated
    jet: L, ∇L, ∇²L agree to 1e-40 relative (rounding), and the rounding bound is as small; also where
    the switch sits at 1 − θ ≈ e⁻⁹⁹⁰, below float64's range (a = 1000, b = 10)."""
    with mpmath.workprec(PREC):
        ours = loss_gradient_hessian_arb(a, b, order=12)
        try:
            arb_quadrature._CLOSED_FORM_ONE_HEAD = False
            reference = loss_gradient_hessian_arb(a, b, order=12)
        finally:
            arb_quadrature._CLOSED_FORM_ONE_HEAD = True
        pairs = [(ours.loss, reference.loss)] + list(zip(ours.gradient, reference.gradient))
        pairs += [(ours.hessian[i][j], reference.hessian[i][j]) for i, j in ((0, 0), (0, 1), (1, 1))]
        for x, y in pairs:
            assert abs(x - y) <= 1e-40 * abs(y)
        assert ours.rounding_bound <= max(reference.rounding_bound, 1e-40)


@pytest.mark.parametrize("estimator", ["one-head", "reflected"])
def test_piece_moments_sum_to_the_whole_rule(estimator):
    """piece_moments_arb with one order on every piece sums to loss_gradient_hessian_arb's ∇L, ∇²L (to
    the rounding), each radius encloses that rounding, and pieces at other orders are the same call on
    each piece alone."""
    with mpmath.workprec(PREC):
        a, b = mpmath.mpf("109.21"), mpmath.mpf(100)
        points = breakpoints(a, b, estimator=estimator)
        pieces = list(zip(points[:-1], points[1:]))
        found = piece_moments_arb(a, b, pieces, [10] * len(pieces), estimator=estimator)
        whole = loss_gradient_hessian_arb(a, b, order=10, estimator=estimator)
        reference = list(whole.gradient) + [whole.hessian[0][0], whole.hessian[0][1], whole.hessian[1][1]]
        for c, y in enumerate(reference):
            total = sum((values[c] for values, _ in found), mpmath.mpf(0))
            radius = sum(radii[c] for _, radii in found)
            assert abs(total - y) <= 1e-40 * abs(y) and radius <= 1e-40 * abs(float(y))
        orders = [4 + k % 7 for k in range(len(pieces))]
        mixed = piece_moments_arb(a, b, pieces, orders, estimator=estimator, hessian=False)
        for k in (0, len(pieces) // 2, len(pieces) - 1):
            alone = loss_gradient_hessian_arb(a, b, order=orders[k], estimator=estimator, hessian=False,
                                              points=list(pieces[k]))
            for x, y in zip(mixed[k][0], alone.gradient):
                assert abs(x - y) <= 1e-40 * abs(y)
        with pytest.raises(ValueError):
            piece_moments_arb(a, b, pieces, orders[:-1])


@pytest.mark.parametrize("order", [1, 4, 7, 23, 60])
def test_arb_rule_is_the_mpmath_rule(order):
    """The Gauss–Legendre rule from Arb's Legendre roots equals legendre_rule_mp's to 2 units in the last
    of 150 bits, node by node (both sorted), and integrates x^(2·order − 2) over [−1, 1] to 2^-140."""
    from stumpcheck.numerics.certified.enclosures.arb_quadrature import _rule_arb
    from stumpcheck.numerics.certified.enclosures.balls import arb_to_mpf
    from stumpcheck.numerics.population.quadrature import legendre_rule_mp

    x, w = _rule_arb(order, PREC)
    with mpmath.workprec(PREC):
        ours = sorted(zip((arb_to_mpf(v.mid()) for v in x), (arb_to_mpf(v.mid()) for v in w)))
        reference = sorted(zip(*legendre_rule_mp(order)))
        for (xo, wo), (xr, wr) in zip(ours, reference):
            assert abs(xo - xr) <= mpmath.mpf(2) ** -(PREC - 1) and abs(wo - wr) <= mpmath.mpf(2) ** -(PREC - 1)
        degree = 2 * order - 2
        moment = sum(wi * xi ** degree for xi, wi in ours)
        assert abs(moment - mpmath.mpf(2) / (degree + 1)) <= mpmath.mpf(2) ** -140
