"""Certified enclosures (numerics/certified/enclosures/__init__.py) and the Arb target that feeds them.

What is checked:

* the Arb printer against exact strings, and the SymPy derivations it prints
  (moment series, moment → cumulant identities) against SymPy's own integrals;
* the generated Arb helpers and e(θ) enclose the mpmath values at 50 digits, at
  hypothesis-drawn points (b from 1e-2 to 1e4, calibrated and uncalibrated);
* the radius is small: rad/|e| ≤ 1e-25 at dps 30 (≤ 1e-20 for L and ∇L);
* a ball θ gives one enclosure containing the values at its ends and middle;
* the ``analytic`` flag: a ball on which Λ's logarithm crosses its branch cut
  gives a non-finite ball with ``analytic=True`` (and a finite one without);
* L and ∇L enclose 50-digit mpmath references (pinned here; the slow test
  recomputes them), including `stumpcheck eval loss --a 600 --b 1000 --dps 30`;
* too-wide requests raise EnclosureTooWide; bad input raises InputError;
  flint's precision is restored, also after an error.
"""

from __future__ import annotations

import doctest
import math
import re
import time

import mpmath
import pytest
import sympy as sp
from flint import acb, arb, ctx
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

import stumpcheck.numerics.certified.enclosures as certified
from stumpcheck.numerics.population import quantities as population
from stumpcheck.numerics.certified.enclosures import (Enclosure, EnclosureTooWide, certified_error, certified_loss, certified_loss_hessian,
                                certified_loss_gradient, error_ball, format_ball, require_relative_width)
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.precision import InputError
from tests.strategies import parameters, rates, scales
from stumpcheck.theory.codegen import (ArbModelPrinter, FactoredSoftmaxWeight, canonical_rates, cumulants_from_moments,
                            factor_softmax_weights, moment_series_coefficient)
from stumpcheck.theory.loss import error as symbolic_error
from stumpcheck.theory.model import closed_form_error
from stumpcheck.theory.special import SoftmaxWeight, TruncExpCumulant, TruncExpLogMass, cumulant_exp_form, log_mass_exp_form
from stumpcheck.theory.symbols import a as a_sym
from stumpcheck.theory.symbols import b as b_sym
from stumpcheck.theory.symbols import beta as beta_sym
from stumpcheck.theory.symbols import theta as theta_sym

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
CALIBRATED_A = 100 + 2 * math.log(100)  # a = b + 2 log b at b = 100 (a float: the same binary number everywhere)


@pytest.fixture(autouse=True)
def _flint_precision_is_untouched():
    before = ctx.prec
    yield
    assert ctx.prec == before, "a test or the code under test leaked flint.ctx.prec"


def _reference_error(a, b, theta, estimator, dps=50):
    """e(θ) from the mpmath module at ``dps`` digits, with an estimate of its own error."""
    values = []
    for digits in (dps, dps + 20):
        with mpmath.workdps(digits):
            values.append(population.error(a, b, theta, estimator=estimator))
    return values[1], abs(values[1] - values[0])


def _encloses(enclosure: Enclosure, value, slack=0) -> bool:
    lower, upper = enclosure.lower, enclosure.upper  # exact mpf bounds: mpf() would round them to 53 bits
    with mpmath.workprec(max(enclosure.prec_bits, 256) + 64):
        return lower - slack <= value <= upper + slack


# --------------------------------------------------------------------------------------------
# the printer and the derivations it prints


def test_arb_printer_prints_exact_rationals_and_forwards_the_analytic_flag():
    printer = ArbModelPrinter({"fully_qualified_modules": True})
    assert printer.doprint(sp.Rational(1, 3) * sp.log(theta_sym)) == "((acb(1)/3))*_log(theta, analytic)"
    assert printer.doprint(sp.exp(a_sym) + sp.S.Half) == "_exp(a) + (acb(1)/2)"
    assert printer.doprint(TruncExpLogMass(b_sym * theta_sym)) == "trunc_exp_log_mass(b*theta, analytic)"
    assert printer.doprint(TruncExpCumulant(2, -b_sym)) == "trunc_exp_cumulant(2, -b, analytic)"
    weight = factor_softmax_weights(SoftmaxWeight(0, sp.log(theta_sym) + a_sym, sp.log(1 - theta_sym) - b_sym))
    assert printer.doprint(weight) == "softmax_weight_factored(0, (theta, 1 - theta,), (a, -b,))"


