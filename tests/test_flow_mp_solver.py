"""The extrapolated linearly implicit Euler solver and the log-scale coordinates of the D-digit flow.

* Convergence order: fixed-step global error on the non-autonomous system of test_ode, at 30 digits
  (order 7 reaches errors far below float64's), fitted slope equals the claimed order.
* Stability on the negative real axis (the flow's Jacobian has real eigenvalues): |R(z)| ≤ 1 and
  R(z) → 0 as z → −∞, so a stiff transient is gone after one step.
* :class:`LogScaleField`: the coordinates round-trip, and its linearization is the derivative of its
  field (central differences at 40 digits on a field with a known Jacobian).
* A short 20-digit population flow with the extrapolation solver (in the log-scale coordinates) agrees
  with the Rodas3 one.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.flow.field_mp import LogScaleField
from stumpcheck.numerics.flow.ode import (FLOAT64, EulerExtrapolation, Extrapolation7, MPArithmetic, PIController, Status,
                               diffeqsolve)
from stumpcheck.numerics.flow.population_flow import quadrature_agreement, quadrature_order_for, run_population_flow
from tests.test_ode import _fixed_steps, _prothero_robinson


@pytest.mark.parametrize("order, coarsest", [(4, 16), (7, 16)])
def test_convergence_order_at_30_digits(order, coarsest):
    """Differences of the fixed-step solutions at n, 2n, 4n, 8n steps over [0, 1] (n = ``coarsest``)
    shrink as n^−order: fitted slope within 0.3 of the order."""
    solver = EulerExtrapolation(order)
    ar = MPArithmetic(30)
    solutions = [_fixed_steps(solver, coarsest * 2 ** k, ar) for k in range(4)]
    with ar.working():
        differences = np.array([float(max(abs(x - y) for x, y in zip(p, q)))
                                for p, q in zip(solutions, solutions[1:])])
    slope = -np.polyfit(np.log(2.0 ** np.arange(3)), np.log(differences), 1)[0]
    assert abs(slope - order) <= 0.3, (slope, differences)
    if order == 7:
        assert differences[-1] < 1e-15  # beyond float64: the solve is really at 30 digits


def _stability_function(solver, z, ar):
    """R(z): one step of y' = λy from y = 1 with h = 1, λ = z, exact Jacobian."""
    with ar.working():
        lam = ar.scalar(z)
        dtype = float if ar is FLOAT64 else object
        y1, _, _ = solver.step(lambda s, y: ar.array([lam * y[0]]), ar.scalar(0), ar.array([1]), ar.scalar(1),
                               ar.array([lam]), (np.array([[lam]], dtype=dtype), ar.array([0])), ar)
        return y1[0]


@settings(max_examples=40, deadline=None)
@given(log_z=st.floats(min_value=-4, max_value=15), order=st.integers(min_value=2, max_value=9))
def test_stable_on_the_negative_real_axis(log_z, order):
    """|R(z)| ≤ 1 for z = −10^log_z ∈ [−10¹⁵, −10⁻⁴] (harmonic sequence, orders 2–9)."""
    value = _stability_function(EulerExtrapolation(order), -10.0 ** log_z, MPArithmetic(30))
    assert abs(value) <= 1


def test_stiff_components_vanish():
    """R(z) → 0 as z → −∞ (each T_j1 has R = (1 − z/n_j)^{−n_j}), and a Prothero–Robinson problem with
    λ = −10⁶ is followed in steps set by its smooth solution, with the error at the tolerance."""
    ar = MPArithmetic(30)
    assert abs(_stability_function(Extrapolation7, -1e12, ar)) < 1e-10
    field, linearization = _prothero_robinson(-1e6)
    sol = diffeqsolve(field, Extrapolation7, 0.0, 2.0, [0.0], controller=PIController(rtol=1e-8, atol=1e-10),
                      linearization=linearization)
    assert sol.status is Status.SUCCESS
    assert abs(sol.ys[-1, 0] - math.sin(2.0)) <= 1e-8
    assert sol.accepted + sol.rejected <= 40, (sol.accepted, sol.rejected)


def test_rejects_bad_orders_and_sequences():
    for kwargs in ({"order": 1}, {"order": 3, "steps": (1, 2)}, {"order": 3, "steps": (1, 3, 2)}):
        with pytest.raises(ValueError):
            EulerExtrapolation(**kwargs)
    assert Extrapolation7.evaluations_per_step == 21


