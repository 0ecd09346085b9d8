"""The model's SymPy functions evaluate like SymPy's own (stumpcheck.theory.special, stumpcheck.theory.evaluate).

* ``evalf`` of Λ, κ_k (any order) and the softmax weight gives the requested digits: checked against the
  defining integrals computed here by mpmath quadrature at 50+ digits, never through the functions;
* ``sp.lambdify(..., "numpy")`` and ``"mpmath"`` work on ∂e/∂b = ``sp.diff(stable_error('one-head'), b)``
  and agree with the project's own ∇e (stumpcheck.numerics.population.error_gradient, 40 digits) at
  interior points up to b = 10⁴ and θ within 10⁻¹² of 1; ``expr.evalf(30)`` there has 30 correct digits;
* ``to_numpy``, ``to_mpmath`` and ``to_arb`` on the same expression: float64 as accurate as the generated
  package, dps correct digits, balls that contain the 50-digit value; bad input is an InputError;
* the LaTeX of the three functions is the paper's (Λ, κ_k, softmax_j).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.numerics.population import error_gradient
from stumpcheck.numerics.precision import MAX_DPS, MIN_DPS, InputError
from stumpcheck.theory import evaluate
from stumpcheck.theory.evaluate import to_arb, to_latex, to_mpmath, to_numpy
from stumpcheck.theory.model import stable_error
from stumpcheck.theory.special import SoftmaxWeight, TruncExpCumulant, TruncExpLogMass
from stumpcheck.theory.symbols import a, b, beta, theta

# (a, b, θ) as doubles, so that every evaluator sees the same exact inputs: a moderate point, the
# calibration relation at b = 10⁴, θ near 0, θ within 2⁻²⁰, 10⁻⁹ and 10⁻¹² of 1, the switch layer.
POINTS = [(10.0, 10.0, 0.3), (10018.420680743952, 1e4, 0.5), (1e4, 1e4, 1 - 2.0**-20), (10.0, 100.0, 1e-6),
          (-5.0, 50.0, 0.999), (20.0, 1e3, 0.99999), (5.0, 1.0, 0.5), (1e4 + 20, 1e4, 0.9999),
          (30.0, 1e4, 1e-5), (1e4, 1e4, 1 - 1e-12), (9.0, 1e4, 1 - 1e-9)]


@pytest.fixture(scope="module")
def de_db():
    return sp.diff(stable_error("one-head"), b)


def _reference(point, dps=50):
    """∂e/∂b from the project's generated mpmath code, at ``dps`` digits, with the exact double inputs."""
    with mpmath.workdps(dps):
        return error_gradient(*[mpmath.mpf(x) for x in point])[1]


def _relative(value, reference) -> float:
    with mpmath.workdps(60):
        return float(abs(mpmath.mpf(value) - reference) / abs(reference))


# --- evalf of the functions against their definitions ---------------------------------------------------


def _cumulants_by_quadrature(rate: sp.Rational, order: int, dps: int):
    """Λ(β) (order 0) or κ_k(β) from the moments ∫₀¹ τ^j e^{−βτ} dτ, tanh-sinh quadrature at ``dps``."""
    with mpmath.workdps(dps):
        x = mpmath.mpf(rate.p) / rate.q
        moments = [mpmath.quad(lambda t, j=j: t**j * mpmath.exp(-x * t), [0, 1]) for j in range(order + 1)]
        if order == 0:
            return mpmath.log(moments[0])
        raw = [m / moments[0] for m in moments]  # raw[j] = E[U^j]
        kappa = [None]
        for n in range(1, order + 1):  # κ_n = m_n − Σ_{k<n} C(n−1, k−1) κ_k m_{n−k}
            kappa.append(raw[n] - sum(mpmath.binomial(n - 1, k - 1) * kappa[k] * raw[n - k] for k in range(1, n)))
        return kappa[order]


RATES = [sp.Rational(1, 10**30), sp.Rational(-1, 10**12), sp.Rational(1, 10**5), sp.Rational(3, 10),
         sp.Rational(-17, 10), sp.Integer(2), sp.Integer(10), sp.Rational(-75, 2), sp.Integer(500), sp.Integer(-500)]


@pytest.mark.parametrize("rate", RATES, ids=str)
@pytest.mark.parametrize("order", [0, 1, 2, 3, 4, 6])
def test_evalf_of_log_mass_and_cumulants_matches_the_defining_integral_at_50_digits(order, rate):
    # the moment → cumulant sums cancel about 2k·log10(1/|β|) digits near 0: the quadrature runs with them
    dps = 70 + int(2 * (order + 1) * max(0.0, -math.log10(abs(float(rate)))))
    reference = _cumulants_by_quadrature(rate, order, dps)
    node = TruncExpLogMass(rate) if order == 0 else TruncExpCumulant(order, rate)
    value = node.evalf(50)
    assert isinstance(value, sp.Float) and value._prec >= 166
    with mpmath.workdps(dps):
        assert abs(mpmath.mpf(value._mpf_) - reference) <= mpmath.mpf(10) ** -50 * abs(reference)