@pytest.mark.parametrize("expr", [sp.sin(theta_sym), sp.Float(0.5) * theta_sym, sp.oo * theta_sym,
                                  theta_sym ** a_sym, sp.gamma(theta_sym)])
def test_arb_printer_refuses_what_it_cannot_print_rigorously(expr):
    with pytest.raises(NotImplementedError):
        ArbModelPrinter().doprint(expr)


def test_arb_printer_prints_constants_and_roots_as_arb_balls():
    printer = ArbModelPrinter()
    assert printer.doprint(sp.pi * theta_sym) == "acb(arb.pi())*theta"
    assert printer.doprint(sp.E) == "acb(arb.const_e())"
    assert printer.doprint(sp.sqrt(theta_sym)) == "acb(theta).sqrt(analytic=analytic)"
    assert printer.doprint(sp.zeta(3)) == "acb(3).zeta()"


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_factored_weights_leave_no_logarithm_of_theta(estimator):
    factored = factor_softmax_weights(symbolic_error(estimator))
    assert not factored.atoms(SoftmaxWeight)
    assert factored.atoms(FactoredSoftmaxWeight)
    assert not factored.atoms(sp.log), "log θ, log(1 − θ) should only have appeared inside softmax weights"


def test_factored_softmax_weight_equals_the_softmax_weight():
    with ctx.workprec(120):
        factors = [arb("0.25"), arb("0.75"), arb("1e-30"), arb(0)]
        exponents = [arb(3), arb(-700), arb(2000), arb("0.5")]
        ells = [f.log() + m for f, m in zip(factors[:3], exponents[:3])]
        for j in range(3):
            direct = gen_arb.softmax_weight(j, *ells)
            factored = gen_arb.softmax_weight_factored(j, factors, exponents)
            assert direct.overlaps(factored)
            assert factored.real.rad() < 1e-30 * abs(factored.real.mid()) + arb(2) ** -110
        assert gen_arb.softmax_weight_factored(3, factors, exponents).real.is_zero()  # F = 0: weight 0 exactly


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_canonical_rates_is_the_same_function(estimator):
    """canonical_rates only applies proven reflections: both forms agree at a real point."""
    original = symbolic_error(estimator)
    rewritten = canonical_rates(original)
    assert not any(node.args[-1].could_extract_minus_sign()
                   for node in rewritten.atoms(TruncExpLogMass, TruncExpCumulant))
    point = {a_sym: sp.Rational(37, 3), b_sym: sp.Rational(29, 2), theta_sym: sp.Rational(3, 7)}
    values = [sp.N(expr.rewrite(sp.exp).subs(point), 40) for expr in (original, rewritten)]
    assert abs(values[0] - values[1]) < sp.Float(10) ** -35


def test_moment_series_coefficient_is_sympys_integral():
    """Symbolic coefficient vs the integral of each monomial (exact rationals) and vs M_j(β) numerically."""
    j, n, coefficient = moment_series_coefficient()
    for jj in range(4):
        for nn in range(6):
            exact = sp.Rational((-1) ** nn, (jj + nn + 1) * math.factorial(nn))  # ∫₀¹ τ^(j+n) dτ (−1)^n/n!
            assert coefficient.subs({j: jj, n: nn}) == exact
    with mpmath.workdps(40):
        value = mpmath.mpf("0.7")
        for jj in range(5):
            terms = [sp.Rational(coefficient.subs({j: jj, n: nn})) for nn in range(60)]
            series = mpmath.fsum(mpmath.mpf(c.p) / c.q * value**nn for nn, c in enumerate(terms))
            integral = mpmath.quad(lambda t, jj=jj: t**jj * mpmath.exp(-value * t), [0, 1])
            assert mpmath.almosteq(series, integral, rel_eps=mpmath.mpf(10) ** -35)


