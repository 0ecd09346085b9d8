"""Printers that know the constants and the package's own results; float64 quantities over arrays; the
verified L, ∇L, ∇²L at dps digits (issue 37, items 2 and 3)."""

from __future__ import annotations

import math
import os

import flint
import mpmath
import numpy as np

import pytest
import sympy as sp

import stumpcheck
from stumpcheck import api
from stumpcheck.theory.codegen import function_source
from stumpcheck.theory.evaluate import to_arb, to_mpmath, to_numpy
from stumpcheck.theory.model import stable_error
from stumpcheck.theory.special import SoftmaxWeight, TruncExpCumulant, TruncExpLogMass
from stumpcheck.theory.symbols import a, b, beta, theta

RESULTS = {r.name: r.expr for r in stumpcheck.results()}
#: The derived results in ζ(3), π and log b, each a function of b alone.
OF_B = ("calibration", "calibration_r", "leading_loss", "db_dt", "progress_direction")


def _rhs(name):
    expr = RESULTS[name]
    return expr.rhs if isinstance(expr, sp.Eq) else expr


def _reference(expr, values, digits=80):
    entries = list(expr) if isinstance(expr, sp.MatrixBase) else [expr]
    return [sp.N(e.subs(values), digits) for e in entries]


def _contains(ball, reference) -> bool:
    """The ball contains the 80-digit evalf ``reference`` (far more digits than the ball's own)."""
    with flint.ctx.workprec(400):
        return ball.contains(flint.arb(str(reference)))


def _mpf(reference):
    with mpmath.workdps(90):
        return mpmath.mpf(str(reference))


# --- the done-when: to_arb of the calibration result contains SymPy's evalf ---------------------------------


@pytest.mark.parametrize("b_value", [10, sp.Rational(1, 3), 1000])
def test_to_arb_of_the_calibration_result_contains_sympys_evalf_to_50_digits(b_value):
    ball = to_arb(RESULTS["calibration"], (b,), dps=50)(b_value)
    (reference,) = _reference(_rhs("calibration"), {b: b_value})
    assert isinstance(ball, flint.arb) and _contains(ball, reference)
    assert float(ball.rad()) <= 1e-45 * abs(float(reference))


@pytest.mark.parametrize("name", OF_B)
def test_every_printer_evaluates_the_derived_results_in_zeta_3(name):
    expr = RESULTS[name]
    references = _reference(_rhs(name), {b: 10})
    balls = to_arb(expr, (b,), dps=40)(10)
    values = to_mpmath(expr, (b,), dps=30)(10)
    floats = to_numpy(expr, (b,))(10.0)
    if not isinstance(balls, tuple):
        balls, values, floats = (balls,), (values,), (floats,)
    for ball, value, x, reference in zip(balls, values, floats, references):
        assert _contains(ball, reference), name
        reference = _mpf(reference)
        assert abs(value - reference) <= abs(reference) * mpmath.mpf(10) ** -30, name
        assert math.isclose(float(x), float(reference), rel_tol=1e-14), name


CONSTANTS = [sp.pi, sp.E, sp.EulerGamma, sp.Catalan, sp.GoldenRatio, sp.sqrt(2), sp.sqrt(sp.Rational(3, 7)),
             sp.log(2), sp.zeta(3), sp.zeta(5), sp.polylog(2, sp.Rational(1, 2)), sp.polylog(3, sp.Rational(1, 3)),
             2 ** sp.Rational(1, 3), 1 / sp.sqrt(5), sp.zeta(3, sp.Rational(1, 4))]


@pytest.mark.parametrize("constant", CONSTANTS, ids=str)
def test_constants_are_enclosed_by_arb_and_evaluated_by_mpmath_and_numpy(constant):
    ball = to_arb(constant * b, (b,), dps=60)(1)
    reference = sp.N(constant, 80)
    assert _contains(ball, reference)
    assert float(ball.rad()) <= 1e-55 * abs(float(reference))
    value = to_mpmath(constant * b, (b,), dps=40)(1)
    assert abs(value - _mpf(reference)) <= mpmath.mpf(10) ** -40 * max(abs(value), 1)
    assert math.isclose(float(to_numpy(constant * b, (b,))(1.0)), float(reference), rel_tol=4e-16, abs_tol=1e-300)