class _KnownField:
    """f(s, z) = e^s·(−a b + sin b, a − b²) with its exact (f, ∂f/∂z, ∂f/∂s)."""

    def __call__(self, s, z):
        a, b = z
        return np.array([mpmath.exp(s) * (-a * b + mpmath.sin(b)), mpmath.exp(s) * (a - b * b)], dtype=object)

    def linearization(self, s, z):
        a, b = z
        scale = mpmath.exp(s)
        jac = np.array([[-b * scale, (-a + mpmath.cos(b)) * scale], [scale, -2 * b * scale]], dtype=object)
        value = self(s, z)
        return value, jac, value


@settings(max_examples=20, deadline=None)
@given(a=st.floats(min_value=-50, max_value=2000), b=st.floats(min_value=0.1, max_value=2000),
       s=st.floats(min_value=0, max_value=5))
@example(a=1137.0, b=1137.0, s=0.0)
def test_log_scale_linearization_is_the_derivative_of_its_field(a, b, s):
    # central differences in v = log b: the truncation error h²·|∂³g/∂v³|/6 reaches b³ ≈ 10¹⁰ times h²
    # (the sin(e^v) term), so h = 1e-15 at 50 digits (rounding 1e-35) keeps it below 1e-19
    field = LogScaleField(_KnownField())
    with mpmath.workdps(50):
        w = field.to_coordinates((a, b))
        back = field.from_coordinates(w)
        assert abs(back[0] - a) <= 1e-35 * max(1, abs(a)) and abs(back[1] - b) <= 1e-35 * b
        value, jac, g_s = field.linearization(mpmath.mpf(s), w)
        step = mpmath.mpf(10) ** -15
        for j in range(2):
            plus, minus = w.copy(), w.copy()
            plus[j] += step
            minus[j] -= step
            column = (field(mpmath.mpf(s), plus) - field(mpmath.mpf(s), minus)) / (2 * step)
            for i in range(2):
                assert abs(column[i] - jac[i, j]) <= 1e-18 * (1 + abs(jac[i, j]))
        dsv = (field(mpmath.mpf(s) + step, w) - field(mpmath.mpf(s) - step, w)) / (2 * step)
        assert all(abs(x - y) <= 1e-18 * (1 + abs(y)) for x, y in zip(dsv, g_s))


def test_log_scale_rejects_states_outside_the_domain():
    with pytest.raises(ArithmeticError):
        LogScaleField.to_coordinates((1.0, 0.0))


@pytest.mark.filterwarnings("ignore::stumpcheck.numerics.flow.stiffness.StiffnessWarning")  # dopri5 is the reference on a short, tight solve
def test_short_mp_flow_extrapolation_matches_float64_dopri5():
    """(10, 10) → t = 0.01 at 20 digits, rtol 1e-10, with the extrapolation solver (log-scale
    coordinates) against the float64 Dopri5 flow at rtol 1e-12: both are accurate to ~1e-10, so their
    final a and b agree to 1e-9 relative; the coordinates are recorded, the precision restored."""
    before = mpmath.mp.prec
    ext = run_population_flow(10.0, 10.0, 0.01, rtol=1e-10, dps=20, solver="extrapolation", check=False,
                              per_decade=1)
    ref = run_population_flow(10.0, 10.0, 0.01, rtol=1e-12, solver="dopri5", check=False, per_decade=1)
    assert mpmath.mp.prec == before
    assert ext.status.ok and ref.status.ok
    assert ext.settings["state_coordinates"] == "u = a - b, v = log b"
    for key, value in (("final_a", ref.a[-1]), ("final_b", ref.b[-1])):
        x = mpmath.mpf(ext.stats[key])
        assert abs(x - value) / abs(value) <= 1e-9, (key, x, value)
    assert ext.stats["quadrature_check_digits_end"] >= 22


def test_refined_quadrature_order_passes_its_check_and_the_one_below_fails():
    """The bisected order is no larger than the ladder's, its own two-order check passed (the digits
    returned are its agreement), and the order below it fails (it is the smallest above the last
    failing rung)."""
    n, digits = quadrature_order_for(10.0, 10.0, 30, rhs="arb")
    ladder, _ = quadrature_order_for(10.0, 10.0, 30, rhs="arb", refine=False)
    assert n <= ladder and digits >= 32
    assert quadrature_agreement(10.0, 10.0, 30, n, rhs="arb") == digits
    if n > 10:
        assert quadrature_agreement(10.0, 10.0, 30, n - 1, rhs="arb") < 32