def test_cumulants_from_moments_match_the_cumulants_of_the_truncated_exponential():
    """κ_k from m_k = M_k/M₀ (moments by quadrature) equals SymPy's (−1)^k Λ^(k)(β) at β = 3/7, −2, 9."""
    moments, cumulants = cumulants_from_moments()
    assert cumulants[1] == moments[1] - moments[0] ** 2
    forms = [sp.lambdify(beta_sym, cumulant_exp_form(k, beta_sym), "mpmath") for k in range(1, len(cumulants) + 1)]
    with mpmath.workdps(40):
        for value in (mpmath.mpf(3) / 7, mpmath.mpf(-2), mpmath.mpf(9)):
            raw = [mpmath.quad(lambda t, k=k: t**k * mpmath.exp(-value * t), [0, 1]) for k in range(5)]
            numbers = {m: raw[k] / raw[0] for k, m in enumerate(moments, start=1)}
            for order, (expr, form) in enumerate(zip(cumulants, forms), start=1):
                got = sp.lambdify(moments, expr, "mpmath")(*[numbers[m] for m in moments])
                assert mpmath.almosteq(got, form(value), rel_eps=mpmath.mpf(10) ** -25), (order, value)


# --------------------------------------------------------------------------------------------
# the generated Arb helpers


def _reference_special(order, value):
    """Λ (order 0) or κ_order at an exact rate, from SymPy's exponential form at 120 digits."""
    form = log_mass_exp_form(beta_sym) if order == 0 else cumulant_exp_form(order, beta_sym)
    if value == 0:
        with mpmath.workdps(80):  # not at the global 53 bits: the enclosure is compared to 10^-60
            return mpmath.mpf(0) if order == 0 else mpmath.mpf(str(sp.N(TruncExpCumulant(order, 0), 60)))
    if abs(value) < 1e-12:  # the exponential form cancels; the series to 6 terms is exact here
        from stumpcheck.theory.special import taylor_coefficients
        with mpmath.workdps(80):
            return mpmath.fsum(mpmath.mpf(c.p) / c.q * mpmath.mpf(value) ** k
                               for k, c in enumerate(taylor_coefficients(order, 6)))
    with mpmath.workdps(200 + 12 * int(max(0, -math.log10(abs(value))))):
        return sp.lambdify(beta_sym, form, "mpmath")(mpmath.mpf(value))


@settings(max_examples=60, deadline=None)
@given(rate=rates(min_magnitude=1e-300, max_magnitude=1e4), order=st.integers(min_value=0, max_value=4))
@example(rate=1.0, order=4).via("the switch between the series and the large-rate form")
@example(rate=-1.0000001, order=3).via("just beyond the switch, reflected")
@example(rate=0.0, order=2).via("the removable singularity")
def test_arb_helpers_enclose_lambda_and_kappa(rate, order):
    reference = _reference_special(order, rate)
    with ctx.workprec(120):
        ball = (gen_arb.trunc_exp_log_mass(rate) if order == 0 else gen_arb.trunc_exp_cumulant(order, rate)).real
    enclosure = Enclosure.from_ball(ball, prec_bits=120)
    assert _encloses(enclosure, reference, slack=abs(reference) * mpmath.mpf(10) ** -60)
    assert mpmath.mpf(enclosure.rad) <= abs(reference) * mpmath.mpf(2) ** -100 + mpmath.mpf(2) ** -110


def test_series_tail_bound_is_part_of_the_radius():
    """With few working bits the series is truncated early: the tail bound must still cover M₀."""
    with ctx.workprec(20):
        ball = gen_arb._moments(acb("0.9"), 1)[0]
    exact = (1 - mpmath.exp(-mpmath.mpf("0.9"))) / mpmath.mpf("0.9")
    assert Enclosure.from_ball(ball.real, prec_bits=20).contains(exact)


@settings(max_examples=25, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4), estimator=st.sampled_from(ESTIMATORS))
@example(point=(1e4 + 2 * math.log(1e4), 1e4, 0.3), estimator="pooled").via("pooled ∂e/∂b in the bulk")
@example(point=(0.5, 0.01, 2.0**-40), estimator="reflected").via("tiny rates: κ₃ from the moment series")
def test_generated_gradient_and_hessian_enclose_the_mpmath_values(point, estimator):
    a, b, theta = point
    tag = estimator.replace("-", "_")
    with ctx.workprec(140):
        balls = [*getattr(gen_arb, f"error_gradient_{tag}")(a, b, theta),
                 *getattr(gen_arb, f"error_hessian_{tag}")(a, b, theta)]
    references = []
    for digits in (60, 80):
        with mpmath.workdps(digits):
            references.append([*population.error_gradient(a, b, theta, estimator=estimator),
                               *population.error_hessian(a, b, theta, estimator=estimator)])
    for ball, low, high in zip(balls, *references):
        enclosure = Enclosure.from_ball(ball.real, prec_bits=140)
        assert _encloses(enclosure, high, slack=2 * abs(high - low)), (enclosure, high)


