"""Sampled evidence (not a proof) for the pointwise steps of Lemma E (docs/tail.md §4), at its own range b ≥ 1000.

At 1000-digit precision, e and ∇e from the generated model code and e₀ = the right-layer form
(:func:`stumpcheck.theory.asymptotics.right_layer_error`) with its SymPy derivatives, at θ in the left layer,
the bulk, the right layer, the deep layer (1 − θ ~ r/b) and θ < 0, for |w| ≤ 1. Checked: steps 1–3 and 5 of the
proof (|e − e₀| ≤ 2e^{−b/2}, ≤ 2e^{−bθ} for θ ≥ 1/2; |∂_a(e − e₀)| ≤ 8e^{−b/2}; |∂_b(e − e₀)| ≤ 27b²e^{−b/2};
|∂_a e₀| ≤ 1, |∂_b e₀| ≤ 5; for θ < 0 the bounds of ∂(e₀² − ε²)).
"""

from __future__ import annotations

from functools import cache

import mpmath as mp
import pytest
import sympy as sp

from stumpcheck.theory.asymptotics import Y, right_layer_error
from stumpcheck.theory.symbols import a, b, eps, r, theta, u, v

DPS = 1000


@cache
def _layer():
    """e₀ and its a-, b-derivatives at fixed θ, as mpmath functions of (a, b, θ)."""
    e0 = right_layer_error().subs(Y, sp.exp(v)).subs(v, b * (1 - theta)).subs(
        {r: sp.exp(b - a), eps: 1 / b})
    return tuple(sp.lambdify((a, b, theta), expr, "mpmath") for expr in (e0, sp.diff(e0, a), sp.diff(e0, b)))


def _point(b_value, w_value):
    rho = mp.mpf(3) / 2 + mp.pi**2 / 3 - 3 * mp.zeta(3)
    bb = mp.mpf(b_value)
    return bb + 2 * mp.log(bb) - rho / bb + mp.mpf(w_value) / bb, bb


@pytest.mark.parametrize("b_value", [1000, 2000])
@pytest.mark.parametrize("w_value", [-1, "0.3", 1])
def test_pointwise_steps_on_zero_one(b_value, w_value):
    from stumpcheck.numerics.generated import population_mpmath as gen

    e0_f, e0_a_f, e0_b_f = _layer()
    with mp.workdps(DPS):
        aa, bb = _point(b_value, w_value)
        r_value = mp.exp(bb - aa)
        small = mp.exp(-bb / 2)
        thetas = [mp.mpf(10) ** -5, mp.mpf(1) / bb, mp.mpf("0.3"), mp.mpf("0.5"), mp.mpf("0.7"),
                  1 - 3 / bb, 1 - 10 * r_value / bb, 1 - r_value / bb, 1 - r_value / (10 * bb), mp.mpf(1)]
        for th in thetas:
            e, e_a, e_b = gen.error_and_gradient_one_head(aa, bb, th)
            e0, e0_a, e0_b = e0_f(aa, bb, th), e0_a_f(aa, bb, th), e0_b_f(aa, bb, th)
            assert abs(e - e0) <= 2 * small
            if th >= mp.mpf(1) / 2:
                assert abs(e - e0) <= 2 * mp.exp(-bb * th)
            assert abs(e_a - e0_a) <= 8 * small
            assert abs(e_b - e0_b) <= 27 * bb**2 * small
            assert abs(e0) <= 1 and abs(e0_a) <= 1 and abs(e0_b) <= 5


@pytest.mark.parametrize("w_value", [-1, 1])
def test_pointwise_steps_below_zero(w_value):
    e0_f, e0_a_f, e0_b_f = _layer()
    with mp.workdps(DPS):
        aa, bb = _point(1000, w_value)
        for th in (mp.mpf("-0.001"), mp.mpf("-0.1"), mp.mpf(-1)):
            v_value = bb * (1 - th)
            e0, e0_a, e0_b = e0_f(aa, bb, th), e0_a_f(aa, bb, th), e0_b_f(aa, bb, th)
            p_value = 1 - bb * e0
            assert 0 <= p_value <= 4 * v_value * mp.exp(-v_value)
            # ∂_x(e₀² − ε²) = 2 e₀ e₀_x (− 2ε·∂_bε = +2ε³ for x = b)
            assert abs(2 * e0 * e0_a) <= 2 * p_value / bb**2
            assert abs(2 * e0 * e0_b + 2 / bb**3) <= 12 * p_value * v_value / bb**3