def test_arb_constants_are_arbs_own_balls_never_float_literals():
    source = function_source("f", (b,), sp.pi * b + sp.EulerGamma + sp.zeta(3) + sp.sqrt(2) * sp.log(2) + sp.E,
                             "arb", "doc")
    for call in ("arb.pi()", "arb.const_euler()", "acb(3).zeta()", "acb(2).sqrt(analytic=analytic)",
                 "_log(2, analytic)", "arb.const_e()"):
        assert call in source, call
    assert "3.14" not in source and "0.577" not in source and "1.41" not in source


def test_constant_expressions_without_arguments_and_the_results_without_symbols():
    two = to_arb(sp.Integer(2), ())()
    assert isinstance(two, flint.arb) and two == 2 and two.rad() == 0
    assert to_arb(RESULTS["flow_constant_C"], ())() == 2
    with mpmath.workdps(30):
        assert to_mpmath(sp.pi, (), dps=30)() == +mpmath.pi
    assert to_numpy(sp.zeta(3), ())() == float(sp.N(sp.zeta(3), 30))


def test_rational_powers_honour_the_branch_cut_under_analytic():
    f = to_arb(sp.sqrt(b), (b,), dps=30)
    assert _contains(f(2), sp.N(sp.sqrt(2), 50))
    with pytest.raises(stumpcheck.InputError, match="not real"):
        f(-2)  # the principal square root of −2 is imaginary
    source = function_source("f", (b,), sp.sqrt(b), "arb", "doc")
    namespace = __import__("stumpcheck.theory.codegen", fromlist=["helper_namespace"]).helper_namespace("arb")
    exec(source, namespace)  # noqa: S102 - printed by the project
    assert not namespace["f"](flint.acb(-1, 0), True).is_finite()  # a ball on the cut: indeterminate
    assert namespace["f"](flint.acb(4), True).real == 2


def test_zeta_and_polylog_at_symbolic_arguments_in_mpmath_and_arb_and_refused_by_numpy():
    expr = sp.zeta(b) + sp.polylog(2, theta)
    ball = to_arb(expr, (b, theta), dps=30)(3, sp.Rational(1, 4))
    reference = sp.N(sp.zeta(3) + sp.polylog(2, sp.Rational(1, 4)), 80)
    assert _contains(ball, reference)
    value = to_mpmath(expr, (b, theta), dps=30)(3, "0.25")
    assert abs(value - _mpf(reference)) <= mpmath.mpf(10) ** -30
    with pytest.raises(stumpcheck.InputError, match="number arguments only"):
        to_numpy(expr, (b, theta))


def test_floats_and_infinities_are_still_refused_by_the_arb_printer():
    with pytest.raises(stumpcheck.InputError, match="cannot print the expression for arb"):
        to_arb(sp.Float("0.1") * b, (b,))
    with pytest.raises(stumpcheck.InputError, match="cannot print the expression for arb"):
        to_arb(sp.oo * b, (b,))


def test_matrices_give_tuples_and_equations_their_right_hand_side():
    values = to_numpy(RESULTS["loss_gradient_integrand"], (a, b, theta))(10.0, 10.0, 0.3)
    assert isinstance(values, tuple) and len(values) == 2
    assert to_numpy(sp.Eq(a, 2 * b), (b,))(3.0) == 6.0
    with pytest.raises(stumpcheck.InputError, match="not in args: a"):
        to_numpy(sp.Eq(b, 2 * a), (b,))


# --- JAX ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax():
    if os.environ.get("STUMPCHECK_REQUIRE_JAX") == "1":  # .ci/run's jax step: a missing jax is a failure
        import jax
    else:
        jax = pytest.importorskip("jax")
    return jax


def _x64(jax):
    enable = getattr(jax, "enable_x64", None)
    if enable is None:  # older JAX
        from jax.experimental import enable_x64 as enable
        return enable()
    return enable(True)