# --------------------------------------------------------------------------------------------
# pointwise enclosures of e(θ)


def _check_error_enclosure(a, b, theta, estimator):
    """The dps-30 enclosure with rel_width 1e-25 contains the mpmath value.

    The reference is evaluated at the precision the enclosure needed plus 64 and
    128 bits (for the averaged estimator, cancellation can push that far beyond 50
    digits); its own error is estimated by the difference of the two. Where e is 0
    (e.g. the symmetrized estimators at θ = 1/2) no relative width can be met: the
    absolute radius is checked instead.
    """
    try:
        enclosure = certified_error(a, b, theta, estimator=estimator, dps=30, rel_width=1e-25)
    except EnclosureTooWide:
        enclosure = certified_error(a, b, theta, estimator=estimator, dps=30)
        assert mpmath.mpf(enclosure.rad) <= 1e-30 and enclosure.contains(mpmath.mpf(0)), enclosure
        reference, reference_error = _reference_error(a, b, theta, estimator)
        assert abs(reference) <= 1e-40
        return enclosure, reference
    assert enclosure.relative_radius <= 1e-25
    values = []
    for extra in (64, 128):
        with mpmath.workprec(max(enclosure.prec_bits, 170) + extra):
            values.append(population.error(a, b, theta, estimator=estimator))
    reference, reference_error = values[1], abs(values[1] - values[0])
    assert _encloses(enclosure, reference, slack=2 * reference_error), (enclosure, reference)
    relative = enclosure.relative_radius
    target(float(mpmath.log10(relative)) if relative > 0 else -400.0, label="log10 relative radius")
    return enclosure, reference


@settings(max_examples=40, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4, min_offset=-50.0, max_offset=1e3),
       estimator=st.sampled_from(ESTIMATORS))
@example(point=(600.0, 1000.0, 0.6), estimator="one-head").via("the interior layer of issue 3")
@example(point=(1e4 + 2 * math.log(1e4), 1e4, 1 - 2.0**-30), estimator="pooled").via("deep in the θ = 1 layer")
@example(point=(25.0, 20.0, 0.0), estimator="one-head").via("θ = 0 exactly")
@example(point=(25.0, 20.0, 1.0), estimator="reflected").via("θ = 1 exactly")
@example(point=(25.0, 20.0, 0.5), estimator="averaged").via("e = 0 by the reflection symmetry")
@example(point=(8613.3, 7714.8, 0.2675), estimator="averaged").via("e ≈ 1e-2846, far below its terms")
def test_certified_error_encloses_the_high_precision_value(point, estimator):
    _check_error_enclosure(*point, estimator)


@settings(max_examples=25, deadline=None)
@given(b=scales(min_value=1e-2, max_value=1e4), ratio=st.floats(min_value=0.01, max_value=0.99),
       theta=st.floats(min_value=0.0, max_value=1.0), estimator=st.sampled_from(ESTIMATORS))
@example(b=1000.0, ratio=0.6, theta=0.6, estimator="one-head").via("a = 600, b = 1000")
def test_certified_error_at_uncalibrated_points(b, ratio, theta, estimator):
    """a/b inside (0, 1): the softmax switch sits in the interior (docs/model.md §2.2)."""
    _check_error_enclosure(ratio * b, b, theta, estimator)


@settings(max_examples=20, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4), width=st.floats(min_value=1e-12, max_value=0.5),
       estimator=st.sampled_from(ESTIMATORS))
@example(point=(25.0, 20.0, 0.9), width=0.05, estimator="one-head")
def test_a_ball_theta_encloses_its_ends_and_middle(point, width, estimator):
    a, b, theta = point
    lo, hi = max(0.0, theta - width), min(1.0, theta + width)
    enclosure = certified_error(a, b, (lo, hi), estimator=estimator, dps=20)
    assert enclosure.is_finite
    for t in (lo, (lo + hi) / 2, hi):
        with mpmath.workdps(40):
            value = population.error(a, b, t, estimator=estimator)
        assert _encloses(enclosure, value, slack=abs(value) * mpmath.mpf(10) ** -35), (t, enclosure, value)