@pytest.mark.slow
@pytest.mark.parametrize("b_value,w_value", [(40, -1), (60, 1)])
def test_the_rest_E_is_far_below_the_lemma(b_value, w_value):
    """E_a = L_a + rF_r and E_b = L_b + ε²F_ε − rF_r from 60-digit θ-quadrature (outside the lemma's range
    b ≥ 1000, where they are still measurable): below 29b²e^{−b/2}, and of the size b^{−1}e^{−b} or less."""
    from stumpcheck.numerics.population.quantities import loss_gradient
    from stumpcheck.theory import tail
    from stumpcheck.theory.tail_series import K, analytic_value

    kval, kt = analytic_value("K")
    F = tail.loss_F().replace(lambda n: isinstance(n, K), lambda n: kval.subs(kt, n.args[0]))
    f_eps = sp.lambdify((eps, r), sp.diff(F, eps), "mpmath")
    rf_r = sp.lambdify((eps, r), r * sp.diff(F, r), "mpmath")
    with mp.workdps(60):
        aa, bb = _point(b_value, w_value)
        la, lb = loss_gradient(aa, bb)
        e, r_value = 1 / bb, mp.exp(bb - aa)
        e_a = la + rf_r(e, r_value)
        e_b = lb + e**2 * f_eps(e, r_value) - rf_r(e, r_value)
        for value in (e_a, e_b):
            assert abs(value) <= 29 * bb**2 * mp.exp(-bb / 2)
            assert abs(value) <= mp.exp(-bb) / bb


def test_the_identities_constants_and_pointwise_inequalities_of_the_proof_hold_by_sympy():
    """Lemma E's steps (theory/tail_lemma_e.py, tail_lemma_e_bounds.py): every identity, every inequality between
    constants on b ≥ 1000 and every pointwise inequality, decided by SymPy, not sampled."""
    from stumpcheck.theory.tail_lemma_e import lemma_e_checks

    checks = lemma_e_checks()
    assert len(checks) == 52 and all(checks.values()), [name for name, ok in checks.items() if not ok]


def test_the_sympy_checks_can_fail():
    from stumpcheck.theory import tail_lemma_e as lemma

    assert not lemma._holds_for_b_at_least_1000(14 * b**2, 13 * b**2)
    assert not lemma._holds_for_b_at_least_1000(b**2 + 10**7, b**2 + b)  # false at b = 1000, true later
    assert not lemma._decreasing_and_small(27 * b**2, sp.Rational(1, 1000), 1)  # small rate: not ≤ 1 at 1000
    assert not lemma._decreasing_and_small(b**3000, sp.Rational(1, 2), 1)  # grows on [1000, 6000]
    big_u, big_a, n, d1, d2 = lemma._pieces()
    assert not lemma._is_zero(sp.diff(sp.log(n / d1), r) * r - (r * u / n + r / d1))  # a sign flipped


def test_the_pointwise_checks_can_fail():
    """Each relaxation dropped or each bound tightened past the truth makes its check fail."""
    from stumpcheck.theory import tail_lemma_e_bounds as bounds

    assert not bounds._at_most(v + 2 * r, bounds._D1, bounds._EXP_V)  # D₁ ≥ v + 2r is false for small α
    assert not bounds._at_most(bounds._N, 2 * b, {v: b - u})  # N ≤ 2b needs r ≤ 2ε²
    assert not bounds._at_most(v + r, bounds._D2, bounds._EXP_V, bounds._BU_HALF)  # only v + r/2
    assert not bounds._at_most(bounds._Ev, 2 * bounds._A, bounds._EXP_V)  # e^v ≤ 2A needs v ≥ 1
    assert not bounds._at_most(sp.Integer(1), 2 * b * r * u, {u: b / 4 + bounds._mu}, bounds._R_LOW)  # θ ≥ ¼ only
    assert not bounds._nonnegative(u - v) and bounds._nonnegative(u * v)
