"""The float64 transition point (bracketing, then safeguarded Newton in the logit) against mpmath."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.population.quadrature import one_head_log_odds, transition_point, transition_point_float64

LOGIT_RANGE_FLOAT64 = 700.0


def _reference(a: float, b: float):
    """(θ*, 1 − θ*, width, s*) at 120 bits: mpmath's transition_point, polished by findroot.

    transition_point stops its bisection at 2^−40·(1 + |s|) in the logit s, which
    is ~1e−11 relative in 1 − θ* once |s| ~ 20; one findroot from there gives the
    root to working precision, so the comparison measures the float64 code.
    """
    theta, rest, _ = transition_point(a, b)
    with mpmath.workprec(120):
        big_a, big_b = mpmath.mpf(a), mpmath.mpf(b)
        start = mpmath.log(theta / rest)

        def z_of_logit(s):
            return one_head_log_odds(big_a, big_b, 1 / (1 + mpmath.exp(-s)), 1 / (1 + mpmath.exp(s)))

        s = mpmath.findroot(z_of_logit, start) if abs(start) < LOGIT_RANGE_FLOAT64 - 10 else start
        theta, rest = 1 / (1 + mpmath.exp(-s)), 1 / (1 + mpmath.exp(s))
        slope = big_b + 1 / rest + 1 / theta - big_b * (gen_mp.trunc_exp_cumulant(1, big_b * rest)
                                                        + gen_mp.trunc_exp_cumulant(1, big_b * theta))
        return theta, rest, 1 / abs(slope), s


def _relative(x, y) -> float:
    return float(abs(mpmath.mpf(x) - y) / abs(y))


# (a, b): b log-uniform in [1e−3, 1e6]; a either anywhere around b (uncalibrated) or
# near the calibrated a ≈ b + k log b, where θ* is within ~b^−3 of 1
_log_b = st.floats(min_value=-3.0, max_value=6.0)


@st.composite
def _points(draw):
    b = 10.0 ** draw(_log_b)
    if draw(st.booleans()):
        a = b * draw(st.floats(min_value=-0.5, max_value=1.5)) + draw(st.floats(min_value=-30.0, max_value=30.0))
    else:
        a = b + draw(st.floats(min_value=0.0, max_value=4.0)) * math.log(max(b, 1.0)) \
            + draw(st.floats(min_value=-3.0, max_value=3.0))
    return a, b


@settings(max_examples=60, deadline=None)
@given(_points())
def test_transition_point_float64_matches_mpmath(point):
    """θ*, 1 − θ* and the width agree with the mpmath root to 1e−12 relative (inside the float64
    logit range), and with mpmath's transition_point itself to 1e−12 plus its bisection bound."""
    a, b = point
    theta, rest, width = transition_point_float64(a, b)
    ref_theta, ref_rest, ref_width, s = _reference(a, b)
    if abs(s) >= LOGIT_RANGE_FLOAT64 - 10:
        # beyond the float64 range the end is returned: θ* (or 1 − θ*) below e^−690
        assert min(theta, rest) < math.exp(-(LOGIT_RANGE_FLOAT64 - 10))
        assert min(ref_theta, ref_rest) < math.exp(-(LOGIT_RANGE_FLOAT64 - 10))
        return
    for got, want in ((theta, ref_theta), (rest, ref_rest), (width, ref_width)):
        assert _relative(got, want) <= 1e-12, (a, b, got, want)
    # against the unpolished mpmath transition_point: its bisection leaves 2^−40·(1 + |s|) in s
    plain = transition_point(a, b)
    bound = 1e-12 + 2.0 ** -40 * (1 + float(abs(s))) * 2
    for got, want in zip((theta, rest, width), plain):
        assert _relative(got, want) <= bound, (a, b, got, want)


@pytest.mark.parametrize("a_b", [(10.0, 10.0), (1e6, 1e6), (1e6 + 2 * math.log(1e6), 1e6),
                                 (1e6 + 3 * math.log(1e6), 1e6), (-50.0, 10.0), (300.0, 10.0), (5.0, 1e-3)])
def test_transition_point_float64_fixed_points(a_b):
    """Large a, b (the switch within ~b^−3 of θ = 1) and switches near θ = 0: 1e−12 relative."""
    a, b = a_b
    ref_theta, ref_rest, ref_width, _ = _reference(a, b)
    theta, rest, width = transition_point_float64(a, b)
    for got, want in ((theta, ref_theta), (rest, ref_rest), (width, ref_width)):
        assert _relative(got, want) <= 1e-12


@pytest.mark.parametrize("a_b, at_one", [((1e6, 3.0), True), ((-1e6, 3.0), False)])
def test_transition_point_float64_beyond_range_returns_end(a_b, at_one):
    """A switch beyond the logit range ±700 is returned at the range's end."""
    theta, rest, width = transition_point_float64(*a_b)
    end = 1.0 / (1.0 + math.exp(LOGIT_RANGE_FLOAT64))
    assert (rest if at_one else theta) == pytest.approx(end, rel=1e-12)
    assert width > 0
