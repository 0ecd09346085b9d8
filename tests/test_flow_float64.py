"""The float64 flow at the cost of its field: the compiled one-head field and scipy's stiff solvers.

* stumpcheck.numerics.population.one_head_float64: the closed-form switch point against the mpmath root of
  z(θ) = 0; L, ∇L, ∇²L against the generated-code quadrature (24 points a piece) and against
  30-digit references; the default 8-point rule against 24 points along the flow.
* stumpcheck.numerics.flow.stiff_float64 through run_population_flow: LSODA, BDF and Radau against Rodas4,
  the default float64 flow to t = 10¹² against the 30-digit reference, and the solve's statuses.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.flow.field import PopulationFlowField
from stumpcheck.numerics.flow.ode import SaveAt, Status
from stumpcheck.numerics.flow.stiff_float64 import SCIPY_METHODS, solve_scipy
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.population import one_head_float64 as kernel
from stumpcheck.numerics.population.quadrature import one_head_log_odds, transition_point
from stumpcheck.numerics.population.quantities import _gauss_legendre_float64, loss_gradient_hessian_float64
from stumpcheck.numerics.precision import InputError

#: b = 1187.83397129676224326345186483 at t = 10¹², rtol 1e-9 (benchmarks/README.md), 30 digits.
REFERENCE_B_1E12 = 1187.83397129676224326345186483

# states the flow from (10, 10) passes through, on and off the calibration relation
FLOW_STATES = [(10.0, 10.0), (25.0, 20.0), (float(derived.calibration_a(100.0)), 100.0),
               (float(derived.calibration_a(1200.0)), 1200.0), (3.0, 50.0), (-5.0, 2.0)]


def _relative(x, y, scale):
    return np.max(np.abs(np.asarray(x) - np.asarray(y))) / scale


@given(a=st.floats(-50, 400), b=st.floats(1e-2, 2e3))
@settings(max_examples=40, deadline=None)
def test_switch_point_is_the_root_of_the_log_odds(a, b):
    """θ* and 1 − θ* in closed form match the bisection root in the logit (80 bits) to 1e-13 relative,
    each (no cancellation in either), and the width matches 1/|z′(θ*)| to 1e-12."""
    theta, rest, width = kernel.switch_point(a, b)
    ref_theta, ref_rest, ref_width = transition_point(a, b)
    if ref_rest > 1e-290 and ref_theta > 1e-290:  # bisection range ±4000 in the logit covers these
        assert theta == pytest.approx(float(ref_theta), rel=1e-13)
        assert rest == pytest.approx(float(ref_rest), rel=1e-13)
        assert width == pytest.approx(float(ref_width), rel=1e-12)


@pytest.mark.parametrize("a_b", [(10.0, 10.0), (1213.8, 1200.0), (400.0, 100.0), (-20.0, 30.0)])
def test_switch_point_zeroes_the_log_odds(a_b):
    """z(θ*) at 50 digits, from the returned (θ*, 1 − θ*), is zero to the rounding of θ* (|z′|·|δθ*|) and of
    a − b (the closed form subtracts log(e^b − 1) and log(1 + e^a), each rounded to an ulp of max(|a|, b))."""
    theta, rest, width = kernel.switch_point(*a_b)
    with mpmath.workdps(50):
        value = one_head_log_odds(mpmath.mpf(a_b[0]), mpmath.mpf(a_b[1]), mpmath.mpf(theta), mpmath.mpf(rest))
    # one ulp of min(θ*, 1 − θ*) moves z by about ulp/width
    assert abs(float(value)) <= 8 * 2.0 ** -52 * min(theta, rest) / width + 4 * math.ulp(max(abs(a_b[0]), a_b[1]))


@given(a=st.floats(-30, 300), b=st.floats(1e-3, 3e3))
@settings(max_examples=15, deadline=None)
def test_compiled_field_matches_the_generated_quadrature(a, b):
    """The compiled L, ∇L, ∇²L (24 points a piece) agree with the generated-code quadrature on the same kind
    of breakpoints to 1e-10 of each quantity's largest component (both are float64 to ~b·2⁻⁵³ + 1e-11)."""
    value, grad, hess = kernel.loss_gradient_hessian(a, b, order=24)
    ref_value, ref_grad, ref_hess = loss_gradient_hessian_float64(a, b)
    assert value == pytest.approx(ref_value, rel=1e-10, abs=1e-300)
    assert _relative(grad, ref_grad, np.max(np.abs(ref_grad)) + 1e-300) <= 1e-10
    assert _relative(hess, ref_hess, np.max(np.abs(ref_hess)) + 1e-300) <= 1e-10