def test_jax_grad_through_to_jax_is_the_derivative_of_the_error(jax):
    from stumpcheck.theory.evaluate import to_jax

    error = stable_error("one-head")
    f = to_jax(error, (a, b, theta))
    reference = to_mpmath([sp.diff(error, a), sp.diff(error, b)], (a, b, theta), dps=30)
    points = [(10.0, 10.0, 0.3), (25.0, 20.0, 0.95), (3.0, 0.01, 0.5), (2.0, 300.0, 0.999)]
    with _x64(jax):
        gradients = jax.vmap(jax.grad(f, argnums=(0, 1)))(*(jax.numpy.array(column) for column in zip(*points)))
        for i, point in enumerate(points):
            for got, want in zip((gradients[0][i], gradients[1][i]), reference(*point)):
                assert math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-14), (point, got, want)
    gradient32 = jax.grad(f, argnums=1)(10.0, 10.0, 0.3)  # JAX's default float32
    assert math.isclose(float(gradient32), float(reference(10, 10, "0.3")[1]), rel_tol=1e-4)


def test_jax_helpers_have_finite_gradients_on_both_branches(jax):
    from stumpcheck.theory.evaluate import to_jax

    f = to_jax([TruncExpLogMass(beta), TruncExpCumulant(1, beta), TruncExpCumulant(4, beta)], (beta,))
    exact = to_mpmath([TruncExpCumulant(1, beta), TruncExpCumulant(2, beta), TruncExpCumulant(5, beta)], (beta,),
                      dps=30)
    values = (0.0, 1e-8, 1.9, 2.1, -3.0, 40.0, -700.0)
    with _x64(jax):
        for k in range(3):  # dΛ/dβ = −κ₁, dκ₁/dβ = −κ₂, dκ₄/dβ = −κ₅
            derivatives = jax.vmap(jax.grad(lambda x, k=k: f(x)[k]))(jax.numpy.array(values))
            for value, derivative in zip(values, derivatives):
                expected = -float(exact(value)[k])
                assert math.isfinite(float(derivative)), (k, value)
                assert math.isclose(float(derivative), expected, rel_tol=1e-8, abs_tol=1e-12), (k, value)


def test_lambdify_jax_prints_the_models_functions(jax):
    expr = SoftmaxWeight(0, a - b * theta, -b * theta / 2) * TruncExpLogMass(b) + TruncExpCumulant(2, b * theta)
    f = sp.lambdify((a, b, theta), expr, "jax")
    g = to_numpy(expr, (a, b, theta))
    with _x64(jax):
        assert math.isclose(float(f(1.0, 5.0, 0.3)), float(g(1.0, 5.0, 0.3)), rel_tol=1e-13)
        assert math.isfinite(float(jax.grad(f, argnums=1)(1.0, 5.0, 0.3)))


def test_to_jax_without_jax_is_a_clear_import_error(monkeypatch):
    import builtins

    from stumpcheck.theory import evaluate

    real_import = builtins.__import__

    def no_jax(name, *args, **kwargs):
        if name == "jax" or name.startswith("jax."):
            raise ModuleNotFoundError("No module named 'jax'", name="jax")
        return real_import(name, *args, **kwargs)

    evaluate._jax_helpers.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_jax)
    try:
        with pytest.raises(ImportError, match=r"stumpcheck\[jax\]"):
            evaluate.to_jax(a + b, (a, b))
    finally:
        monkeypatch.undo()
        evaluate._jax_helpers.cache_clear()


# --- float64 over arrays -------------------------------------------------------------------------------------