def test_an_arb_ball_theta_is_an_interval():
    with ctx.workprec(80):
        ball = arb("0.3", "1e-3")
    enclosure = certified_error(25, 20, ball, dps=20)
    for t in ("0.299", "0.3", "0.301"):
        with mpmath.workdps(40):
            assert _encloses(enclosure, population.error(25, 20, mpmath.mpf(t)))


def test_a_decimal_input_is_enclosed_as_a_decimal():
    """θ = "0.95" is not binary: the enclosure is for the decimal number, not its float."""
    enclosure = certified_error("25", "20", "0.95", dps=30)
    with mpmath.workdps(60):
        reference = population.error(mpmath.mpf(25), mpmath.mpf(20), mpmath.mpf("0.95"))
    assert _encloses(enclosure, reference)
    assert str(enclosure).startswith("[0.01730411415985853363604594295")


@pytest.mark.parametrize("theta", ["0." + "9" * 60, "0." + "0" * 59 + "1", "1", "0"])
def test_decimal_theta_within_a_rounding_of_an_end_is_accepted_and_enclosed(theta):
    enclosure = certified_error(25, 20, theta, dps=30)
    with mpmath.workdps(80):
        reference = population.error(mpmath.mpf(25), mpmath.mpf(20), mpmath.mpf(theta))
    assert _encloses(enclosure, reference), (enclosure, reference)
    assert enclosure.relative_radius <= 1e-25


# --------------------------------------------------------------------------------------------
# the analytic flag


def _branch_cut_ball():
    """β near 2πi where M₀(β) = (1 − e^{−β})/β crosses (−∞, 0) but stays away from 0.

    Near its zero 2πi, M₀(β) ≈ −i(β − 2πi)/(2π), negative real for β = i(2π − t), t > 0;
    the ball straddles Re β = 0, so the helpers sum the series and take log M₀.
    """
    return acb(arb(0, "1e-8"), 2 * arb.pi() - arb("1e-4"))


def test_log_mass_honours_the_analytic_flag():
    with ctx.workprec(100):
        beta = _branch_cut_ball()
        moment = gen_arb._moments(beta, 1)[0]
        assert moment.real < 0 and moment.imag.contains(0) and not moment.contains(0)
        assert not gen_arb.trunc_exp_log_mass(beta, True).is_finite()
        assert gen_arb.trunc_exp_log_mass(beta, False).is_finite()


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_generated_error_honours_the_analytic_flag(estimator):
    with ctx.workprec(100):
        theta = _branch_cut_ball() / 10
        assert not error_ball(5, 10, theta, estimator=estimator, analytic=True).is_finite()
        assert error_ball(5, 10, theta, estimator=estimator, analytic=False).is_finite()


def test_e_has_no_branch_cut_along_the_negative_theta_axis():
    """The Arb target prints the softmax weights without log θ, so e is analytic (finite
    with analytic=True) on a ball crossing the negative real θ-axis, and it encloses the
    closed form's analytic continuation there. (In the log form this ball would be refused.)"""
    closed = sp.lambdify((a_sym, b_sym, theta_sym), closed_form_error("one-head"), "mpmath")
    with ctx.workprec(100):
        theta = acb(arb("-0.05", "1e-3"), arb(0, "1e-3"))
        ball = error_ball(5, 10, theta, analytic=True)
    assert ball.is_finite()
    with mpmath.workdps(40):
        for point in (mpmath.mpc("-0.05", 0), mpmath.mpc("-0.0505", "0.0005"), mpmath.mpc("-0.0495", "-0.0007")):
            value = closed(mpmath.mpf(5), mpmath.mpf(10), point)
            assert _encloses(Enclosure.from_ball(ball.real, prec_bits=100), value.real)
            assert _encloses(Enclosure.from_ball(ball.imag, prec_bits=100), value.imag)


# --------------------------------------------------------------------------------------------
# L and ∇L