@pytest.mark.parametrize("a_b", FLOW_STATES[1:4] + [(-5.0, 2.0)])
def test_compiled_field_against_30_digits(a_b):
    """The default rule (16 points a piece) against 30-digit values (30-point Gauss–Legendre with the Arb
    integrand on the mpmath breakpoints, which two orders show converged to > 25 digits): L and each
    component of ∇L, ∇²L to 1e-12 relative."""
    from stumpcheck.numerics.certified.enclosures.arb_quadrature import loss_gradient_hessian_arb

    a, b = a_b
    value, grad, hess = kernel.loss_gradient_hessian(a, b)
    with mpmath.workdps(30):
        ref = loss_gradient_hessian_arb(a, b, order=30)
        check = loss_gradient_hessian_arb(a, b, order=36)
        ref_hess = np.array([[float(x) for x in row] for row in ref.hessian])
        assert abs(ref.loss - check.loss) <= 1e-25 * abs(ref.loss)
        assert np.allclose(ref_hess, np.array([[float(x) for x in row] for row in check.hessian]), rtol=1e-25, atol=0)
        ref_value, ref_grad = float(ref.loss), np.array([float(x) for x in ref.gradient])
    assert value == pytest.approx(ref_value, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12)
    np.testing.assert_allclose(hess, ref_hess, rtol=1e-12)


@pytest.mark.parametrize("a_b", FLOW_STATES + [(float(derived.calibration_a(1e5)), 1e5)])
def test_default_order_is_enough_along_the_flow(a_b):
    """The default rule agrees with 40 points a piece (ratio-2 ladders) to 2e-14 of the largest component
    of ∇L and of ∇²L where the flow goes: below the field's rounding (~b·2⁻⁵³)."""
    _, grad, hess = kernel.loss_gradient_hessian(*a_b)
    _, ref_grad, ref_hess = kernel.loss_gradient_hessian(*a_b, order=40, growth=2.0)
    assert _relative(grad, ref_grad, np.max(np.abs(ref_grad))) <= 2e-14
    assert _relative(hess, ref_hess, np.max(np.abs(ref_hess))) <= 2e-14


def test_reflected_field_is_the_one_head_field():
    """e′(θ) = −e(1 − θ), so under Uniform[0, 1] the reflected L, ∇L, ∇²L (generated reflected code) are
    the one-head ones (the compiled kernel serves both)."""
    for a, b in FLOW_STATES[:4]:
        _, grad, hess = _gauss_legendre_float64(a, b, "reflected", (0, 1), 24, True)
        _, ours_grad, ours_hess = kernel.loss_gradient_hessian(a, b)
        assert _relative(ours_grad, grad, np.max(np.abs(grad))) <= 1e-11
        assert _relative(ours_hess, hess, np.max(np.abs(hess))) <= 1e-11


def test_field_outside_the_domain_raises_arithmetic_error():
    field = PopulationFlowField()
    for z in ([10.0, 0.0], [10.0, -1.0], [math.nan, 10.0], [10.0, math.inf]):
        with pytest.raises(ArithmeticError):
            field(0.0, z)


@pytest.mark.parametrize("solver", sorted(SCIPY_METHODS))
def test_scipy_solvers_match_rodas4(solver):
    """LSODA, BDF and Radau (exact Jacobian) end where Rodas4 does at t = 10⁴, all at rtol 1e-10, to 1e-8."""
    from stumpcheck.numerics.flow.run import run_population_flow

    ours = run_population_flow(10.0, 10.0, 1e4, rtol=1e-10, solver=solver, check=False, per_decade=1)
    ref = run_population_flow(10.0, 10.0, 1e4, rtol=1e-10, solver="rodas4", check=False, per_decade=1)
    assert ours.status.ok and ours.settings["solver"].startswith("scipy")
    np.testing.assert_array_equal(ours.t, ref.t)
    np.testing.assert_allclose(ours.b, ref.b, rtol=1e-8)
    np.testing.assert_allclose(ours.a, ref.a, rtol=1e-8)


