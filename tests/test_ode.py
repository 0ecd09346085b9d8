"""The Rosenbrock solvers and the precision contexts of stumpcheck.numerics.flow.ode.

* Convergence order: fixed-step global error on a non-autonomous nonlinear
  system, fitted slope of log error against log h equals the claimed order.
* Stiff decay (Prothero–Robinson y' = λ(y − g) + g', exact solution g): with
  λ = −10⁶ an L-stable method takes steps set by g alone (few steps, error at
  the tolerance), while an explicit pair is stability-limited.
* The same solve in float64 and in mpmath at 30 digits agrees to float64
  accuracy, and at 30 digits Rodas3 (exact rational coefficients) reaches
  errors far below float64's.
* The mpmath precision is restored after a solve.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from stumpcheck.numerics.flow.ode import (FLOAT64, Dopri5, MPArithmetic, PIController, Rodas3, Rodas4, SaveAt, Status,
                          diffeqsolve)


def _system(ar):
    """y₁' = −y₁² y₂ + cos s, y₂' = y₁ − y₂ with its exact linearization (f, ∂f/∂y, ∂f/∂s)."""
    cos = math.cos if ar is FLOAT64 else mpmath.cos
    sin = math.sin if ar is FLOAT64 else mpmath.sin

    def field(s, y):
        return ar.array([-y[0] ** 2 * y[1] + cos(s), y[0] - y[1]])

    def linearization(s, y):
        jac = np.array([[-2 * y[0] * y[1], -y[0] ** 2], [1 + 0 * y[0], -1 + 0 * y[0]]],
                       dtype=float if ar is FLOAT64 else object)
        return field(s, y), jac, ar.array([-sin(s), 0])

    return field, linearization


def _fixed_steps(solver, n, ar=FLOAT64, s1=1.0):
    field, linearization = _system(ar)
    with ar.working():
        y = ar.array([1, mpmath.mpf(1) / 2 if ar is not FLOAT64 else 0.5])
        h = ar.scalar(s1) / n
        s = ar.scalar(0)
        for _ in range(n):
            f0, jac, f_s = linearization(s, y)
            y, _, _ = solver.step(field, s, y, h, f0, (jac, f_s), ar)
            s = s + h
        return y


@pytest.mark.parametrize("solver", [Rodas3, Rodas4], ids=lambda s: s.name.split()[0])
def test_convergence_order(solver):
    """Global error at h = 1/16 … 1/128 against h = 1/2048: slope within 0.15 of the order."""
    reference = _fixed_steps(solver, 2048)
    steps = np.array([16, 32, 64, 128])
    errors = np.array([np.max(np.abs(_fixed_steps(solver, n) - reference)) for n in steps])
    slope = -np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert abs(slope - solver.order) <= 0.15, (slope, errors)


def _prothero_robinson(lam, ar=FLOAT64):
    sin = math.sin if ar is FLOAT64 else mpmath.sin
    cos = math.cos if ar is FLOAT64 else mpmath.cos

    def field(s, y):
        return ar.array([lam * (y[0] - sin(s)) + cos(s)])

    def linearization(s, y):
        return field(s, y), np.array([[ar.scalar(lam)]], dtype=float if ar is FLOAT64 else object), \
            ar.array([-lam * cos(s) - sin(s)])

    return field, linearization


@pytest.mark.parametrize("solver", [Rodas3, Rodas4], ids=lambda s: s.name.split()[0])
def test_stiff_decay(solver):
    """λ = −10⁶: the L-stable pair follows y = sin s in few steps; Dopri5 needs ≳ |λ|·2/3.3 steps."""
    field, linearization = _prothero_robinson(-1e6)
    controller = PIController(rtol=1e-6, atol=1e-8)
    sol = diffeqsolve(field, solver, 0.0, 2.0, [0.0], controller=controller, linearization=linearization)
    assert sol.status is Status.SUCCESS
    assert abs(sol.ys[-1, 0] - math.sin(2.0)) <= 1e-5
    assert sol.accepted + sol.rejected <= 100, (sol.accepted, sol.rejected)
    explicit = diffeqsolve(field, Dopri5, 0.0, 0.01, [0.0], controller=controller)
    # stability of Dopri5 needs h·|λ| ≲ 3.3: over 0.01 at least ~3000 steps
    assert explicit.accepted >= 2000, explicit.accepted


def test_stiff_transient_is_damped():
    """Start off the slow manifold (y(0) = 1): after one step of length 1 the fast mode e^{λs}
    (λ = −10⁸) is gone in an L-stable method (R(∞) = 0), so y ≈ sin 1 to O(h^p/|λ|)."""
    field, linearization = _prothero_robinson(-1e8)
    for solver in (Rodas3, Rodas4):
        y0 = np.array([1.0])
        f0, jac, f_s = linearization(0.0, y0)
        y1, _, _ = solver.step(field, 0.0, y0, 1.0, f0, (jac, f_s))
        assert abs(y1[0] - math.sin(1.0)) <= 1e-6, (solver.name, y1)


def test_mp_arithmetic_matches_float64_and_goes_beyond():
    """Rodas3 at 30 digits: equals the float64 solve to ~1e-13, and from h = 1/128 to 1/512
    the differences shrink by 2³ per halving (the solve is really in mpmath, not rounded to float64)."""
    ar = MPArithmetic(30)
    y_mp = _fixed_steps(Rodas3, 64, ar)
    y_fl = _fixed_steps(Rodas3, 64)
    assert all(isinstance(v, mpmath.mpf) for v in y_mp)
    assert np.max(np.abs(np.array([float(v) for v in y_mp]) - y_fl)) <= 1e-13
    fine, finer, finest = (_fixed_steps(Rodas3, n, ar) for n in (128, 256, 512))
    with ar.working():
        d1 = max(abs(x - y) for x, y in zip(fine, finer))
        d2 = max(abs(x - y) for x, y in zip(finer, finest))
    assert d2 < 1e-7
    assert 6 <= d1 / d2 <= 10, float(d1 / d2)


def test_mp_solve_restores_precision_and_lands_on_times():
    before = mpmath.mp.prec
    ar = MPArithmetic(25)
    field, linearization = _prothero_robinson(-10, ar)
    with ar.working():
        s1 = mpmath.mpf(1)
    sol = diffeqsolve(field, Rodas3, 0, s1, [0], controller=PIController(rtol=1e-7, atol=1e-9),
                      saveat=SaveAt(ts=(0.5,)), linearization=linearization, arithmetic=ar)
    assert mpmath.mp.prec == before
    assert sol.status is Status.SUCCESS
    assert sol.ts[-1] == s1 and len(sol.ts) == 3
    with mpmath.workdps(25):
        assert abs(sol.ys[-1][0] - mpmath.sin(1)) < 1e-6


def test_rosenbrock_needs_linearization():
    field, _ = _prothero_robinson(-1.0)
    with pytest.raises(ValueError, match="linearization"):
        diffeqsolve(field, Rodas4, 0.0, 1.0, [0.0])


def test_stage_outside_domain_is_a_rejected_step():
    """A field undefined for y < 0 (√y): a too-long first step is rejected and retried, not fatal."""
    def field(s, y):
        if y[0] < 0:
            raise ArithmeticError("outside the domain")
        return np.array([-10 * math.sqrt(y[0])])

    def linearization(s, y):
        return field(s, y), np.array([[-5 / math.sqrt(y[0])]]), np.array([0.0])

    # exact: y = (1 − 5s)² until s = 0.2
    sol = diffeqsolve(field, Rodas4, 0.0, 0.15, [1.0], controller=PIController(rtol=1e-8, atol=1e-10, h0=1.0),
                      linearization=linearization)
    assert sol.status is Status.SUCCESS
    assert sol.rejected >= 1
    assert sol.ys[-1, 0] == pytest.approx((1 - 5 * 0.15) ** 2, rel=1e-6)