#: 50-digit references from `stumpcheck.numerics.population.quantities` (mpmath, model breakpoints), agreeing with
#: 60-digit runs to all 50 digits; recomputed by test_pinned_references_are_the_mpmath_values
#: (slow). Keys: (a, b, estimator); a and b are floats, the same binary numbers for both codes.
LOSS_REFERENCES = {
    (CALIBRATED_A, 100.0, "one-head"): "0.000049281256166860142975657484705022376648797203693007",
    (600.0, 1000.0, "one-head"): "0.13016617970622655773080478321756667905155313529671",
    (5000.0, 10000.0, "one-head"): "0.14578333010866299909220115097125750010320738723858",
    (25.0, 50.0, "one-head"): "0.13570434652516808427227315217066237688114328071511",
    (0.03, 0.05, "one-head"): "0.041669097113928039889315514969288866037477883872768",
    (30.0, 20.0, "reflected"): "0.001100700109155950656685114902767375326794691038574",
    (30.0, 20.0, "averaged"): "0.000028694652963338229359138929045497081457807534282014",
    (30.0, 20.0, "pooled"): "0.001124991096924194865201277242625416845330354196623",
}
GRADIENT_REFERENCES = {
    (CALIBRATED_A, 100.0, "one-head"): ("-0.00000048295991636096459113320769568351023213838837451351936",
                                        "-0.00000048565038846674567269013816463453200364979583683553359"),
    (25.0, 50.0, "one-head"): ("-0.0025131594675388520520431830718209909124018198205816",
                               "0.0014617392037021570332663154449223739592286389597778"),
    # ∂L/∂a is 2.6e8 times smaller than ∂L/∂b here: each component gets its own scale
    (30.0, 20.0, "pooled"): ("-0.00000000000040424283852139972086085538298223082583008466261408",
                             "-0.00010624421746864430462766152428942664852359410512789"),
}
#: `stumpcheck eval loss --a 600 --b 1000 --dps 30` (agrees with a 43-digit run to 39 digits).
CLI_LOSS_600_1000 = "0.130166179706226557730804783218"


@pytest.mark.parametrize("key", sorted(LOSS_REFERENCES, key=str))
def test_certified_loss_encloses_the_50_digit_reference(key):
    a, b, estimator = key
    enclosure = certified_loss(a, b, estimator=estimator, dps=30, rel_width=1e-20)
    with mpmath.workdps(60):
        reference = mpmath.mpf(LOSS_REFERENCES[key])
    assert _encloses(enclosure, reference, slack=abs(reference) * mpmath.mpf(10) ** -49), (enclosure, reference)
    assert enclosure.relative_radius <= 1e-20


@pytest.mark.parametrize("key", sorted(GRADIENT_REFERENCES, key=str))
def test_certified_loss_gradient_encloses_the_50_digit_reference(key):
    a, b, estimator = key
    enclosures = certified_loss_gradient(a, b, estimator=estimator, dps=30, rel_width=1e-20)
    for enclosure, text in zip(enclosures, GRADIENT_REFERENCES[key]):
        with mpmath.workdps(60):
            reference = mpmath.mpf(text)
        assert _encloses(enclosure, reference, slack=abs(reference) * mpmath.mpf(10) ** -49), (enclosure, reference)
        assert enclosure.relative_radius <= 1e-20


def test_certified_loss_encloses_the_cli_value_at_a_600_b_1000():
    enclosure = certified_loss(600, 1000, dps=30, rel_width=1e-25)
    with mpmath.workdps(60):
        printed = mpmath.mpf(CLI_LOSS_600_1000)
    # the CLI rounds to 30 significant digits (0.1…: the last at 10^-30): widen by half a unit there
    assert _encloses(enclosure, printed, slack=mpmath.mpf(10) ** -30 / 2), enclosure


def test_certified_loss_at_b_100_target_of_issue_3():
    """Issue 3's target: L at b = 100, a = 100 + 2 log 100, relative radius ≤ 1e-20."""
    enclosure = certified_loss(CALIBRATED_A, 100, dps=20, rel_width=1e-20)
    assert enclosure.relative_radius <= 1e-20
    # (its time is measured in benchmarks/bench_population.py, not asserted here)