def test_float64_quantities_broadcast_and_equal_their_scalar_values():
    a_values = np.array([10.0, 20.0, 25.0])
    theta_values = np.array([[0.3], [0.95]])
    values = api.error(a_values, 10.0, theta_values, dps=None)
    assert values.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert values[i, j] == api.error(float(a_values[j]), 10.0, float(theta_values[i, 0]), dps=None)
            exact = api.error(float(a_values[j]), 10, float(theta_values[i, 0]), dps=30)
            assert math.isclose(values[i, j], float(exact), rel_tol=1e-13)
    gradient = api.error_gradient(a_values, 10.0, 0.3, dps=None)
    assert len(gradient) == 2 and gradient[1].shape == (3,)
    assert isinstance(api.error(10.0, 10.0, 0.3, dps=None), np.float64)
    losses = api.loss(np.array([10.0, 20.0]), np.array([[10.0], [12.0]]), dps=None)
    assert losses.shape == (2, 2)
    assert math.isclose(losses[0, 0], float(api.loss(10, 10, dps=20)), rel_tol=1e-12)
    h_aa, h_ab, h_bb = api.loss_hessian(np.array([10.0, 20.0]), 10.0, dps=None)
    assert h_aa.shape == (2,) and math.isclose(h_ab[0], float(api.loss_hessian(10, 10, dps=20)[1]), rel_tol=1e-9)


@pytest.mark.parametrize("call, message", [
    (lambda: api.error(np.array([1.0, np.nan]), 1.0, 0.5, dps=None), r"a\[1\] must be finite"),
    (lambda: api.error(1.0, np.array([1.0, -1.0]), 0.5, dps=None), r"b\[1\] must be finite and > 0"),
    (lambda: api.error(1.0, 1.0, np.array([0.5, 1.5]), dps=None), r"theta\[1\] must be in \[0, 1\]"),
    (lambda: api.error(np.ones(2), np.ones(3), 0.5, dps=None), "do not broadcast"),
    (lambda: api.error("x", 1.0, 0.5, dps=None), "a must be a real number"),
    (lambda: api.loss(1.0, 1e-4, dps=None), r"b must be finite and > 0.001"),
])
def test_bad_array_input_is_one_line(call, message):
    with pytest.raises(stumpcheck.InputError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


# --- L, ∇L, ∇²L at dps digits through Arb --------------------------------------------------------------------


def test_loss_at_dps_is_the_correct_rounding_its_certified_enclosure_verifies():
    from stumpcheck.numerics.certified.enclosures import verified_integrals

    wide = api.certified_loss(10, 10, dps=60)
    for dps in (20, 50):
        value = api.loss(10, 10, dps=dps)
        with mpmath.workdps(dps):
            assert mpmath.nstr(value, dps) == mpmath.nstr(wide.mid, dps)
    before = verified_integrals._verified.cache_info().hits
    api.loss(10, 10, dps=50)
    assert verified_integrals._verified.cache_info().hits == before + 1  # exact inputs repeat: cached


def test_gradient_with_a_binary_prior_runs_through_arb_and_agrees_with_the_quadrature():
    from stumpcheck.numerics.certified.enclosures import certified_loss_gradient
    from stumpcheck.numerics.population import quantities

    got = api.loss_gradient(10, 10, prior=(0.25, 0.75), dps=30)
    balls = certified_loss_gradient(10, 10, prior=(0.25, 0.75), dps=40)
    with mpmath.workdps(30):
        quadrature = quantities.loss_gradient(10, 10, prior=(0.25, 0.75))
    for value, ball, q in zip(got, balls, quadrature):
        assert abs(value - ball.mid) <= abs(value) * mpmath.mpf(10) ** -29
        assert abs(value - q) <= abs(value) * mpmath.mpf(10) ** -28


def test_a_decimal_prior_falls_back_to_the_quadrature_and_bad_input_is_refused():
    from stumpcheck.numerics.certified.enclosures import certified_loss

    value = api.loss(10, 10, prior=("0.3", "0.7"), dps=20)
    assert 0.0039 < float(value) < 0.0040
    with pytest.raises(stumpcheck.InputError, match="exact binary"):
        certified_loss(10, 10, prior=("0.3", "0.7"))
    with pytest.raises(stumpcheck.InputError, match="b must be > 0"):
        api.loss(10, -1, dps=20)
    with pytest.raises(stumpcheck.InputError, match="prior"):
        api.loss(10, 10, prior=(0.7, 0.3), dps=20)
