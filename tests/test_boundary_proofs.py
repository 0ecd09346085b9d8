"""The certified population parts of C7 and C8 (numerics/certified/boundary, theory/boundary.py): the SymPy
identities they rest on (and that a wrong form fails them), the proofs, and their enclosures against Arb's
generated e(θ) at points of their domains."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from flint import arb, ctx

from stumpcheck.numerics.certified.boundary import one_head as c7
from stumpcheck.numerics.certified.boundary import symmetrized as c8
from stumpcheck.numerics.certified.enclosures.pointwise import certified_error
from stumpcheck.numerics.precision import InputError
from stumpcheck.theory import boundary as tb


@pytest.fixture(scope="module")
def c7_proof():
    return c7.prove_c7_population()


@pytest.fixture(scope="module")
def c8_proof():
    return c8.prove_c8_population()


def test_identities_hold():
    one_head, symmetrized = tb.boundary_identities("C7"), tb.boundary_identities("C8")
    assert len(one_head) == 3 and len(symmetrized) == 4 and not set(one_head) & set(symmetrized)
    assert all(one_head.values()) and all(symmetrized.values()), (one_head, symmetrized)
    with pytest.raises(ValueError):
        tb.boundary_identities("C9")


def test_a_wrong_form_fails_its_identity(monkeypatch):
    """The checks can fail: a witness form off by ε, a pooled numerator without a far segment."""
    right_witness, right_pooled = tb.witness_form, tb.pooled_form
    monkeypatch.setattr(tb, "witness_form", lambda: right_witness() + tb.eps)

    def pooled_without_far_left():
        numerator, denominator = right_pooled()
        g_u_, _, gu, _, _, lam_, e_v = tb.POOLED_ATOMS
        return numerator - lam_ * e_v * g_u_ * (gu - tb.u), denominator

    monkeypatch.setattr(tb, "pooled_form", pooled_without_far_left)
    checks = tb.boundary_identities()
    assert not checks["one head: (1 + e(1 − ε⁴))/ε = witness form"]
    assert not checks["pooled: b·e = N/D"]
    assert checks["averaged: e(0) = 1/2"] and checks["one head: e(1) = κ₁(b) − 1"]


def test_rho1_is_the_derived_constant():
    with ctx.workprec(128):
        ball = c7.rho1_ball()
        exact = arb(3) / 2 + arb.pi() ** 2 / 3 - 3 * arb(3).zeta()
        assert ball.overlaps(exact) and float(ball.rad()) < 1e-30
    assert sp.simplify(c7._derived_rho1() - (sp.Rational(3, 2) + sp.pi**2 / 3 - 3 * sp.zeta(3))) == 0


def test_c7_proof(c7_proof):
    p = c7_proof
    assert p["proved"] and p["statement"].startswith("for every b >= 10")
    assert 2 <= Fraction(p["K"]) <= Fraction(203, 100) and 2 <= Fraction(p["K_near_infinity"]) < Fraction(2001, 1000)
    assert p["interior_constant"] == "1" and all(p["identities"].values())
    assert 0.999 < float(p["interior_floor"]) < 1 and "0.99927999/b <= sup over θ ∈ [1/20, 19/20]" in p["statement"]
    # the ε-leaves tile [0, 1/10] exactly
    ends = sorted((Fraction(lo), Fraction(hi)) for lo, hi in (leaf["eps"] for leaf in p["leaves"]))
    assert ends[0][0] == 0 and ends[-1][1] == Fraction(1, 10)
    assert all(left[1] == right[0] for left, right in zip(ends, ends[1:]))


@pytest.mark.parametrize("b, w", [(10, 0), (10, "1/2"), (37, "-1/2"), (300, 0), (5000, "1/4")])
def test_c7_witness_bound_holds_against_arb(c7_proof, b, w):
    """e(1 − b⁻⁴) from the generated Arb code, at a on the band, lies below −1 + δ(b); W's box holds (1 + e)/ε."""
    w = Fraction(w)
    with mpmath.workdps(40):
        rho1 = mpmath.mpf(3) / 2 + mpmath.pi**2 / 3 - 3 * mpmath.zeta(3)
        a = b + 2 * mpmath.log(b) - rho1 / b + mpmath.mpf(w.numerator) / w.denominator / b
        theta = 1 - mpmath.mpf(b) ** -4
        a_text, theta_text = mpmath.nstr(a, 35), mpmath.nstr(theta, 35)
    e = certified_error(a_text, b, theta_text, dps=25)
    delta = c7.witness_delta(b, c7_proof["leaves"])
    assert float(e.upper) <= -1 + float(delta)
    eps = Fraction(1, b)
    box = c7.witness_enclosure(eps, eps, c=abs(w))   # holds W at every |w'| <= |w|, so at this w
    true_lo, true_hi = (1 + float(e.lower)) * b, (1 + float(e.upper)) * b
    assert float(box.lower()) <= true_hi * (1 + 1e-12) and true_lo * (1 - 1e-12) <= float(box.upper())


