"""The closed-form integrand of the certified L (numerics/certified/enclosures/pointwise.py) and the L it gives.

What is checked:

* the printed closed form (:mod:`stumpcheck.theory.closed_form_codegen`: shifted by e^{bθ}, expm1 where e^z − 1
  appears) is SymPy's closed form: their difference simplifies to 0, and the generated Arb
  ``closed_form_error_one_head`` contains the 50-digit mpmath value of
  :func:`stumpcheck.theory.model.closed_form_error` at random rational points;
* the closed form of the definition and the generated stable form are the same function: their
  Arb balls overlap at hypothesis-drawn (a, b, θ), for the one-head, reflected and averaged
  estimators, and both contain the 50-digit mpmath value of the SymPy closed form
  (:func:`stumpcheck.theory.model.closed_form_error`) at the same points;
* on a real interval of θ the ball lies in e's range [−θ, 1 − θ] and contains e at its ends
  and middle, also across a switch layer 10⁻¹³² wide (a = 400, b = 100);
* :func:`certified_loss` by the closed form overlaps the generated integrand's enclosure on
  the breakpoint pieces, with relative radius ≤ 1e-20, at points with layers at both ends,
  a narrow switch near θ = 1, and small b (extra bits for its cancellation);
* the pooled estimator has no closed form here: InputError.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp
from flint import acb, arb, ctx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.certified.enclosures import theta_integrals
from stumpcheck.numerics.certified.enclosures.pointwise import CLOSED_FORM_ESTIMATORS, closed_form_error_ball
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.precision import InputError
from stumpcheck.theory.closed_form_codegen import shifted_closed_form_error, shifted_form_residual
from stumpcheck.theory.model import closed_form_error
from stumpcheck.theory.symbols import a as A, b as B, theta as THETA

_SYMPY_ERROR = sp.lambdify((A, B, THETA), closed_form_error("one-head"), "mpmath")


def _sympy_error(a, b, theta, estimator):
    """e(θ) from SymPy's closed form (reflected: −e(1 − θ), averaged: the mean), at 60 digits plus
    what its raw form loses: 1 − (1 + bu)e^{−bu} cancels 2·log₁₀(1/(bu)) digits at u = min(θ, 1 − θ)."""
    near = max(min(theta, 1 - theta) * b, 1e-320)
    with mpmath.workdps(60 + max(0, int(-2 * mpmath.log10(near))) + 10):
        a, b, theta = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta)
        one = _SYMPY_ERROR(a, b, theta)
        mirrored = -_SYMPY_ERROR(a, b, 1 - theta)
        return {"one-head": one, "reflected": mirrored, "averaged": (one + mirrored) / 2}[estimator]


def _contains(ball: acb, value) -> bool:
    with mpmath.workdps(80):
        mid, rad = mpmath.mpf(ball.real.mid().str(60, radius=False)), mpmath.mpf(float(ball.real.rad()))
        return abs(mid - value) <= rad + abs(value) * mpmath.mpf(10) ** -45


def test_printed_closed_form_is_sympys_closed_form():
    assert sp.simplify(shifted_form_residual()) == 0
    numerator, denominator = shifted_closed_form_error()
    assert numerator.has(sp.exp(A)) and not numerator.has(sp.log)
    printed = {str(f.func) for f in (numerator + denominator).atoms(sp.Function)}
    assert printed == {"exp", "expm1"}


@settings(max_examples=30, deadline=None)
@given(a=st.fractions(-40, 1200, max_denominator=97), b=st.fractions("1/50", 1000, max_denominator=89),
       theta=st.fractions(0, 1, max_denominator=101))
@example(a=1013, b=1000, theta=1)
@example(a=0, b=sp.Rational(1, 50), theta=0)
def test_generated_closed_form_contains_the_sympy_value(a, b, theta):
    if not 0 < theta < 1:  # SymPy's raw form is 0/0 at θ ∈ {0, 1}: compare with the stable form there
        with ctx.workprec(200):
            closed = gen_arb.closed_form_error_one_head(arb(a.numerator) / a.denominator,
                                                        arb(b.numerator) / b.denominator, acb(theta.numerator))
            stable = gen_arb.error_one_head(arb(a.numerator) / a.denominator, arb(b.numerator) / b.denominator,
                                            acb(theta.numerator))
            assert closed.is_finite() and closed.overlaps(stable) and closed.rad() < 1e-30
        return
    near = min(theta, 1 - theta) * b
    with mpmath.workdps(50 + max(0, int(-2 * mpmath.log10(near))) + 10):
        reference = _SYMPY_ERROR(*(mpmath.mpf(q.numerator) / q.denominator for q in (a, b, theta)))
    with ctx.workprec(240):
        ball = gen_arb.closed_form_error_one_head(*(arb(q.numerator) / q.denominator for q in (a, b, theta)))
        assert ball.is_finite() and ball.imag.is_zero()
        assert _contains(ball, reference)
        assert float(ball.real.rad()) <= 1e-50 * max(abs(float(reference)), 1e-300) + 1e-60


@settings(max_examples=40)
@given(log_b=st.floats(-2, 4), offset=st.floats(-50, 1000), theta=st.floats(0, 1),
       estimator=st.sampled_from(CLOSED_FORM_ESTIMATORS))
@example(log_b=2.0, offset=300.0, theta=0.999, estimator="one-head")
@example(log_b=-2.0, offset=0.0, theta=0.0, estimator="reflected")
@example(log_b=3.0, offset=13.8, theta=1.0, estimator="averaged")
@example(log_b=0.0, offset=157.0, theta=2.225073858507e-311, estimator="reflected")  # 1 − (1 − θ) ≠ θ
def test_closed_form_is_the_generated_function(log_b, offset, theta, estimator):
    b = 10.0 ** log_b
    a = b * theta + offset
    with ctx.workprec(200):
        closed = closed_form_error_ball(arb(a), arb(b), estimator=estimator)(acb(theta))
        generated = getattr(gen_arb, f"error_{estimator.replace('-', '_')}")(arb(a), arb(b), acb(theta))
        assert closed.is_finite() and generated.is_finite()
        assert closed.overlaps(generated)
        reference = _sympy_error(a, b, theta, estimator)
        if abs(reference) > 1e-40:  # far below that, 60 digits of SymPy's raw form do not resolve e
            assert _contains(closed, reference)


@pytest.mark.parametrize("a, b, lo, hi", [(400.0, 100.0, 0.99, 1.0), (1013.8, 1000.0, 0.0, 0.01),
                                          (10.0, 10.0, 0.2, 0.7)])
def test_closed_form_on_an_interval_stays_in_the_range(a, b, lo, hi):
    with ctx.workprec(160):
        error = closed_form_error_ball(arb(a), arb(b))
        ball = error(acb(arb(lo).union(arb(hi))))
        assert ball.is_finite() and ball.imag.is_zero()
        slack = 2.0 ** -20  # a midpoint-radius ball rounds the hull of an interval outward
        assert ball.real.lower() >= -hi - slack and ball.real.upper() <= 1 - lo + slack
        for t in (lo, (lo + hi) / 2, hi):
            assert ball.real.overlaps(error(acb(t)).real)


@pytest.mark.parametrize("a, b, estimator", [(100 + 2 * 4.605170185988092, 100.0, "one-head"),
                                             (400.0, 100.0, "one-head"), (3.0, 1e-6, "one-head"),
                                             (30.0, 20.0, "averaged"), (5.0, 5.0, "reflected")])
def test_certified_loss_by_the_closed_form_overlaps_the_generated_integrand(a, b, estimator):
    closed = theta_integrals.certified_loss(a, b, estimator=estimator, dps=30, rel_width=1e-20)
    generated = theta_integrals.certified_loss(a, b, estimator=estimator, dps=30, rel_width=1e-20,
                                               integrand="generated")
    assert closed.relative_radius <= 1e-20 and generated.relative_radius <= 1e-20
    assert closed.lower <= generated.upper and generated.lower <= closed.upper


def test_pooled_has_no_closed_form():
    with pytest.raises(InputError, match="pooled"):
        closed_form_error_ball(1, 1, estimator="pooled")
    with pytest.raises(InputError):
        closed_form_error_ball(1, 1, estimator="two-head")
    with pytest.raises(InputError, match="pooled"):
        theta_integrals.certified_loss(1, 1, estimator="pooled", integrand="closed-form")
    with pytest.raises(InputError, match="integrand"):
        theta_integrals.certified_loss(1, 1, integrand="exact")