@pytest.mark.parametrize("a, b, estimator", [(25.0, 20.0, "one-head"), (30.0, 20.0, "pooled")])
def test_certified_loss_hessian_is_the_derivative_of_the_certified_gradient(a, b, estimator):
    """Central differences of the certified ∇L (step h = 1e-12, truncation O(h²) ≈ 1e-24
    relative) against the certified ∇²L: independent integrands, same rigorous integrator."""
    h = mpmath.mpf(10) ** -12
    hessian = certified_loss_hessian(a, b, estimator=estimator, dps=30, rel_width=1e-25)
    with mpmath.workdps(50):
        for column, (da, db) in enumerate(((h, 0), (0, h))):
            plus = certified_loss_gradient(mpmath.mpf(a) + da, mpmath.mpf(b) + db, estimator=estimator,
                                           dps=40, rel_width=1e-35)
            minus = certified_loss_gradient(mpmath.mpf(a) - da, mpmath.mpf(b) - db, estimator=estimator,
                                            dps=40, rel_width=1e-35)
            for row in range(2):
                difference = (plus[row].mid - minus[row].mid) / (2 * h)
                entry = hessian[row + column]
                scale = max(abs(entry.mid), abs(hessian[0].mid), abs(hessian[2].mid))
                assert abs(difference - entry.mid) <= scale * mpmath.mpf(10) ** -18, (row, column, difference, entry)


@pytest.mark.slow
@pytest.mark.parametrize("a, b, estimator", [(25.0, 20.0, "one-head"), (30.0, 20.0, "pooled")])
def test_certified_loss_hessian_encloses_the_high_precision_value(a, b, estimator):
    enclosures = certified_loss_hessian(a, b, estimator=estimator, dps=30, rel_width=1e-20)
    values = []
    for digits in (35, 45):
        with mpmath.workdps(digits):
            values.append(population.loss_hessian(a, b, estimator=estimator))
    for enclosure, low, high in zip(enclosures, *values):
        assert enclosure.relative_radius <= 1e-20
        assert _encloses(enclosure, high, slack=2 * abs(high - low)), (enclosure, high)


def test_certified_loss_at_large_b_calibrated():
    a = 1e4 + 2 * math.log(1e4)
    enclosure = certified_loss(a, 1e4, dps=20, rel_width=1e-15)
    # leading term along the calibration relation: L ≈ 1/(2b²) + (1/2 − ζ(3))/b³
    leading = 1 / (2 * 1e4**2) + (0.5 - 1.2020569031595942) / 1e12
    assert abs(float(enclosure.mid) / leading - 1) < 1e-3


# --------------------------------------------------------------------------------------------
# failures, input and precision


def test_too_wide_requests_raise():
    with pytest.raises(EnclosureTooWide, match="wider than the requested"):
        certified_error(25, 20, ("0.9", "0.95"), dps=20, rel_width=1e-3)  # e varies by 50% over the interval
    assert issubclass(EnclosureTooWide, ArithmeticError)
    wide = Enclosure(mid=mpmath.mpf(1), rad=mpmath.mpf("0.1"), lower=mpmath.mpf("0.9"), upper=mpmath.mpf("1.1"),
                     prec_bits=53)
    assert require_relative_width(wide, 0.2) is wide
    with pytest.raises(EnclosureTooWide):
        wide.require(1e-3)
    nan = Enclosure.from_ball(arb.nan(), prec_bits=53)
    with pytest.raises(EnclosureTooWide, match="not finite"):
        require_relative_width(nan, None)


