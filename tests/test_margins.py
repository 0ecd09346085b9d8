"""stumpcheck.numerics.certified.proofs.margins: user margins compiled to Arb, enclosed over whole boxes."""

import json
from fractions import Fraction

import mpmath
import pytest
from flint import arb
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.certified.proofs.margins import Margin
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.population.quantities import error
from stumpcheck.numerics.precision import InputError

INTERIOR = Margin.from_sympy("2 - b*Abs(e)", coordinates="calibration")


def _mp_error(a, b, theta):
    with mpmath.workdps(40):
        return error(mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta))


@settings(max_examples=15)
@given(st.floats(20, 2000), st.floats(0.001, 2.0), st.floats(-1, 1), st.floats(0.05, 0.9), st.floats(0.001, 0.05),
       st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_the_enclosure_contains_the_margin_at_points_of_the_box(b0, width, lam0, t0, t_width, s1, s2, s3):
    """Property: for random boxes and points in them, mpmath's 2 − b|e| lies in the box's ball."""
    box = {"b": (Fraction(b0), Fraction(b0) + Fraction(width)), "lam": (Fraction(lam0), Fraction(lam0) + Fraction(1, 8)),
           "theta": (Fraction(t0), Fraction(t0) + Fraction(t_width))}
    ball, form = INTERIOR.enclose(box, 160)
    assert form in ("direct", "mean-value")
    point = {n: lo + (hi - lo) * Fraction(s) for (n, (lo, hi)), s in zip(box.items(), (s1, s2, s3))}
    with mpmath.workdps(40):
        b = mpmath.mpf(point["b"].numerator) / point["b"].denominator
        lam = mpmath.mpf(point["lam"].numerator) / point["lam"].denominator
        theta = mpmath.mpf(point["theta"].numerator) / point["theta"].denominator
        minus_rho1 = 3 * mpmath.zeta(3) - mpmath.mpf(3) / 2 - mpmath.pi**2 / 3  # −ρ₁ of the derived relation
        a = b + 2 * mpmath.log(b) + minus_rho1 / b + lam
        value = 2 - b * abs(error(a, b, theta))
        assert ball.lower() <= arb(mpmath.nstr(value, 30)) + arb("1e-25")
        assert arb(mpmath.nstr(value, 30)) - arb("1e-25") <= ball.upper()


def test_the_calibration_relation_is_the_generated_one():
    """The margin's a = calibration_a(b) + lam is the derived relation (compared with the generated numpy)."""
    margin = Margin.from_sympy("a - calibration_a(b)", coordinates="calibration")
    ball, _ = margin.enclose({"b": (Fraction(50), Fraction(50)), "lam": (Fraction(0), Fraction(0)),
                              "theta": (Fraction(1, 2), Fraction(1, 2))}, 128)
    assert abs(float(ball.mid())) < 1e-30
    shift = Margin.from_sympy("a - b - 2*log(b)", coordinates="calibration")
    ball, _ = shift.enclose({"b": (Fraction(50), Fraction(50)), "lam": (Fraction(0), Fraction(0)),
                             "theta": (Fraction(1, 2), Fraction(1, 2))}, 128)
    assert float(ball.mid()) == pytest.approx(derived.calibration_a(50.0) - 50 - 2 * mpmath.log(50), rel=1e-12)


def test_the_mean_value_form_is_tighter_on_small_boxes():
    """Dependency effects: on a small box the mean-value form wins and its width shrinks like width²."""
    widths = []
    for k in (6, 8, 10):
        h = Fraction(1, 2**k)
        box = {"b": (Fraction(100), Fraction(100) + h), "lam": (Fraction(0), h), "theta": (Fraction(1, 2), Fraction(1, 2) + h)}
        ball, form = INTERIOR.enclose(box, 160)
        assert form == "mean-value"
        widths.append(float(ball.rad()))
    # quartering the width divides the radius by about 16 (second order), certainly by more than 8
    assert widths[0] / widths[1] > 8 and widths[1] / widths[2] > 8


def test_json_round_trip_rebuilds_the_same_margin():
    data = json.loads(json.dumps(INTERIOR.to_json()))
    again = Margin.from_json(data)
    box = {"b": (Fraction(20), Fraction(21)), "lam": (Fraction(-1), Fraction(1)), "theta": (Fraction(1, 4), Fraction(1, 2))}
    assert str(again.enclose(box, 128)[0]) == str(INTERIOR.enclose(box, 128)[0])
    assert data["source"]["sympy_srepr"].startswith("Add(")


def python_margin(b, a, theta):
    from stumpcheck.numerics.generated import population_arb as gen

    return 1 - b * gen.error_one_head(a, b, theta).real


def test_a_python_margin_over_balls_round_trips_through_its_source():
    margin = Margin.from_python(python_margin, coordinates="abtheta")
    data = margin.to_json()
    assert "def python_margin" in data["source"]["python_source"]
    again = Margin.from_json(data)
    box = {"a": (Fraction(26), Fraction(27)), "b": (Fraction(20), Fraction(21)), "theta": (Fraction(1, 2), Fraction(5, 8))}
    first, form = margin.enclose(box, 128)
    assert form == "direct" and str(again.enclose(box, 128)[0]) == str(first)


def test_derivatives_of_e_are_the_generated_ones():
    """e_b in a margin equals the generated ∂e/∂b at a point (two routes through theory/)."""
    from flint import ctx

    from stumpcheck.numerics.generated import population_arb as gen

    margin = Margin.from_sympy("e_b", coordinates="abtheta")
    point = {"a": (Fraction(30), Fraction(30)), "b": (Fraction(25), Fraction(25)), "theta": (Fraction(3, 8), Fraction(3, 8))}
    ball, _ = margin.enclose(point, 200)
    with ctx.workprec(200):
        reference = gen.error_gradient_one_head(30, 25, arb(3) / 8)[1].real
    assert ball.overlaps(reference) and float(ball.rad()) < 1e-40


def test_theta_integral_margin_contains_the_certified_loss():
    from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss

    margin = Margin.from_sympy("L", coordinates="abtheta", theta_integral=True)
    box = {"a": (Fraction(25), Fraction(25) + Fraction(1, 64)), "b": (Fraction(20), Fraction(20) + Fraction(1, 64))}
    ball, _ = margin.enclose(box, 128)
    point = certified_loss(25, 20, dps=20)
    assert ball.lower() <= arb(str(point.lower)) and arb(str(point.upper)) <= ball.upper() + arb("1e-30")
    assert float(ball.rad()) < 1e-2 * float(ball.mid())


@pytest.mark.parametrize("text, coordinates, variables", [
    ("2 - b*sin(e)", "abtheta", ("a", "b", "theta")),   # no rigorous sin in the printer
    ("2 - q*e", "abtheta", ("a", "b", "theta")),        # unknown symbol
    ("2 - e", "abtheta", ("a", "b")),                   # pointwise margin without theta
])
def test_bad_margins_are_input_errors(text, coordinates, variables):
    margin = Margin.from_sympy(text, coordinates=coordinates)
    with pytest.raises(InputError):
        margin.compile(variables)


def test_unparsable_text_is_an_input_error():
    with pytest.raises(InputError):
        Margin.from_sympy("2 - (", coordinates="abtheta")


def test_the_taylor_form_splits_off_the_smooth_kernel():
    """3 − b²|L/L₀ − 1|: the kernel is b²(L/L₀ − 1) (the positive b² moved inside |·|), its derivatives bring
    in L' and L'' (θ-integrals of ∂_b q)."""
    import sympy as sp

    from stumpcheck.theory.margin_quantities import RealAbs, symbol_namespace
    from stumpcheck.theory.margin_taylor import derivative_symbol, taylor_form

    names = symbol_namespace()
    form = taylor_form(sp.sympify("3 - b**2*Abs(L/leading_loss(b) - 1)", locals=names), "calibration",
                       ("b", "lam"), "b", 2, "one-head")
    (kernel,) = form.kernel_symbols
    assert form.outer.has(RealAbs(kernel)) and not form.outer.has(names["L"])
    assert derivative_symbol(names["L"], 2) in form.kernel_derivatives[2][0].free_symbols
    assert set(form.integrands[1]) == {derivative_symbol(names["L"], 1)}
    assert form.outer == 3 - RealAbs(kernel)


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1.0, max_value=1e4), st.floats(min_value=-3.0, max_value=3.0),
       st.floats(min_value=-3.0, max_value=3.0))