def test_default_float64_flow_reaches_the_30_digit_reference():
    """From (10, 10) to t = 10¹² at the CLI's rtol 1e-8 (default solver, with the rtol/10 check): final b
    within 1e-9 relative of the 30-digit flow; the check's estimate is positive and below 1e-8."""
    from stumpcheck.numerics.flow.run import run_population_flow

    run = run_population_flow(10.0, 10.0, 1e12, rtol=1e-8, per_decade=1)
    assert run.status.ok and run.t[-1] == pytest.approx(1e12, rel=1e-12)
    assert abs(run.b[-1] - REFERENCE_B_1E12) / REFERENCE_B_1E12 <= 1e-9
    assert 0 < run.a_posteriori_rel_error_b < 1e-8


def test_scipy_solve_statuses():
    """A field that cannot be evaluated ends the solve with NONFINITE (keeping the start), a step budget
    with MAX_STEPS; save times come out in order with the end last."""
    field = PopulationFlowField()
    method = SCIPY_METHODS["lsoda"]
    sol = solve_scipy(field, method, 0.0, math.log1p(1e6), [10.0, 10.0], saveat=SaveAt(ts=(1.0, 2.0, 5.0)),
                      rtol=1e-8, atol=1e-10)
    assert sol.status is Status.SUCCESS
    np.testing.assert_array_equal(sol.ts, [0.0, 1.0, 2.0, 5.0, math.log1p(1e6)])
    short = solve_scipy(field, method, 0.0, math.log1p(1e6), [10.0, 10.0], rtol=1e-8, atol=1e-10, max_steps=3)
    assert short.status is Status.MAX_STEPS and short.accepted == 3

    class Broken:
        def __call__(self, s, z):
            raise ArithmeticError("outside")

        def linearization(self, s, z):
            raise ArithmeticError("outside")

    broken = solve_scipy(Broken(), method, 0.0, 1.0, [10.0, 10.0], rtol=1e-8, atol=1e-10)
    assert broken.status is Status.NONFINITE
    np.testing.assert_array_equal(broken.ys[-1], [10.0, 10.0])


def test_float64_only_solver_with_dps_is_bad_input():
    from stumpcheck.numerics.flow.run import check_flow_arguments

    with pytest.raises(InputError, match="float64 only"):
        check_flow_arguments(10.0, 10.0, 1.0, rtol=1e-8, solver="lsoda", dps=20)
    assert check_flow_arguments(10.0, 10.0, 1.0, rtol=1e-8, solver="lsoda") is None


def test_rtol_below_what_scipy_resolves():
    """scipy raises an rtol below 2.2e-14 to it (a warning, not an error), which would make the rtol/10 check
    a copy of the solve: such an rtol is bad input for an explicit scipy solver; the default becomes Radau (whose
    floor is 100 times lower), and Rodas4 only below Radau's."""
    from stumpcheck.numerics.flow.run import check_flow_arguments, default_solver, run_population_flow

    with pytest.raises(InputError, match="below what solver 'lsoda' resolves"):
        check_flow_arguments(10.0, 10.0, 1.0, rtol=1e-12, solver="lsoda")
    assert default_solver(1e-12, None) == "radau" and default_solver(1e-8, None) == "lsoda"
    assert default_solver(1e-13, None) == "rodas4"
    assert default_solver(1e-8, 30) == "extrapolation"  # the D-digit default (bench_flow30)
    with pytest.raises(ValueError):
        solve_scipy(PopulationFlowField(), SCIPY_METHODS["lsoda"], 0.0, 1.0, [10.0, 10.0], rtol=1e-13, atol=1e-15)
    run = run_population_flow(10.0, 10.0, 1.0, rtol=1e-12, per_decade=1)
    assert run.settings["solver"].startswith("scipy Radau") and 0 <= run.a_posteriori_rel_error_b < 1e-10
    run = run_population_flow(10.0, 10.0, 1.0, rtol=1e-13, per_decade=1)
    assert run.settings["solver"].startswith("Rodas4") and 0 <= run.a_posteriori_rel_error_b < 1e-11
