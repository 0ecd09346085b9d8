"""C4 for all t ≥ T: bounds of b·sup|e| on R_all = {b ≥ b_T, |w| ≤ c} (numerics/certified/region/interior_error.py)."""

from __future__ import annotations

import random
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from stumpcheck.numerics.certified.region.interior_error import (
    INTERIOR_DELTA, interior_error_band, interior_error_margin, interior_error_table)
from stumpcheck.numerics.certified.region.invariant_region import Region
from stumpcheck.numerics.precision import InputError

REGION = Region(30, 1000, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))
T, B_LO, B_HI = 10**6, "36.1108372", "36.1108373"
RHO1 = mpmath.mpf(-3) * mpmath.zeta(3) + mpmath.mpf(3) / 2 + mpmath.pi**2 / 3


def _p_values(b, w, thetas):
    """P(θ) = 1 − b·e(θ) at each θ, e from the derived stable form (not the closed form the bound uses)."""
    from stumpcheck.numerics.generated.population_mpmath import error_one_head

    a = b + 2 * mpmath.log(b) - RHO1 / b + w / b
    return [1 - b * error_one_head(a, b, theta) for theta in thetas]


def test_sampled_states_of_the_region_lie_in_the_bounds():
    """At random (b, w) of R_all and a θ-grid of [δ, 1 − δ] (both ends in it): P ≥ 0 up to rounding,
    max P ≤ M(b), P(δ) ≤ M_δ(b), so the sampled sup of |b·e| lies in [1 − M_δ, max(1, M − 1)]; and M is nearly
    attained (at θ = 1 − δ), so the upper bound is not loose by much."""
    rng = random.Random(20261206)
    mpmath.mp.dps = 40
    rounding = mpmath.mpf(10) ** -35
    delta = mpmath.mpf(INTERIOR_DELTA.numerator) / INTERIOR_DELTA.denominator
    thetas = [delta + (1 - 2 * delta) * mpmath.mpf(k) / 400 for k in range(401)]
    attained = []
    for _ in range(40):
        b = mpmath.mpf(30) * mpmath.mpf(10) ** mpmath.mpf(rng.uniform(0, 2.5))
        w = mpmath.mpf(rng.uniform(-0.5, 0.5))
        m = interior_error_margin(Fraction(str(b)), REGION.c)
        m_left = interior_error_margin(Fraction(str(b)), REGION.c, at_left_end=True)
        p = _p_values(b, w, thetas)
        assert min(p) >= -rounding
        assert max(p) <= mpmath.mpf(m.upper()) + rounding and p[0] <= mpmath.mpf(m_left.upper()) + rounding
        sup = max(abs(1 - x) for x in p)
        assert 1 - mpmath.mpf(m_left.upper()) - rounding <= sup <= max(1, mpmath.mpf((m - 1).upper())) + rounding
        if b < 60:
            attained.append(float(max(p) / mpmath.mpf(m.upper())))
    assert attained and min(attained) > 0.9


def test_the_tubes_certified_sup_at_t_lies_in_the_band_at_t():
    from stumpcheck.numerics.certified.tube.reading_enclosures import exact_ball, interior_error_sup
    from stumpcheck.numerics.certified.tube.readings import state_at, tube_rows

    tube = tube_rows(Path(__file__).parent / "flow_certificate_1e6.json")
    box = state_at(tube, tube.certified_to)
    sup, _ = interior_error_sup(box, rel_tol=1e-3, max_evaluations=400)
    s = sup * exact_ball(box[2]).union(exact_ball(box[3]))
    row = interior_error_band(REGION, tube.certified_to, box[2], box[3], tube.certified_to)
    # the tube's enclosure of the sup and the all-time band must meet (the true value lies in both)
    assert float(row["sup_e_b"][0]) <= float(s.upper()) and float(s.lower()) <= float(row["sup_e_b"][1])
    assert float(row["sup_e_b"][0]) > 0.999999999


def test_the_margin_decreases_in_b_and_vanishes():
    values = [interior_error_margin(b, Fraction(1, 2)) for b in (30, 36, 60, 100, 400, 1000)]
    assert all(x.upper() > y.upper() for x, y in zip(values, values[1:]))
    assert values[-1] < mpmath.mpf("1e-18")
    with pytest.raises(InputError):
        interior_error_margin(0, Fraction(1, 2))
    with pytest.raises(InputError):
        interior_error_margin(36, Fraction(1, 2), delta=Fraction(1, 2))


def test_the_table_tends_to_one_and_the_exponent_to_minus_a_quarter():
    table = interior_error_table(REGION, T, B_LO, B_HI)
    rows = table["rows"]
    assert rows[0]["t"] == T and [r["t"] for r in rows[1:]] == [1e8, 1e10, 1e12, 1e15, 1e20, 1e25, 1e30]
    lows = [float(r["sup_e_b"][0]) for r in rows]
    assert all(x <= y for x, y in zip(lows, lows[1:])) and lows[0] > 0.999999999
    margins = [Decimal(r["M"]) for r in rows]
    assert all(x > y for x, y in zip(margins, margins[1:])) and 0.3 < margins[0] < 0.4
    assert all(r["sup_e_b"][1] == "1" for r in rows)
    widths = [abs(float(r["log_sup_e_over_log_t_plus_quarter"][0])) for r in rows]
    assert all(x > y for x, y in zip(widths, widths[1:])) and widths[-1] < 3e-3
    assert all(float(r["log_sup_e_over_log_t_plus_quarter"][1]) < 0 for r in rows)