@pytest.mark.parametrize("call, message", [
    (lambda: certified_error(1, 0, 0.5), "b must be > 0"),
    (lambda: certified_error(1, -2, 0.5), "b must be > 0"),
    (lambda: certified_error(1, 2, 1.5), "theta must lie in"),
    (lambda: certified_error(1, 2, (0.6, 0.5)), "lo <= hi"),
    (lambda: certified_error("nan", 2, 0.5), "finite"),
    (lambda: certified_error(float("inf"), 2, 0.5), "finite"),
    (lambda: certified_error(1, 2, 0.5, dps=5), "precision"),
    (lambda: certified_error(1, 2, 0.5, rel_width=-1), "rel_width"),
    (lambda: certified_error(1, 2, 0.5, estimator="three-head"), "unknown estimator"),
    (lambda: certified_loss(1, 2, dps=100_000), "precision"),
    (lambda: certified_loss_gradient(1, "x", dps=30), "decimal"),
])
def test_bad_input_raises_input_error(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_flint_precision_is_restored_after_an_error(monkeypatch):
    def broken(*args):
        assert ctx.prec > 100  # inside the scoped working precision
        raise RuntimeError("boom")

    monkeypatch.setattr(gen_arb, "error_one_head", broken)
    before = ctx.prec
    with pytest.raises(RuntimeError, match="boom"):
        certified_error(1, 2, 0.5, dps=30)
    assert ctx.prec == before


def test_enclosure_prints_as_mid_plus_minus_rad_and_stays_an_enclosure():
    enclosure = certified_error(25, 20, 0.95, dps=30)
    assert re.fullmatch(r"\[-?[0-9.]+(e-?\d+)? \+/- \d\.\d\de-?\d+\]", str(enclosure)), str(enclosure)
    assert enclosure.evidence == "certified"
    text = format_ball(mpmath.mpf(2) / 3, mpmath.mpf(10) ** -5, 30)
    mid, rad = re.fullmatch(r"\[(.*) \+/- (.*)\]", text).groups()
    with mpmath.workdps(50):
        assert abs(mpmath.mpf(mid) - mpmath.mpf(2) / 3) + mpmath.mpf(10) ** -5 <= mpmath.mpf(rad)


def test_module_docstring_examples_run():
    failures, tried = doctest.testmod(certified, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


# --------------------------------------------------------------------------------------------
# slow: recompute the pinned references


@pytest.mark.slow
def test_pinned_references_are_the_mpmath_values():
    for (a, b, estimator), text in LOSS_REFERENCES.items():
        with mpmath.workdps(50):
            assert mpmath.almosteq(population.loss(a, b, estimator=estimator), mpmath.mpf(text), rel_eps=1e-48)
    for (a, b, estimator), texts in GRADIENT_REFERENCES.items():
        with mpmath.workdps(50):
            for value, text in zip(population.loss_gradient(a, b, estimator=estimator), texts):
                assert mpmath.almosteq(value, mpmath.mpf(text), rel_eps=1e-48)
    # what `stumpcheck eval loss --a 600 --b 1000 --dps 30` prints (30 digits plus its guard bits)
    (value,) = population.with_evidence(lambda: (population.loss(600, 1000),), 30).values
    assert mpmath.nstr(value, 30, strip_zeros=False, min_fixed=-3, max_fixed=3) == CLI_LOSS_600_1000


class _ForeignInteger:
    """An integer type that is not a Python int (as gmpy2.mpz is): flint.fmpz rejects it."""

    def __init__(self, value: int):
        self.value = value

    def __int__(self) -> int:
        return self.value

    __index__ = __int__

    def __bool__(self) -> bool:
        return bool(self.value)


def _foreign_mantissa_mpf(x):
    """``x`` (an mpf) with its mantissa as gmpy2.mpz when gmpy2 is importable, else as _ForeignInteger."""
    sign, man, exp, bits = x._mpf_
    try:
        import gmpy2

        foreign = gmpy2.mpz(int(man))
    except ImportError:
        foreign = _ForeignInteger(int(man))
    return mpmath.mp.make_mpf((sign, foreign, exp, bits))


def test_mpf_to_arb_accepts_a_mantissa_that_is_not_a_python_int():
    """With gmpy2 installed, mpmath's mantissas are mpz, which flint.fmpz refused (every certified command crashed)."""
    value = _foreign_mantissa_mpf(mpmath.mpf("-0.3125"))
    assert not isinstance(value._mpf_[1], int) or type(value._mpf_[1]).__name__ == "mpz"
    ball = certified.mpf_to_arb(value)
    assert ball.rad().is_zero() and ball == arb("-0.3125")


def test_arb_quadrature_portable_pairs_are_plain_ints():
    from stumpcheck.numerics.certified.enclosures.arb_quadrature import _from_pair, _portable

    pair = _portable(_foreign_mantissa_mpf(mpmath.mpf(13) / 16))
    assert all(type(v) is int for v in pair)
    assert _from_pair(pair) == arb(13) / 16


def test_certified_values_do_not_depend_on_mpmaths_backend():
    """The issue's repro (eval loss --dps 30 --certified at a = 1013.8155105579642, b = 1000), here at a
    cheaper point: the same ball whichever integer type mpmath uses (CI reruns this file with gmpy2)."""
    enclosure = certified_error(mpmath.mpf(25), mpmath.mpf(20), _foreign_mantissa_mpf(mpmath.mpf("0.9375")), dps=30)
    reference = certified_error(25, 20, "0.9375", dps=30)
    assert enclosure.is_finite and enclosure.mid == reference.mid and enclosure.rad == reference.rad