def test_absorbing_positive_factors_keeps_the_value(b_value, x_value, y_value):
    """p·|x| = |p·x| and p·min(x, y) = min(p·x, p·y) for p > 0: the rewritten margin has the same value."""
    import sympy as sp

    from stumpcheck.theory.margin_quantities import RealAbs, RealMin
    from stumpcheck.theory.margin_taylor import absorb_positive_factors

    b = sp.Symbol("b", positive=True)
    x, y = sp.symbols("x y", real=True)
    expr = 5 - b**2 * RealAbs(x - 1) + b * RealMin(-RealAbs(x * b), -RealAbs(y + 1)) - 2 * b * RealAbs(y)
    rewritten = absorb_positive_factors(expr)
    assert not any(isinstance(f, sp.Mul) and f.has(RealAbs) and any(g == b for g in f.args)
                   for f in sp.preorder_traversal(rewritten))

    def value(e):
        e = e.replace(lambda n: isinstance(n, RealAbs), lambda n: sp.Abs(n.args[0]))
        e = e.replace(lambda n: isinstance(n, RealMin), lambda n: sp.Min(*n.args))
        return float(e.subs({b: b_value, x: x_value, y: y_value}))

    assert value(rewritten) == pytest.approx(value(expr), rel=1e-12, abs=1e-9)


@pytest.mark.slow
def test_the_taylor_enclosure_contains_the_loss_at_points_of_the_box():
    """Order-3 Taylor form of L along the calibration relation: contains acb.integral's L at the ends."""
    from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss

    margin = Margin.from_sympy("L", coordinates="calibration", theta_integral=True, taylor_order=3)
    box = {"b": (Fraction(40), Fraction(41)), "lam": (Fraction(0), Fraction(0))}
    ball, form = margin.enclose(box, 128)
    assert form == "taylor-3"
    ends = []
    for b in (40, 41):
        with mpmath.workdps(40):
            a_exact = b + 2 * mpmath.log(b) + (3 * mpmath.zeta(3) - mpmath.mpf(3) / 2 - mpmath.pi**2 / 3) / b
        point = certified_loss(mpmath.nstr(a_exact, 35), b, dps=25)
        assert ball.lower() <= arb(str(point.upper)) + arb("1e-20") and arb(str(point.lower)) - arb("1e-20") <= ball.upper()
        ends.append(float(point.mid))
    # L is monotone on the box: the ball is its range [L(41), L(40)] up to a few per cent, not wider
    assert float(ball.rad()) < 0.55 * abs(ends[0] - ends[1])