def test_c7_end_value_matches_generated_code():
    for b in (2.0, 10.0, 1000.0):
        e = certified_error(b + 5.0, b, 1, dps=20)
        kappa1 = 1 / b - np.exp(-b) / -np.expm1(-b)
        assert float(e.mid) == pytest.approx(kappa1 - 1, rel=1e-12) and float(e.upper) <= -1 + 1 / b


def test_c8_proof(c8_proof):
    p = c8_proof
    assert p["proved"] and float(p["pooled"]["K"]) <= 1.01 and p["pooled"]["leaves"] >= 2
    assert all(box["b_e"] is not None for box in p["pooled"]["boxes"])
    assert float(p["relation_gap_at_b_min"]) > 4
    assert 0.999 < float(p["pooled"]["floor"]) < 1 and p["statement"].startswith(
        f"for every b >= 10 and every a >= b: {p['pooled']['floor']}/b <= sup")
    assert not c8.prove_c8_population(target="1.0001")["proved"]  # the bisection stops honestly


def test_c8_pooled_enclosure_holds_generated_values(c8_proof):
    """At random (θ, b, a ≥ b) the generated Arb pooled e times b lies in the point box's enclosure and within K."""
    rng = np.random.default_rng(3)
    k = float(c8_proof["pooled"]["K"])
    for _ in range(25):
        b = float(10 ** rng.uniform(1, 4))
        a = b + float(rng.choice([0.0, rng.uniform(0, 3) * np.log(b), rng.uniform(0, 50)]))
        theta = float(rng.choice([rng.uniform(0, 1), rng.uniform(0, 5) / b, 1 - rng.uniform(0, 5) / b, 0.0, 1.0]))
        e = certified_error(a, b, theta, estimator="pooled", dps=20)
        assert abs(float(e.mid)) * b <= k
        half = theta if theta <= 0.5 else 1 - theta
        sign = 1 if theta <= 0.5 else -1
        ball = c8.pooled_enclosure(Fraction(half), Fraction(half), Fraction(1) / Fraction(b), Fraction(1) / Fraction(b))
        assert ball.lower() - 1e-12 <= sign * float(e.mid) * b <= ball.upper() + 1e-12


def test_averaged_ends_are_one_half():
    balls = c8.averaged_end_balls(23.5, 10.0)
    assert float(balls["0"].lower) <= 0.5 <= float(balls["0"].upper)
    assert float(balls["1"].lower) <= -0.5 <= float(balls["1"].upper)


def test_bad_domains_are_refused():
    with pytest.raises(InputError):
        c8.pooled_enclosure(0, Fraction(3, 4), 0, Fraction(1, 10))
    with pytest.raises(InputError):
        c7.witness_enclosure(0, 1)
    with pytest.raises(InputError):
        c7.prove_c7_population(b_min=1)
    with pytest.raises(InputError):
        c8.prove_c8_population(b_min=1)
    with pytest.raises(InputError):
        c7.witness_delta(5, [])