def test_evalf_of_a_softmax_weight_shifts_the_largest_entry_out():
    ells = (sp.Integer(10000) + sp.log(3), sp.Integer(9990), -sp.Integer(10) ** 6)
    for j in range(3):
        value = SoftmaxWeight(j, *ells).evalf(40)
        with mpmath.workdps(80):
            ls = [mpmath.mpf(10000) + mpmath.log(3), mpmath.mpf(9990), -mpmath.mpf(10) ** 6]
            exact = mpmath.exp(ls[j] - ls[0]) / mpmath.fsum(mpmath.exp(ell - ls[0]) for ell in ls)
            assert abs(mpmath.mpf(value._mpf_) - exact) <= mpmath.mpf(10) ** -40 * exact


def test_evalf_leaves_symbolic_arguments_symbolic():
    assert TruncExpLogMass(b).evalf() == TruncExpLogMass(b)
    assert TruncExpCumulant(2, 2 * b).evalf(20) == TruncExpCumulant(2, sp.Float(2, 20) * b)
    assert SoftmaxWeight(0, a, b).evalf().func is SoftmaxWeight


@pytest.mark.parametrize("point", POINTS, ids=str)
def test_evalf_30_of_the_derivative_has_30_correct_digits(de_db, point):
    reference = _reference(point)
    at_point = de_db.subs({a: sp.Float(point[0], 60), b: sp.Float(point[1], 60), theta: sp.Float(point[2], 60)})
    value = at_point.evalf(30)
    assert isinstance(value, sp.Float)
    assert _relative(value._mpf_, reference) <= 1e-30
    # evalf's own subs= route gives the same
    assert _relative(de_db.evalf(30, subs=dict(zip((a, b, theta), point)))._mpf_, reference) <= 1e-30


# --- lambdify ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", POINTS, ids=str)
def test_lambdify_numpy_is_as_accurate_as_the_generated_package(de_db, point):
    f = sp.lambdify((a, b, theta), de_db, "numpy")
    reference = _reference(point)
    value = f(*point)
    ours = _relative(value, reference)
    package = _relative(gen_np.error_gradient_one_head(*point)[1], reference)
    assert np.isfinite(value)
    assert ours <= max(4 * package, 1e-14), (ours, package)  # the package's accuracy, or 14 digits


@pytest.mark.parametrize("point", POINTS, ids=str)
def test_lambdify_mpmath_agrees_with_the_package_to_the_working_digits(de_db, point):
    f = sp.lambdify((a, b, theta), de_db, "mpmath")
    reference = _reference(point)
    with mpmath.workdps(40):
        value = f(*[mpmath.mpf(x) for x in point])
    assert _relative(value, reference) <= 1e-38


def test_lambdify_prints_the_stable_helpers_and_broadcasts(de_db):
    import inspect

    f = sp.lambdify((a, b, theta), de_db, "numpy")
    source = inspect.getsource(f)
    assert "softmax_weight_differences_numpy(" in source and "trunc_exp_cumulant_numpy(2, b*(1 - theta))" in source
    assert "exp(" not in source  # no naive exponential form of Λ, κ_k or the weights
    thetas = np.linspace(1e-6, 1 - 1e-6, 101)
    values = f(10.0, 50.0, thetas)
    assert values.shape == thetas.shape and np.all(np.isfinite(values))
    for th, value in zip(thetas[::25], values[::25]):
        assert _relative(value, _reference((10.0, 50.0, float(th)), 30)) <= 1e-12
    # no overflow where e^{a}, e^{b} are far beyond float64: a = −10⁶, b = 10⁵
    pooled = sp.lambdify((a, b, theta), stable_error("pooled"))
    assert np.isfinite(f(-1e6, 1e5, 0.5)) and np.isfinite(pooled(-1e6, 1e5, 0.5))


def test_lambdify_with_the_default_modules_and_a_single_function():
    f = sp.lambdify(beta, TruncExpCumulant(2, beta) + TruncExpLogMass(beta))
    with mpmath.workdps(40):
        expected = float(_cumulants_by_quadrature(sp.Rational(1, 1000), 2, 60)
                         + _cumulants_by_quadrature(sp.Rational(1, 1000), 0, 60))
    assert math.isclose(f(1e-3), expected, rel_tol=1e-14)


def test_the_project_printers_still_print_their_own_helpers():
    from stumpcheck.theory.codegen import function_source

    source = function_source("f", (b, theta), TruncExpCumulant(1, b * theta), "numpy", "doc")
    assert "trunc_exp_cumulant(1, b*theta)" in source and "_numpy" not in source


# --- to_numpy, to_mpmath, to_arb ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compiled(de_db):
    return (to_numpy(de_db, (a, b, theta)), to_mpmath(de_db, (a, b, theta), dps=30),
            to_arb(de_db, (a, b, theta), dps=30))


