"""The one-pass generated functions (error_and_gradient_<est>, error_jet_<est>) against the per-quantity ones.

They are differentiated from the sign-free-rate form of e and share every
subexpression, so they are a different formula for the same numbers: the
three targets (numpy, mpmath, Arb) must agree with e, ∇e, ∇²e to rounding.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from flint import arb, ctx
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.generated import population_numpy as gen_np

ESTIMATORS = ("one_head", "reflected", "averaged", "pooled")


def _separate(module, tag, a, b, theta):
    return (getattr(module, f"error_{tag}")(a, b, theta), *getattr(module, f"error_gradient_{tag}")(a, b, theta),
            *getattr(module, f"error_hessian_{tag}")(a, b, theta))


points = st.tuples(st.floats(-50, 1500), st.floats(0.5, 1000), st.floats(0, 1))


@settings(max_examples=60, deadline=None)
@given(point=points, tag=st.sampled_from(ESTIMATORS))
def test_mpmath_one_pass_agrees_with_separate_functions(point, tag):
    with mpmath.workdps(40):
        a, b, theta = (mpmath.mpf(v) for v in point)  # the mpmath code wants mpf (floats would multiply as floats)
        jet = getattr(gen_mp, f"error_jet_{tag}")(a, b, theta)
        first = getattr(gen_mp, f"error_and_gradient_{tag}")(a, b, theta)
        separate = _separate(gen_mp, tag, a, b, theta)
        # relative to each component, with a floor at the size of the O(1) terms it is formed from
        for got, want in zip(jet, separate):
            assert abs(got - want) <= mpmath.mpf(10) ** -30 * (abs(want) + mpmath.mpf(10) ** -8)
        for got, want in zip(first, jet[:3]):
            assert abs(got - want) <= mpmath.mpf(10) ** -30 * (abs(want) + mpmath.mpf(10) ** -8)


@settings(max_examples=60, deadline=None)
@given(point=points, tag=st.sampled_from(ESTIMATORS))
def test_numpy_one_pass_agrees_with_mpmath(point, tag):
    """Scale-relative: each component against the largest |component| on a small θ-grid around θ."""
    a, b, theta = point
    thetas = np.clip(theta + np.linspace(-0.01, 0.01, 5), 0.0, 1.0)
    jet = np.array(getattr(gen_np, f"error_jet_{tag}")(a, b, thetas))
    with mpmath.workdps(40):
        ref = np.array([[float(v) for v in getattr(gen_mp, f"error_jet_{tag}")(
            mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(float(t)))] for t in thetas]).T
    # plus 1e-14 absolute: components formed from O(1) terms carry their rounding (∂e/∂b ≈ 1e-20 at b = 1, θ = 0)
    scale = np.max(np.abs(ref), axis=1)
    assert np.all(np.abs(jet - ref) <= 1e-11 * scale[:, None] + 1e-14)


@pytest.mark.parametrize("tag", ["one_head", "averaged"])
def test_numpy_one_minus_theta_argument_is_used(tag):
    """At b = 1000 on the calibration relation the one-head switch layer sits at 1 − θ ≈ 2e-10.
    Given 1 − θ exactly, the values at θ = 1 − r match 40 digits to 1e-12 of their scale; formed
    from the rounded θ they are off by 1e-7 (measured), so the argument must really be used."""
    a, b = 1015.3155, 1000.0
    rest = np.array([5e-11, 1e-10, 2e-10, 3e-10, 5e-10])
    theta = 1.0 - rest
    implicit = np.array(getattr(gen_np, f"error_jet_{tag}")(a, b, theta))
    explicit = np.array(getattr(gen_np, f"error_jet_{tag}")(a, b, theta, rest))
    with mpmath.workdps(40):
        ref = np.array([[float(v) for v in getattr(gen_mp, f"error_jet_{tag}")(
            mpmath.mpf(a), mpmath.mpf(b), 1 - mpmath.mpf(float(r)))] for r in rest]).T
    scale = np.max(np.abs(ref), axis=1)[:, None]
    assert np.max(np.abs(explicit - ref) / scale) <= 1e-12
    assert np.max(np.abs(implicit - ref) / scale) > 1e-9


@pytest.mark.parametrize("tag", ESTIMATORS)
def test_arb_one_pass_contains_the_mpmath_values(tag):
    with ctx.workprec(200):
        for a, b, theta in [(25, 20, "0.95"), (600, 1000, "0.3"), (-3, 50, "0.999")]:
            balls = getattr(gen_arb, f"error_jet_{tag}")(arb(a), arb(b), arb(theta))
            with mpmath.workdps(60):
                ref = getattr(gen_mp, f"error_jet_{tag}")(a, b, mpmath.mpf(theta))
                for ball, want in zip(balls, ref):
                    assert ball.real.contains(arb(mpmath.nstr(want, 55))) or \
                        abs(mpmath.mpf(ball.real.mid().str(60, radius=False)) - want) <= 10 ** -45 * (1 + abs(want))


def test_trunc_exp_jet_matches_mpmath_on_both_sides_of_the_taylor_switch():
    """Λ, κ_1..κ_4 from one trunc_exp_jet call against 30 digits, β from 1e-12 to 700: as accurate
    as the single functions (≤ 1e-14 relative: the large-rate forms of κ_3, κ_4 just above the
    switch |β| = 2 cancel to 6.5e-15), and equal to them to 1e-15 relative. κ_4 (not used by e,
    ∇e, ∇²e) has a zero near |β| = 2.7 and cancels 100-fold at |β| = 2: it is compared relative to
    max(|κ_4|, 0.01), to 5e-14."""
    beta = np.concatenate([np.linspace(-3, 3, 601), np.logspace(-12, 2.85, 120), -np.logspace(-12, 2.85, 120)])
    jet = gen_np.trunc_exp_jet(beta, 4)
    with mpmath.workdps(30):
        for order, values in enumerate(jet):
            function = (lambda x: gen_mp.trunc_exp_log_mass(x)) if order == 0 else \
                (lambda x, k=order: gen_mp.trunc_exp_cumulant(k, x))
            ref = np.array([float(function(mpmath.mpf(float(x)))) for x in beta])
            floor = 1e-2 if order == 4 else 1e-300
            rel = np.abs(values - ref) / np.maximum(np.abs(ref), floor)
            assert rel.max() <= (5e-14 if order == 4 else 1e-14), (order, beta[np.argmax(rel)])
            single = gen_np.trunc_exp_log_mass(beta) if order == 0 else gen_np.trunc_exp_cumulant(order, beta)
            assert np.all(np.abs(values - single) <= 1e-15 * np.maximum(np.abs(ref), floor))
    assert gen_np.trunc_exp_jet(np.array([[0.5, -0.5]]), 2)[1].shape == (1, 2)


@pytest.mark.parametrize("beta", ["0.3", "-0.7", "1.5", "-2.5", "40", "-40", "0"])
def test_arb_trunc_exp_jet_overlaps_the_single_functions(beta):
    """Every branch (series, exp(−β) form, reflection): the jet's balls and the single functions'
    balls both contain the 60-digit mpmath values."""
    with ctx.workprec(150):
        jet = gen_arb.trunc_exp_jet(arb(beta), 3)
        with mpmath.workdps(60):
            for order, ball in enumerate(jet):
                single = gen_arb.trunc_exp_log_mass(arb(beta)) if order == 0 else \
                    gen_arb.trunc_exp_cumulant(order, arb(beta))
                exact = gen_mp.trunc_exp_log_mass(mpmath.mpf(beta)) if order == 0 else \
                    gen_mp.trunc_exp_cumulant(order, mpmath.mpf(beta))
                point = arb(mpmath.nstr(exact, 58))
                assert ball.real.overlaps(point) and single.real.overlaps(point), (order, ball, exact)
                assert ball.rad() < 1e-40
