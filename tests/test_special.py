"""The truncated-exponential functions Λ, κ_k and the softmax weight (stumpcheck.theory.special).

Every claim is checked against the *definition* — Λ(β) = log ∫₀¹ e^{−βτ} dτ and
κ_k the cumulants of the density ∝ e^{−βτ} on [0, 1] — computed here by direct
mpmath quadrature of the moment integrals, never through the functions under
test. The generated float64 and mpmath helpers of
``stumpcheck.numerics.generated.population_{numpy,mpmath}`` are compared with it at the
rates where the evaluation forms switch or cancel (docs/model.md §8: "1 − (1 + z)e^{−z}
and similar forms cancel catastrophically for small z").
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.theory.codegen import MAX_CUMULANT_ORDER, reflection_identities
from stumpcheck.theory.special import (P, SoftmaxWeight, TruncExpCumulant, TruncExpLogMass,
                            large_rate_form, taylor_coefficients)
from stumpcheck.theory.symbols import beta
from tests.strategies import precisions, rates

ORDERS = range(0, MAX_CUMULANT_ORDER + 1)  # 0 is Λ, k ≥ 1 is κ_k

# ---------------------------------------------------------------------------
# Reference: the defining integrals
# ---------------------------------------------------------------------------


def _quad_pieces(rate):
    """Pieces of [0, 1] for ∫ g(τ) e^{−rate·τ} dτ and the rule to use on them.

    For |rate| ≤ 4 the integrand is entire and tame: one Gauss–Legendre piece.
    Beyond, the weight is a layer of width 1/|rate| at τ = 0 (rate > 0) or at
    τ = 1 (rate < 0); a ladder of breakpoints at distances 2^j/|rate| from that
    end makes every piece smooth on its own scale.
    """
    if abs(rate) <= 4:
        return [mpmath.mpf(0), mpmath.mpf(1)]
    peak = 0 if rate > 0 else 1
    points = {mpmath.mpf(0), mpmath.mpf(1)}
    step = 1 / abs(rate)
    while step < 1:
        points.add(abs(peak - step))
        step *= 2
    return sorted(points)


def reference_cumulants(rate, dps):
    """[Λ, κ₁, …, κ₅](rate) from the moment integrals, correct to > dps digits.

    Λ = log ∫ e^{−βτ}; κ₁ = mean; κ₂, κ₃ = central moments μ₂, μ₃;
    κ₄ = μ₄ − 3μ₂²; κ₅ = μ₅ − 10μ₃μ₂. The weight is shifted by its maximum
    (no overflow for β ≪ 0). Near β = 0, Λ ≈ −β/2 and κ₃ ≈ β/120 are left over
    from O(1) integrals, so the working precision grows with log₁₀(1/|β|).
    Raises if the quadrature's own error estimate is not below 10^−(dps+5).
    """
    rate = mpmath.mpf(rate)
    if rate == 0:  # the uniform law (checked by quadrature in test_reference_reproduces_known_values)
        with mpmath.workdps(dps + 10):
            return [mpmath.mpf(0), mpmath.mpf(1) / 2, mpmath.mpf(1) / 12, mpmath.mpf(0),
                    -mpmath.mpf(1) / 120, mpmath.mpf(0)]
    extra = 25
    if rate != 0 and abs(rate) < 1:
        extra += 2 * int(mpmath.ceil(-mpmath.log10(abs(rate))))
    # whole multiples of 40 digits: mpmath caches Gauss–Legendre nodes per precision
    work = 40 * -(-(dps + extra) // 40)
    with mpmath.workdps(work):
        shift = max(mpmath.mpf(0), -rate)
        pieces = _quad_pieces(rate)

        def weight(t):
            return mpmath.exp(-rate * t - shift)

        def integral(g, size):
            # size: the natural magnitude of the integral (mass × spread^j)
            value, err = mpmath.quad(g, pieces, method="gauss-legendre", error=True)
            if err > mpmath.mpf(10) ** (-(dps + 5)) * (abs(value) + size):
                raise AssertionError(f"reference quadrature did not converge at β={rate}: err {err}")
            return value

        mass = integral(weight, 0)
        spread = 1 / max(mpmath.mpf(1), abs(rate))  # the standard deviation's order
        mean = integral(lambda t: t * weight(t), mass) / mass
        mu = {j: integral(lambda t, j=j: (t - mean) ** j * weight(t), mass * spread**j) / mass
              for j in (2, 3, 4, 5)}
        return [mpmath.log(mass) + shift, mean, mu[2], mu[3],
                mu[4] - 3 * mu[2] ** 2, mu[5] - 10 * mu[3] * mu[2]]


@cache
def _reference_cached(rate: float, dps: int):
    return tuple(reference_cumulants(rate, dps))


def _evaluate(module, order, rate):
    if order == 0:
        return module.trunc_exp_log_mass(rate)
    return module.trunc_exp_cumulant(order, rate)


def test_reference_reproduces_known_values():
    """The reference itself: uniform cumulants at β = 0 and the large-rate limit."""
    with mpmath.workdps(40):
        at_zero = reference_cumulants(mpmath.mpf(10) ** -60, 40)  # closer to 0 than 40 digits see
        exact = [0, mpmath.mpf(1) / 2, mpmath.mpf(1) / 12, 0, -mpmath.mpf(1) / 120, 0]
        for got, want in zip(at_zero, exact):
            assert abs(got - want) < mpmath.mpf(10) ** -38
        # Λ ≈ −β/2 and κ₃ ≈ β/120 survive the cancellation near 0
        tiny = mpmath.mpf(10) ** -60
        assert abs(at_zero[0] / tiny + mpmath.mpf(1) / 2) < mpmath.mpf(10) ** -38
        assert abs(at_zero[3] / tiny - mpmath.mpf(1) / 120) < mpmath.mpf(10) ** -38
        # exponential law with rate β (truncation negligible): κ_k = (k−1)!/β^k
        big = mpmath.mpf(10) ** 5
        far = reference_cumulants(big, 40)
        assert abs(far[0] + mpmath.log(big)) < mpmath.mpf(10) ** -35
        for k in range(1, 6):
            want = mpmath.factorial(k - 1) / big**k
            assert abs(far[k] - want) <= mpmath.mpf(10) ** -35 * want


# ---------------------------------------------------------------------------
# Fixed rates from the brief: 0, ±1e−300, ±1e−8, ±1.99, ±2.01, ±1e5 and more
# ---------------------------------------------------------------------------

FIXED_RATES = [0.0]
for _r in (1e-300, 1e-20, 1e-8, 1e-3, 0.5, 1.99, 2.0, 2.01, 5.0, 40.0, 700.0, 1e5):
    FIXED_RATES += [_r, -_r]

#: float64 relative tolerances per order (Λ, κ₁, κ₂: 1e−14; κ₃: 1e−13; κ₄: 1e−12)
NUMPY_RTOL = {0: 1e-14, 1: 1e-14, 2: 1e-14, 3: 1e-13, 4: 1e-12}


@pytest.mark.parametrize("order", ORDERS)
def test_numpy_helpers_at_fixed_rates(order):
    """Float64 Λ, κ_k agree with the defining integrals to the stated relative tolerance."""
    failures = []
    for rate in FIXED_RATES:
        want = _reference_cached(rate, 60)[order]
        got = _evaluate(gen_np, order, rate)
        assert np.isfinite(got), (order, rate, got)
        if want == 0:
            ok = got == 0
        else:
            ok = abs(mpmath.mpf(float(got)) - want) <= NUMPY_RTOL[order] * abs(want)
        if not ok:
            failures.append((rate, float(got), mpmath.nstr(want, 20)))
    assert not failures, f"order {order}: (β, numpy, reference) {failures}"


def test_numpy_helpers_vectorised_and_consistent():
    """Array arguments give the same values as scalar calls (both branches at once)."""
    rates_ = np.array(FIXED_RATES)
    for order in ORDERS:
        vector = _evaluate(gen_np, order, rates_)
        assert vector.shape == rates_.shape
        scalars = np.array([_evaluate(gen_np, order, r) for r in FIXED_RATES])
        np.testing.assert_array_equal(vector, scalars)


@pytest.mark.parametrize("dps", [15, 30, 50])
@pytest.mark.parametrize("order", ORDERS)
def test_mpmath_helpers_at_fixed_rates(order, dps):
    """The mpmath helpers are correct to (nearly) the working precision: ≤ 2⁸ ulp."""
    failures = []
    for rate in FIXED_RATES:
        want = _reference_cached(rate, 60)[order]
        mpmath.mp.dps = dps
        got = _evaluate(gen_mp, order, rate)
        tolerance = mpmath.ldexp(abs(want), 8 - mpmath.mp.prec)
        if abs(got - want) > tolerance:
            failures.append((rate, mpmath.nstr(abs(got - want) / abs(want), 3)))
    assert not failures, f"order {order} at {dps} digits: (β, relative error) {failures}"


# ---------------------------------------------------------------------------
# Random rates and precisions
# ---------------------------------------------------------------------------


def _conditioned_scale(values, order, rate):
    """|f(β)| + |β f′(β)| for f = Λ or κ_k, using dΛ/dβ = −κ₁, dκ_k/dβ = −κ_{k+1}.

    An evaluation that is correct up to a relative perturbation of β (what any
    floating-point evaluation can promise) has an error below tol·scale; this
    matters only next to a root of f (κ₄ has one near β ≈ ±2.05)."""
    return abs(values[order]) + abs(mpmath.mpf(rate) * values[order + 1])


@pytest.mark.parametrize("order", ORDERS)
@settings(max_examples=12, deadline=None)
@given(rate=rates(min_magnitude=1e-300, max_magnitude=1e5))
def test_numpy_helpers_random_rates(order, rate):
    """Float64 helpers vs the definition at log-uniform random β."""
    reference = _reference_cached(rate, 30)
    got = _evaluate(gen_np, order, rate)
    assert np.isfinite(got)
    scale = _conditioned_scale(reference, order, rate)
    error = abs(mpmath.mpf(float(got)) - reference[order])
    assert error <= NUMPY_RTOL[order] * scale, (order, rate, float(got), mpmath.nstr(reference[order], 20))


@pytest.mark.parametrize("order", ORDERS)
@settings(max_examples=12, deadline=None)
@given(rate=rates(min_magnitude=1e-60, max_magnitude=1e5), dps=precisions(min_value=15, max_value=60))
@example(rate=1e-8, dps=15)
@example(rate=-1e-3, dps=30)
@example(rate=2.5e-40, dps=50)
def test_mpmath_helpers_random_rates_and_precisions(order, rate, dps):
    """mpmath helpers at a random working precision: ≤ 2⁸ ulp of the conditioned scale."""
    reference = _reference_cached(rate, 70)
    mpmath.mp.dps = dps
    got = _evaluate(gen_mp, order, rate)
    scale = _conditioned_scale(reference, order, rate)
    assert abs(got - reference[order]) <= mpmath.ldexp(scale, 8 - mpmath.mp.prec), (
        order, rate, dps, mpmath.nstr(got, dps), mpmath.nstr(reference[order], dps))


def test_helpers_reject_orders_that_are_not_generated():
    for module in (gen_np, gen_mp):
        for bad in (0, 5, -1):
            with pytest.raises(ValueError):
                module.trunc_exp_cumulant(bad, 0.5)


def test_numpy_helpers_do_not_overflow_for_huge_negative_rates():
    """Λ(β) ≈ −β for β → −∞ is finite in float64 although e^{−β} is not."""
    with np.errstate(over="raise", invalid="raise"):
        assert gen_np.trunc_exp_log_mass(-1e5) == pytest.approx(1e5 - math.log(1e5), rel=1e-15)
        assert gen_np.trunc_exp_cumulant(1, -1e5) == pytest.approx(1 - 1e-5, rel=1e-15)


# ---------------------------------------------------------------------------
# SymPy side: definitions, identities, derivatives, series
# ---------------------------------------------------------------------------


def _exp_form(order, arg=beta):
    func = TruncExpLogMass(arg) if order == 0 else TruncExpCumulant(order, arg)
    return func.rewrite(sp.exp)


@settings(max_examples=10, deadline=None)
@given(rate=st.fractions(min_value=Fraction(-30), max_value=Fraction(30)).filter(lambda q: abs(q) > Fraction(1, 100)))
def test_exp_rewrite_is_the_definition(rate):
    """``rewrite(exp)`` of Λ and κ₁…κ₄ equals the moment integrals (evalf at 40 digits)."""
    mpmath.mp.dps = 50
    reference = reference_cumulants(mpmath.mpf(rate.numerator) / rate.denominator, 40)
    point = sp.Rational(rate.numerator, rate.denominator)
    for order in ORDERS:
        value = _exp_form(order).subs(beta, point).evalf(50)
        want = reference[order]
        assert abs(mpmath.mpf(str(value)) - want) <= mpmath.mpf(10) ** -38 * (abs(want) + abs(reference[order + 1])), order


def test_reflection_identities_simplify_to_zero():
    identities = reflection_identities()
    assert len(identities) == 2 + (MAX_CUMULANT_ORDER - 1)  # Λ, κ₁, κ₂..κ_max
    for expr in identities:
        assert expr != 0  # a real identity, not a trivially zero expression
        assert sp.simplify(expr) == 0, expr


@pytest.mark.parametrize("order", range(1, MAX_CUMULANT_ORDER))
def test_fdiff_declares_the_next_cumulant(order):
    """Symbolic d/dβ of the named functions is the documented recursion."""
    assert sp.diff(TruncExpCumulant(order, beta), beta) == -TruncExpCumulant(order + 1, beta)
    assert sp.diff(TruncExpLogMass(beta), beta) == -TruncExpCumulant(1, beta)
    # and through a chain rule
    assert sp.diff(TruncExpCumulant(order, 3 * beta**2), beta) == -6 * beta * TruncExpCumulant(order + 1, 3 * beta**2)


@settings(max_examples=8, deadline=None)
@given(rate=st.fractions(min_value=Fraction(-25), max_value=Fraction(25)).filter(lambda q: abs(q) > Fraction(1, 50)))
def test_fdiff_matches_derivative_of_exp_form(rate):
    """d/dβ κ_k.rewrite(exp) = −κ_{k+1}.rewrite(exp) numerically (k = 0 is Λ)."""
    point = sp.Rational(rate.numerator, rate.denominator)
    for order in range(0, MAX_CUMULANT_ORDER):
        lhs = sp.diff(_exp_form(order), beta).subs(beta, point).evalf(50)
        rhs = (-_exp_form(order + 1)).subs(beta, point).evalf(50)
        assert abs(lhs - rhs) <= sp.Float(10, 50) ** -40 * (abs(rhs) + abs(lhs) + sp.Float(10, 50) ** -10), order


@pytest.mark.parametrize("order", ORDERS)
def test_taylor_coefficients_match_sympy_series(order):
    """Exact Taylor coefficients of κ_k (order 0: Λ) equal SymPy's series of the
    definition log((1 − e^{−β})/β), differentiated (−1)^k d^k/dβ^k."""
    degree = 6
    definition = sp.log((1 - sp.exp(-beta)) / beta)
    # the Taylor polynomial of a derivative is the derivative of the Taylor polynomial
    series = sp.series(definition, beta, 0, degree + order + 1).removeO()
    target = sp.expand((-1) ** order * sp.diff(series, beta, order))
    expected = [target.coeff(beta, n) for n in range(degree + 1)]
    got = list(taylor_coefficients(order, degree))
    assert got == expected
    assert all(isinstance(c, sp.Rational) for c in got)


def test_taylor_coefficients_values_at_zero():
    # κ₁(0) = 1/2, κ₂(0) = 1/12, κ₄(0) = −1/120 (uniform law), Λ(0) = 0
    assert [taylor_coefficients(k, 0)[0] for k in ORDERS] == [0, sp.Rational(1, 2), sp.Rational(1, 12), 0, sp.Rational(-1, 120)]
    assert TruncExpCumulant(2, 0) == sp.Rational(1, 12)
    assert TruncExpLogMass(0) == 0


@pytest.mark.parametrize("order", ORDERS)
def test_large_rate_form_matches_definition(order):
    """The p-form (p = 1/(e^β − 1)) equals the defining integrals at β = 2, 3, 17."""
    from stumpcheck.theory.special import Q

    mpmath.mp.dps = 40
    for rate in (2, 3, 17):
        form = large_rate_form(order).subs({P: 1 / (sp.exp(rate) - 1), Q: sp.exp(-rate), beta: rate})
        want = reference_cumulants(rate, 30)[order]
        assert abs(mpmath.mpf(str(sp.N(form, 40))) - want) <= mpmath.mpf(10) ** -28 * abs(want)


@settings(max_examples=10, deadline=None)
@given(
    values=st.lists(st.fractions(min_value=-20, max_value=20, max_denominator=50), min_size=2, max_size=4),
    data=st.data(),
)
def test_softmax_weight_derivative_matches_exp_form(values, data):
    """∂w_j/∂ℓ_i from SoftmaxWeight.fdiff equals the derivative of e^{ℓ_j}/Σe^{ℓ_i}."""
    n = len(values)
    ells = sp.symbols(f"l0:{n}", real=True)
    j = data.draw(st.integers(0, n - 1), label="j")
    i = data.draw(st.integers(0, n - 1), label="i")
    weight = SoftmaxWeight(j, *ells)
    # the float values themselves, as exact rationals, so all three evaluations see one point
    numeric = [float(v) for v in values]
    point = {ell: sp.Rational(v) for ell, v in zip(ells, numeric)}
    ours = sp.diff(weight, ells[i]).rewrite(sp.exp).subs(point).evalf(50)
    theirs = sp.diff(weight.rewrite(sp.exp), ells[i]).subs(point).evalf(50)
    assert abs(ours - theirs) <= sp.Float(10, 50) ** -40 * (abs(theirs) + sp.Float(10, 50) ** -30)
    # the weights themselves: the exp form and the generated helpers
    mpmath.mp.dps = 30
    exact = mpmath.mpf(str(weight.rewrite(sp.exp).subs(point).evalf(40)))
    # float64: e^{ℓ_j − max ℓ} carries the rounding of the difference, relative eps·|ℓ_j − max ℓ|
    condition = 1 + sum(abs(ell - max(numeric)) for ell in numeric)
    assert abs(gen_np.softmax_weight(j, *numeric) - exact) <= 4 * 2.0**-53 * condition * exact
    assert abs(gen_mp.softmax_weight(j, *numeric) - exact) <= mpmath.mpf(10) ** -28 * exact


def test_softmax_weight_is_shift_free_in_float64():
    """Log-masses of size 1e5 (e^{1e5} overflows float64) give the exact weights."""
    with np.errstate(over="raise", invalid="raise"):
        w = [gen_np.softmax_weight(j, 1e5, 1e5 - math.log(3.0), -1e5) for j in range(3)]
    assert w[0] == pytest.approx(0.75, rel=1e-12)
    assert w[1] == pytest.approx(0.25, rel=1e-11)
    assert w[2] == 0.0