@pytest.mark.parametrize("point", POINTS, ids=str)
def test_to_numpy_mpmath_and_arb_on_the_derivative(compiled, point):
    numpy_f, mpmath_f, arb_f = compiled
    import flint

    reference = _reference(point)
    assert _relative(numpy_f(*point), reference) <= max(4 * _relative(gen_np.error_gradient_one_head(*point)[1],
                                                                      reference), 1e-14)
    assert _relative(mpmath_f(*point), reference) <= 1e-30
    ball = arb_f(*point)
    assert isinstance(ball, flint.arb)
    with flint.ctx.workprec(200):
        assert ball.contains(flint.arb(mpmath.nstr(reference, 50)))
    assert float(ball.rad()) <= 1e-24 * abs(float(reference))


def test_to_mpmath_leaves_the_precision_alone_and_takes_decimal_strings(compiled):
    _, mpmath_f, _ = compiled
    before = mpmath.mp.prec
    value = mpmath_f("10", "10", "0.3")
    assert mpmath.mp.prec == before
    with mpmath.workdps(50):
        reference = error_gradient(mpmath.mpf(10), mpmath.mpf(10), mpmath.mpf("0.3"))[1]
    assert _relative(value, reference) <= 1e-30


def test_a_list_of_expressions_gives_a_tuple():
    f = to_numpy([TruncExpLogMass(beta), TruncExpCumulant(1, beta)], [beta])
    g = to_arb([TruncExpLogMass(beta), TruncExpCumulant(1, beta)], [beta])
    import flint

    values, balls = f(2.0), g(2)
    assert isinstance(values, tuple) and isinstance(balls, tuple)
    for order, value, ball in zip((0, 1), values, balls):
        reference = _cumulants_by_quadrature(sp.Integer(2), order, 40)
        assert _relative(value, reference) <= 4e-16
        with flint.ctx.workprec(150):
            assert ball.contains(flint.arb(mpmath.nstr(reference, 40)))


def test_names_that_are_not_python_identifiers_are_renamed():
    lam = sp.Symbol("lambda", real=True)
    f = to_numpy(lam + TruncExpLogMass(lam), (lam,))
    assert math.isclose(f(1.0), 1 + math.log(1 - math.exp(-1)), rel_tol=1e-15)


def test_to_arb_refuses_what_it_cannot_enclose_and_non_real_values():
    with pytest.raises(InputError, match="cannot print the expression for arb"):
        to_arb(sp.Float("0.1") * b, (b,))
    with pytest.raises(InputError, match="not real"):
        to_arb(sp.log(b), (b,))(-2)


@pytest.mark.parametrize("call, message", [
    (lambda: to_numpy("a + b", (a, b)), "expr must be a SymPy expression"),
    (lambda: to_numpy(a + b, (a,)), "not in args: b"),
    (lambda: to_numpy(a + b, (a, b, a)), "twice"),
    (lambda: to_numpy(a + b, "a"), "args must be"),
    (lambda: to_mpmath(a, (a,), dps=10), r"dps must be an int .* \[15, 10000\]"),
    (lambda: to_mpmath(a, (a,), dps=True), "dps must be an int"),
    (lambda: to_mpmath(a, (a,), dps="30"), "dps must be an int"),
    (lambda: to_arb(a, (a,), dps=10**6), "dps must be an int"),
    (lambda: to_mpmath(a, (a,), dps=30)(1, 2), "expected 1 values"),
    (lambda: to_mpmath(a, (a,), dps=30)("x"), "a value must be a number"),
    (lambda: to_arb(a, (a,))(float("nan")), "a value must be"),
    (lambda: to_latex(a, ""), "name must be"),
    (lambda: to_latex(a, "x", macros=1), "macros must be"),
])
def test_bad_input_is_an_input_error_with_one_line(call, message):
    with pytest.raises(InputError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_to_mpmath_uses_the_package_precision_range():
    assert (evaluate._MIN_DPS, evaluate._MAX_DPS) == (MIN_DPS, MAX_DPS)
    with pytest.raises(TypeError):
        to_mpmath(a, (a,), 30)  # dps is keyword-only


# --- LaTeX -------------------------------------------------------------------------------------------------


def test_latex_is_the_papers_notation():
    assert sp.latex(TruncExpLogMass(beta)) == r"\Lambda\left(\beta\right)"
    assert sp.latex(TruncExpCumulant(3, b * theta)) == r"\kappa_{3}\left(b \theta\right)"
    assert sp.latex(SoftmaxWeight(1, a, b)) == r"\operatorname{softmax}_{2}\left(a, b\right)"
    assert sp.latex(TruncExpCumulant(1, beta) ** 2) == r"\kappa_{1}\left(\beta\right)^{2}"
    assert to_latex(TruncExpCumulant(1, b * theta), "m") == r"m = \kappa_{1}\left(b \theta\right)"
    assert to_latex(TruncExpCumulant(1, b * theta), sp.Symbol("m"), macros=True) == \
        r"m = \cumulant{1}\left(\featurescore \threshold\right)"
